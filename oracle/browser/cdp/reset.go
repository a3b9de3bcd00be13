package cdp

// The CDP route's reset and the checks around it (cdp/cdp.go's engine): Reset gives the
// next case the first case's state (docs/untrusted.md, "Per-case state"), Keep keeps
// an inert case's document, Prepare checks the idle page.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// Reset gives the next case a new about:blank document and global, with the first
// case's guarantees (docs/untrusted.md, "Per-case state"): no window but the page,
// window.name cleared, history.length 1, the focus. A case that added history
// entries, closed its window or took the focus for good costs a new page; a page that
// cannot reset in time, a relaunch.
func (e *cdpEngine) Reset(ctx context.Context) error { return e.ResetPage(ctx, e.reset) }

func (e *cdpEngine) reset(ctx context.Context) error {
	conn, page, err := e.current(ctx)
	if err != nil {
		return err
	}
	if url, _, _, _, _ := page.state(); url != "about:blank" {
		// A trace or url case. An about:blank the page navigates to itself inherits
		// the page's origin, and the next case must run in an opaque one, as the
		// first case did. First back by the page's own location.replace, which adds
		// no history entry (the driver's navigation from elsewhere would) and ends the
		// case's timers; then the driver's navigation below makes it opaque.
		replaced := e.replaceTo(ctx, conn, page, "about:blank", true) == nil
		others, err := e.otherPages(ctx, conn, page)
		if err != nil {
			return err
		}
		if !replaced || len(others) > 0 {
			// Still the case's document, or one a window of the case's reaches (a
			// timer it left there outlived a slow navigation, and set window.name
			// after the check): a new page, with no check evaluated in it.
			return e.newPage(ctx, conn)
		}
	}
	if err := e.navigateBlank(ctx, conn, page); err != nil {
		return err
	}
	if err := e.closeOthers(ctx, conn, page); err != nil {
		return err
	}
	ok, err := e.freshAndFocused(ctx, conn, page)
	if err != nil {
		return err
	}
	if ok {
		e.MarkBlank()
		return nil
	}
	// The case added session-history entries (pushState, hash changes, its own
	// navigations, an iframe's) or took the focus for good: only a new page has the
	// first case's history, an opaque about:blank and the focus.
	return e.newPage(ctx, conn)
}

// freshAndFocused runs the reset's check on page (it clears window.name) and says
// whether history.length is the first case's and the page has the focus, giving the
// focus back first when a case took it.
func (e *cdpEngine) freshAndFocused(ctx context.Context, conn *cdpConn, page *cdpPage) (bool, error) {
	raw, err := e.evaluateJSON(ctx, conn, page, browser.ResetCheckJS, nil)
	return e.FreshAndFocused(raw, err, "a new page replaces this one", func() bool { return e.refocus(ctx, conn, page) })
}

// refocus brings page to the front (a popup took the focus) and says whether it has
// the focus now.
func (e *cdpEngine) refocus(ctx context.Context, conn *cdpConn, page *cdpPage) bool {
	if _, err := cdp.Call(ctx, cdpSession{conn, page.session}, cdppage.BringToFront, cdp.Empty{}); err != nil {
		return false
	}
	v, err := e.evaluate(ctx, conn, page, "document.hasFocus()", nil)
	return err == nil && v == true
}

// otherPages lists the page targets of the engine's context but page: the popups and
// windows a case opened.
func (e *cdpEngine) otherPages(ctx context.Context, conn *cdpConn, page *cdpPage) ([]string, error) {
	pages, err := pageTargets(ctx, conn)
	if err != nil {
		return nil, err
	}
	var bctx string
	e.Current(func() { bctx = e.bctx })
	var others []string
	for _, t := range pages {
		if string(t.BrowserContextID) == bctx && string(t.TargetID) != page.target {
			others = append(others, string(t.TargetID))
		}
	}
	return others, nil
}

// pageTargets are the browser's page targets, in every browser context.
func pageTargets(ctx context.Context, conn *cdpConn) ([]*target.Info, error) {
	t, err := cdp.Call(ctx, cdpSession{conn: conn}, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	var pages []*target.Info
	for _, ti := range t.TargetInfos {
		if ti != nil && ti.Type == "page" {
			pages = append(pages, ti)
		}
	}
	return pages, nil
}

// closeOthers closes every page of the context but page, without their beforeunload:
// a popup that opens another while it is closed is caught by the next round.
// Target.closeTarget answers before the target is gone, so a page already asked to
// close is waited for (closeWait, up to closeWithin), not counted as a popup that
// opened again: only new pages make a round (before, a slow close was taken for
// popups that kept opening, and cost a relaunch: TestCDPRoute/ResetIsolatesCases failed
// 2 runs of 15 on ba16717).
func (e *cdpEngine) closeOthers(ctx context.Context, conn *cdpConn, page *cdpPage) error {
	closing := map[string]bool{}
	waitUntil := time.Now().Add(closeWithin)
	for round := 0; round < 5; {
		others, err := e.otherPages(ctx, conn, page)
		if err != nil || len(others) == 0 {
			return err
		}
		var opened []string
		for _, id := range others {
			if !closing[id] {
				opened = append(opened, id)
			}
		}
		if len(opened) == 0 {
			if time.Now().After(waitUntil) {
				return errors.New("a window the case opened did not close")
			}
			select {
			case <-time.After(closeWait):
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		round++
		for _, id := range opened {
			closing[id] = true
			if _, err := cdp.Call(ctx, cdpSession{conn: conn}, target.CloseTarget, target.CloseTargetParams{TargetID: target.ID(id)}); err != nil {
				// One that closed meanwhile has no target left: CDP says so with
				// -32602 ("No target with given id found"), the code of every invalid
				// parameter, so any error reply is taken for it, as before.
				if _, fault := asCDPError(err); !fault {
					return fmt.Errorf("close a window the case opened: %w", err)
				}
			}
		}
	}
	return errors.New("the case's popups kept opening more")
}

// closeWait is how long closeOthers waits before it lists the pages again while only
// pages it asked to close are still there, and closeWithin how long in all it waits
// for them.
const (
	closeWait   = 10 * time.Millisecond
	closeWithin = time.Second
)

// newPage replaces the page by a new one (an empty session history, an opaque
// about:blank) with the focus, and closes the old one and every window the case
// opened. The next Load navigates the new page's initial about:blank to a reset's.
func (e *cdpEngine) newPage(ctx context.Context, conn *cdpConn) error {
	var bctx string
	e.Current(func() { bctx = e.bctx })
	page, err := e.openPage(ctx, conn, bctx)
	if err != nil {
		return err
	}
	if err := e.closeOthers(ctx, conn, page); err != nil {
		return err
	}
	if ok, err := e.freshAndFocused(ctx, conn, page); err != nil || !ok {
		return errors.Join(err, errors.New("the new page is not fresh or has no focus"))
	}
	return nil
}

// Keep keeps the page as the inert case that just ran on it left it (Keeper): open,
// not crashed, on about:blank (its events say so), the only page of its context
// (one round trip to the browser process).
func (e *cdpEngine) Keep() bool {
	var page *cdpPage
	conn, ok := e.Keepable(func() { page = e.page })
	if !ok || page == nil {
		return false
	}
	if url, _, _, gone, _ := page.state(); gone || url != "about:blank" {
		return false
	}
	return e.KeepIf(func(ctx context.Context) bool {
		others, err := e.otherPages(ctx, conn, page)
		return err == nil && len(others) == 0
	}, func() bool { return e.page == page })
}

// Prepare checks the idle page before a case (pool.go): it must answer a trivial
// evaluation within probeTimeout and have the focus; otherwise the browser relaunches.
func (e *cdpEngine) Prepare(ctx context.Context) error {
	if err := e.Ensure(ctx); err != nil {
		return err
	}
	var page *cdpPage
	conn := e.Current(func() { page = e.page })
	if page == nil {
		return nil // the case opens a new one
	}
	if _, _, _, gone, _ := page.state(); gone && !page.isCrashed() {
		return nil
	}
	pctx, cancel := context.WithTimeout(browser.WithOp(ctx, "check of the idle page"), browser.ProbeTimeout)
	defer cancel()
	v, err := e.evaluate(pctx, conn, page, "document.hasFocus()", nil)
	if err == nil && (v == true || e.refocus(pctx, conn, page)) {
		return nil
	}
	return e.IdlePageFailed(ctx, err)
}

// pageCrashedLocked is the page's relaunch reason: its renderer died. The Browser's lock is held.
func (e *cdpEngine) pageCrashedLocked() string {
	if e.page != nil && e.page.isCrashed() {
		return "page crashed"
	}
	return ""
}

// OpenWindows is what the browser has open (browser.OpenWindows), as the Playwright
// route counts it:
// every page target, and every browser context but the default one (Playwright's
// Browser.Contexts lists only the contexts it made).
func (e *cdpEngine) OpenWindows(ctx context.Context) (pages, contexts int, err error) {
	conn := e.Current(nil)
	if conn == nil {
		return 0, 0, fmt.Errorf("chromium: no CDP connection")
	}
	all, err := pageTargets(ctx, conn)
	if err != nil {
		return 0, 0, err
	}
	c, err := cdp.Call(ctx, cdpSession{conn: conn}, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		return 0, 0, err
	}
	return len(all), len(c.BrowserContextIDs), nil
}
