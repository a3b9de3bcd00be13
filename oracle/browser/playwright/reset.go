// Reset and recovery of a Playwright engine: the about:blank between cases, the
// fresh page, the focus, and relaunching a browser (or driver) that died.

package playwright

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/mxschmitt/playwright-go"
)

// Reset navigates to a fresh about:blank: a new document and a new global object.
// A page that cannot even do that in time (its renderer is still busy with a case
// that outlived its deadline, and new pages queue behind it) costs a relaunch of the
// browser, which bounds how long one hostile case can keep an engine away.
func (e *playwrightEngine) Reset(ctx context.Context) error {
	// A crashed page, a dead driver or a lost browser is replaced here, right after
	// the case that met it, outside the reset's deadline (a relaunch takes seconds):
	// the relaunched page is a fresh about:blank already.
	if relaunched, err := e.ensureBrowser(); err != nil || relaunched {
		return err
	}
	e.mu.Lock()
	e.kept, e.navBlank = nil, nil
	e.mu.Unlock()
	e.clearCredentials()
	ctx = browser.WithOp(ctx, "reset to about:blank")
	var made, navigated playwright.Page
	raw, err := e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		if page.URL() != "about:blank" {
			// A trace or url case. An about:blank the page navigates to itself
			// inherits the page's origin (a trace case's http://c….localhost, its
			// cookies and storage), and the next case must run in an opaque one, as
			// the first case did. First back by the page's own location.replace,
			// which adds no history entry (Goto from elsewhere would) and ends the
			// case's timers; a failed replace falls back to the Goto below, whose
			// entry the check after it catches (Chromium), or to a new page (Firefox).
			k := knowledgeOf(e.name)
			replaced := e.replaceTo(page, "about:blank", timeout) == nil && page.URL() == "about:blank"
			// A window the case opened reaches this about:blank (the same origin:
			// opener.eval), and what it schedules there outlives the check: a
			// window.name and a history entry set after it reached the next case
			// (Firefox). Only a page no other window had may stay on it.
			alone := len(page.Context().Pages()) == 1
			if replaced && k.newPageAfterNavigation && alone {
				// The page stays on this about:blank, with the case's origin: a url or
				// trace case navigates on from it (its document gets an origin of its
				// own, and no referrer: replaceScript), and an html case gets a new
				// page first (Load). Gecko adds a history entry for the driver's
				// navigation, and its load was not always reported (resets timed out
				// on WPT url cases), while a new page after every navigation cost a
				// window, 0.6-1 s (cmd/bench/HISTORY.md).
				navigated = page
				return nil
			}
			if k.newPageAfterNavigation || !alone {
				// Still the case's document, or one a window of the case's reaches (in
				// Chromium a timer it left there outlived a slow driver's navigation,
				// and set window.name after the check): a new page, with no check
				// evaluated in it.
				if err := e.closeOtherPages(page); err != nil {
					return err
				}
				return errNotReplaced
			}
		}
		// The driver's own navigation comes last: an opaque origin, and about:blank
		// to about:blank adds no history entry (Chromium, Firefox, measured).
		if _, err := page.Goto("about:blank", playwright.PageGotoOptions{Timeout: &timeout}); err != nil {
			return err
		}
		made = page
		return e.closeOtherPages(page)
	}, browser.ResetCheckJS, nil)
	if errors.Is(err, errNotReplaced) {
		if err = e.replacePage(ctx); err == nil {
			return nil
		}
	} else if err == nil {
		var st [2]any // history.length, document.hasFocus()
		_ = json.Unmarshal(raw, &st)
		// A window the case opened that the driver reported only now (Firefox: one
		// opened in pagehide) may have reached the navBlank too.
		late := navigated != nil && len(navigated.Context().Pages()) != 1
		if late {
			_ = e.closeOtherPages(navigated)
		}
		if st[0] == browser.FirstHistoryLength && !late {
			page := made
			if navigated != nil {
				page = navigated
			}
			if st[1] == true || e.refocus(ctx, page, false) {
				e.mu.Lock()
				e.blank, e.navBlank = made, navigated
				e.mu.Unlock()
				return nil
			}
		}
		// The case added session-history entries (pushState, hash changes, its own
		// navigations, an iframe's), a window of its own reached the navBlank, or it
		// took the focus for good: only a new page has
		// the first case's history, an opaque about:blank and the focus.
		e.log.Debug().Str("engine", e.name).Str("history", string(raw)).Msg("a new page replaces this one")
		err = e.replacePage(ctx)
		if err == nil {
			return nil
		}
	}
	reason := "page did not reset in time"
	if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		// A page that cannot even reach about:blank is broken (its content process
		// died, its context closed): the next case would fail the same way.
		reason = "page could not reset: " + browser.FirstLine(err)
	}
	e.log.Warn().Str("engine", e.name).Err(err).Msg(reason + "; relaunching the browser")
	_, err = e.relaunchBrowser(reason, true)
	return err
}

// Prepare checks the page before a case (pool.go): a crashed page, a dead driver
// or a lost browser is replaced, and a page that does not answer a trivial
// evaluation within probeTimeout (Firefox's, after its content process was killed
// while idle, hangs every call) costs a relaunch, here rather than in the case.
func (e *playwrightEngine) Prepare(ctx context.Context) error {
	if relaunched, err := e.ensureBrowser(); err != nil || relaunched {
		return err
	}
	page := e.currentPage()
	if page == nil || !e.pages.pageOpen(page) {
		return nil // the case opens a new one
	}
	// The check reads the focus: a page that lost it would answer every focus-
	// dependent case wrong, silently.
	done := make(chan error, 1)
	var focused any
	go func() {
		var err error
		focused, err = e.evaluate(page, "document.hasFocus()", nil)
		done <- err
	}()
	var reason string
	select {
	case err := <-done:
		if err == nil && (focused == true || e.refocus(ctx, page, false)) {
			return nil
		}
		reason = "idle page lost the focus, and it could not be given back"
		if err != nil {
			reason = "idle page failed a check: " + browser.FirstLine(err)
		}
	case <-time.After(browser.ProbeTimeout):
		reason = "idle page did not answer a check within " + browser.ProbeTimeout.String() + " (its content process died?)"
	case <-ctx.Done():
		return ctx.Err()
	}
	e.log.Warn().Str("engine", e.name).Msg(reason + "; relaunching the browser")
	_, err := e.relaunchBrowser(reason, true)
	return err
}

// closeOtherPages closes every page of keep's context but keep: the popups and
// target=_blank windows a case opened (busy popups kept Firefox burning
// half a core while idle), and pages abandoned earlier. keep has left the case's
// document already, so it opens no more; a popup that opens another while it is
// being closed is caught by the next round.
func (e *playwrightEngine) closeOtherPages(keep playwright.Page) error {
	for round := 0; round < 5; round++ {
		var others []playwright.Page
		for _, p := range keep.Context().Pages() {
			if p != keep {
				others = append(others, p)
			}
		}
		if len(others) == 0 {
			return nil
		}
		for _, p := range others {
			if err := p.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)}); err != nil && e.pages.pageOpen(p) {
				return fmt.Errorf("close a page the case opened: %w", err)
			}
		}
	}
	return errors.New("the case's popups kept opening more")
}

// refocus gives page back the focus a case took (a download took it from Firefox's
// page for good: every later case ran with document.hasFocus() false, and
// an input:focus rule stopped matching), and says whether the page has it now. With
// check, a page that has the focus is left alone.
func (e *playwrightEngine) refocus(ctx context.Context, page playwright.Page, check bool) bool {
	if page == nil {
		return false
	}
	done := make(chan bool, 1)
	go func() {
		if check {
			if v, err := e.evaluate(page, "document.hasFocus()", nil); err == nil && v == true {
				done <- true
				return
			}
		}
		if err := page.BringToFront(); err != nil {
			done <- false
			return
		}
		v, err := e.evaluate(page, "document.hasFocus()", nil)
		done <- err == nil && v == true
	}()
	select {
	case ok := <-done:
		return ok
	case <-time.After(browser.ProbeTimeout):
	case <-ctx.Done():
	}
	return false
}

// errNotReplaced is Reset's own: the page did not replace its url or trace case's
// document with about:blank (Firefox), or a window the case opened reaches it, so a
// new page replaces it.
var errNotReplaced = errors.New("the page did not replace its document with about:blank")

// replacePage replaces the engine's page by a new one (freshPage) that has the
// focus. Both steps are on their own bounds, not ctx's: opening a page can take a
// reset's whole deadline on a loaded machine, and a focus check that then found the
// deadline spent had cost a browser relaunch.
func (e *playwrightEngine) replacePage(ctx context.Context) error {
	if err := e.freshPage(); err != nil {
		return err
	}
	if e.afterFreshPage != nil {
		e.afterFreshPage()
	}
	return e.checkFocus(context.WithoutCancel(ctx))
}

// checkFocus says whether the engine's page has the focus, or could be given it back.
func (e *playwrightEngine) checkFocus(ctx context.Context) error {
	if e.refocus(ctx, e.currentPage(), true) {
		return nil
	}
	return errors.New("the new page has no focus")
}

// freshPage replaces the engine's page by a new one in the same context (a new
// tab: an empty session history), on its own bound: opening a page took 0.3-3 s on a
// loaded machine, longer than a reset's. Only cases that left history entries pay it.
func (e *playwrightEngine) freshPage() error {
	e.mu.Lock()
	old, bctx, pwb := e.page, e.context, e.browser
	e.mu.Unlock()
	done := make(chan error, 1)
	var page playwright.Page
	closeOld := func() {
		if old != nil {
			old.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)})
		}
	}
	go func() {
		if e.remote {
			// Through Playwright's browser server, closing the old page once the new
			// one was open left the new one closed too ("target closed" on the next
			// case, Firefox; TestOriginListenServesRemoteBrowsers): close it first. Not
			// locally, where Firefox would then start a new content process each time.
			closeOld()
		}
		p, err := e.newPage(bctx)
		if err == nil {
			page = p
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return e.errorf("new page: %w", err)
		}
	case <-time.After(15 * time.Second):
		return e.errorf("no new page within 15s")
	}
	e.setPage(pwb, page, false)
	if !e.remote {
		go closeOld()
	}
	return nil
}

// ensureBrowser relaunches a browser that crashed or whose connection died, with
// backoff; the engine keeps its version check, so a relaunch cannot silently change
// the build that answers.
//
// A crashed page costs a relaunch too: Chromium was seen to hang opening a new page
// after its renderers were killed, and Firefox to drop the whole browser connection
// when its content process died. A relaunch took 1.5-3.5 s for Chromium and 9-18 s
// for Firefox on a loaded 2-core machine.
func (e *playwrightEngine) ensureBrowser() (relaunched bool, err error) {
	e.mu.Lock()
	crashed := e.page != nil && e.pages.pageIsCrashed(e.page)
	lost := e.context != nil && e.pages.contextClosed(e.context)
	e.mu.Unlock()
	if crashed {
		return e.relaunchBrowser("page crashed", true)
	}
	if lost {
		return e.relaunchBrowser("browser context closed", true)
	}
	return e.relaunchBrowser("browser disconnected", false)
}

// relaunchBrowser relaunches when the browser or its driver is gone, or always when
// force is set; it says whether it relaunched.
func (e *playwrightEngine) relaunchBrowser(reason string, force bool) (bool, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return false, e.errorf("engine closed")
	}
	// A dead driver takes its browser's connection with it: both are replaced, when
	// the engine owns the driver (a shared one is its owner's to replace).
	deadDriver := e.driver != nil && !e.driver.alive()
	if (!force && !deadDriver && e.browser.IsConnected()) || e.relaunch == nil {
		e.mu.Unlock()
		return false, nil
	}
	if deadDriver {
		reason = "playwright driver exited"
	}
	e.health.State = browser.StateRestarting
	e.health.Restarts++
	e.health.Reason = reason
	old, oldPIDs, oldDriver := e.browser, e.pids, e.driver
	e.page = nil
	e.mu.Unlock()
	// The browser being replaced is broken (crashed, disconnected, stuck, or its
	// driver died): it is killed at once rather than asked to close, which a broken
	// Firefox was seen to take the whole 5 s of closeBrowser over.
	killPIDs(oldPIDs)
	go old.Close()
	if deadDriver {
		if err := oldDriver.Stop(); err != nil {
			e.log.Debug().Str("engine", e.name).Err(err).Msg("stop the dead playwright driver")
		}
		e.log.Warn().Str("engine", e.name).Msg("playwright driver exited; relaunching it and its browser")
	}

	var err error
	start := time.Now()
	for i, wait := range browser.RelaunchBackoff {
		time.Sleep(wait)
		e.mu.Lock()
		closed := e.closed
		e.mu.Unlock()
		if closed { // no browser is launched for a closed engine
			return false, e.errorf("engine closed")
		}
		on, newDriver := e.pw, (*Driver)(nil)
		if deadDriver {
			if newDriver, err = Start(e.log); err != nil {
				e.log.Warn().Str("engine", e.name).Int("attempt", i+1).Err(err).Msg("relaunch failed")
				continue
			}
			on = newDriver
		}
		stopNew := func() {
			if newDriver != nil {
				newDriver.Stop()
			}
		}
		var fresh *playwrightEngine
		if fresh, err = e.relaunch(on); err == nil && fresh.version != e.version {
			fresh.Close()
			err = fmt.Errorf("relaunched build is %s, not %s", fresh.version, e.version)
		}
		if err != nil {
			stopNew()
		} else {
			e.mu.Lock()
			if e.closed {
				// Close ran while this browser started: it closed the old one and
				// will never see this one, so it is closed here.
				e.mu.Unlock()
				fresh.Close()
				stopNew()
				return false, e.errorf("engine closed")
			}
			e.pages.forgetContext(e.context) // the old browser's, closed with it
			e.browser, e.context, e.page, e.pids, e.pw = fresh.browser, fresh.context, fresh.page, fresh.pids, on
			if newDriver != nil {
				e.driver = newDriver // Close stops it from now on
			}
			e.health.State = browser.StateReady
			e.mu.Unlock()
			e.log.Info().Str("engine", e.name).Int("attempt", i+1).Str("reason", reason).
				Dur("took", time.Since(start)).Msg("browser relaunched")
			return true, nil
		}
		e.log.Warn().Str("engine", e.name).Int("attempt", i+1).Err(err).Msg("relaunch failed")
	}
	e.mu.Lock()
	e.health.State, e.health.Reason = browser.StateFailed, err.Error()
	e.mu.Unlock()
	return false, e.errorf("relaunch failed: %w", err)
}

func (e *playwrightEngine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	b, pids, driver := e.browser, e.pids, e.driver
	e.pages.forgetContext(e.context)
	e.mu.Unlock()
	if b != nil {
		e.closeBrowser(b, pids)
	}
	if driver != nil {
		return driver.Stop()
	}
	return nil
}

// closeBrowser asks the browser to close, waits at most 5 s, and then kills its
// process groups whatever happened: a wedged Firefox (a content process in a busy
// loop) was seen to ignore Close and to outlive both its driver and the oracle.
func (e *playwrightEngine) closeBrowser(b playwright.Browser, pids []int) {
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		e.log.Warn().Str("engine", e.name).Ints("pids", pids).Msg("browser did not close in 5s; killing it")
	}
	killPIDs(pids)
}
