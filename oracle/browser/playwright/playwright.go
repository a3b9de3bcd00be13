// The Playwright engine: one browser, one context and one page, and the calls a
// case makes on it (Load, Visit, LoadURL) under a deadline. The driver process is
// in playwright/process.go, the launch in playwright/launch.go, page tracking in
// playwright/pages.go, and reset and recovery in playwright/reset.go.

package playwright

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"
)

type playwrightEngine struct {
	name, version, route string
	remote               bool // connected to a Playwright browser server (playwright/remote.go)
	initScripts          bool // the context installs init scripts (the trace recorder)
	// relaunch launches the same browser again on a driver (the same one, or a new
	// one when the old driver died).
	relaunch func(*Driver) (*playwrightEngine, error)
	driver   *Driver // stopped by Close when the engine owns it
	log      zerolog.Logger
	// pages is what the events said about the pages and contexts; shared with the
	// engine values a relaunch makes, whose pages this one adopts. Never replaced.
	pages *pageTracker

	// mu guards the fields below: calls (one at a time) read and replace browser,
	// context and page, while Health, Close and a relaunch run beside them.
	mu      sync.Mutex
	browser playwright.Browser
	context playwright.BrowserContext
	page    playwright.Page
	// blank is the page whose document is the about:blank the reset's own
	// navigation made, not used by a case yet (nil: none). Every html case runs in
	// such a document (Load): a new page's initial about:blank differs from it in
	// what a page can observe (Firefox's navigation.activation is null there,
	// "push" here), and a case's answer must not depend on the case before it.
	blank playwright.Page
	// kept is the page whose document an inert case was kept in (Keep), for the next
	// Load to write into with no navigation (nil: none).
	kept playwright.Page
	// navBlank (newPageAfterNavigation) is the page a url or trace case's reset left on an
	// about:blank it reached by its own location.replace: it has that case's origin,
	// so only a navigation to another origin may follow on it (LoadURL, Visit); an
	// html case first gets a new page (Load). Nil: none.
	navBlank playwright.Page
	health   browser.Health
	closed   bool
	pids     []int   // the browser's main processes (each leads its process group)
	pw       *Driver // the driver the browser runs on
	opts     Options // what a new context needs
	// afterFreshPage, tests only, runs when the reset's new page is open.
	afterFreshPage func()
}

// RunsInitScripts says the recorder arrives by init script, not inline.
func (e *playwrightEngine) RunsInitScripts() bool { return e.initScripts }

func (e *playwrightEngine) Name() string    { return e.name }
func (e *playwrightEngine) Version() string { return e.version }
func (e *playwrightEngine) Route() string   { return e.route }

// Health says what the next call meets: a crashed page, a dead driver or a
// disconnected browser is "restarting" (the next call replaces it) even before any
// call found out.
func (e *playwrightEngine) Health() browser.Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.health.Reported()
	if h.State != browser.StateReady || e.closed {
		return h
	}
	switch {
	case e.pw != nil && !e.pw.alive():
		h.State, h.Reason = browser.StateRestarting, "playwright driver exited; driver and browser relaunch on the next call"
	case e.browser != nil && !e.browser.IsConnected():
		h.State, h.Reason = browser.StateRestarting, "browser disconnected; it relaunches on the next call"
	case e.page != nil && e.pages.pageIsCrashed(e.page):
		h.State, h.Reason = browser.StateRestarting, "page crashed; the browser relaunches on the next call"
	case e.context != nil && e.pages.contextClosed(e.context):
		h.State, h.Reason = browser.StateRestarting, "browser context closed (a content process died?); the browser relaunches on the next call"
	}
	return h
}

// Sandbox is the browser's sandbox as /proc shows it now.
func (e *playwrightEngine) Sandbox() browser.SandboxState {
	return browser.InspectSandbox(e.name, e.ProcessRoots())
}

// OpenWindows is how many pages the browser has open, in all its contexts, and how
// many contexts (browser.OpenWindows): what the oracle owns is one page in one
// context.
func (e *playwrightEngine) OpenWindows(context.Context) (pages, contexts int, err error) {
	e.mu.Lock()
	b := e.browser
	e.mu.Unlock()
	for _, c := range b.Contexts() {
		contexts++
		pages += len(c.Pages())
	}
	return pages, contexts, nil
}

// ProcessRoots are the browser's main processes, the roots of its process tree
// (browser.ContentProcesses).
func (e *playwrightEngine) ProcessRoots() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int{}, e.pids...)
}

// BundledAbsent: see browser.BundledAbsent.
func (e *playwrightEngine) BundledAbsent() string { return e.opts.BundledAbsent }

// Load is one Evaluate of the case program, which writes the document itself
// (Playwright's setContent is document.open/write/close too) and settles it. A page
// left elsewhere (a Visit without a Reset after it) goes back to about:blank first,
// as on the WebDriver route; the URL is the client's cached one, no round trip.
func (e *playwrightEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	plain, err := browser.PlainJSON(args)
	if err != nil {
		return nil, err
	}
	if e.takeNavBlank() {
		// The page has the last url or trace case's origin: an html case runs in an
		// opaque about:blank, and Gecko's own navigation from here would add a
		// history entry (docs/untrusted.md, "Per-case state").
		if err := e.replacePage(ctx); err != nil {
			e.log.Warn().Str("engine", e.name).Err(err).Msg("no new page for an html case after a navigation; relaunching the browser")
			if _, err := e.relaunchBrowser("no new page after a navigation: "+browser.FirstLine(err), true); err != nil {
				return nil, err
			}
		}
	}
	kept := false
	return e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		e.mu.Lock()
		ready := e.blank == page
		kept = e.kept == page && page != nil
		e.blank, e.kept = nil, nil
		e.mu.Unlock()
		if ready || kept {
			return nil // the reset's about:blank (the common case), or a kept inert case's
		}
		// A new page (the first, a relaunched browser's, Firefox's after a trace,
		// one opened after the case before closed its window), or a reset that did
		// not finish: the same kind of document the reset makes.
		_, err := page.Goto("about:blank", playwright.PageGotoOptions{Timeout: &timeout})
		return err
	}, browser.CaseProgram(), func() any {
		if kept {
			return browser.KeptCaseArg(html, fn, plain, browser.SettleBudget(ctx))
		}
		return browser.CaseArg(html, fn, plain, browser.SettleBudget(ctx))
	})
}

// takeNavBlank says whether the engine's page is the navBlank a reset left, and
// forgets it: the call that takes it navigates away or replaces the page.
func (e *playwrightEngine) takeNavBlank() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	was := e.navBlank != nil && e.navBlank == e.page
	e.navBlank = nil
	return was
}

// Keep keeps the page as the inert case that just ran on it left it (Keeper): still
// open, not crashed, on about:blank (the client's cached URL, no round trip), the
// only page of its context. The reset's other checks (history, window.name, other
// windows) guard against what only script can do.
func (e *playwrightEngine) Keep() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	page := e.page
	if page == nil || e.closed || !e.pages.pageOpen(page) || e.pages.pageIsCrashed(page) || page.URL() != "about:blank" ||
		len(page.Context().Pages()) != 1 {
		e.kept = nil
		return false
	}
	e.kept = page
	return true
}

func (e *playwrightEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	plain, err := browser.PlainJSON(args)
	if err != nil {
		return nil, err
	}
	replace := browser.ReplaceScript(e.takeNavBlank())
	return e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		if strings.HasPrefix(url, "file:") {
			// No page may navigate to file: (the allowlist's rule, and the engines'),
			// so location.replace cannot; the driver's own navigation can. Only the
			// oracle's callers choose a Visit's url (tests open reports from disk),
			// never a case; the history entry it adds costs a fresh page at the reset.
			_, err := page.Goto(url, playwright.PageGotoOptions{Timeout: &timeout})
			return err
		}
		return e.replaceWith(page, replace, url, timeout, playwright.WaitUntilStateLoad)
	}, browser.CallExpression(fn), plain)
}

// LoadURL navigates to url, then evaluates the case program there, which settles the
// navigated document (no write). The navigation waits for the commit only: the
// program's own settle waits for load, fonts and images under its budget, and names
// what did not settle, as for html cases. The budget is taken after the navigation.
func (e *playwrightEngine) LoadURL(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	plain, err := browser.PlainJSON(args)
	if err != nil {
		return nil, err
	}
	replace := browser.ReplaceScript(e.takeNavBlank())
	return e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		return e.replaceWith(page, replace, url, timeout, playwright.WaitUntilStateCommit)
	}, browser.CaseProgram(), func() any { return browser.CaseURLArg(fn, plain, browser.SettleBudget(ctx)) })
}

// replaceTo navigates page to url replacing its current session-history entry, as
// location.replace does, and waits for the load event: Goto would add an entry, and
// history.length would grow with every trace case.
func (e *playwrightEngine) replaceTo(page playwright.Page, url string, timeout float64) error {
	return e.replaceWith(page, browser.ReplaceScript(false), url, timeout, playwright.WaitUntilStateLoad)
}

// replaceWith is replaceTo by script (replaceScript), a function of the url that
// replaces the document with it, waiting for until instead of load (a url case waits
// for the commit only: the case program's settle waits for the rest and names what
// did not settle).
func (e *playwrightEngine) replaceWith(page playwright.Page, script, url string, timeout float64, until *playwright.WaitUntilState) error {
	if _, err := e.evaluate(page, script, url); err != nil &&
		!contextDestroyed(err) && !strings.Contains(err.Error(), "navigat") {
		return err
	}
	return page.WaitForURL(url, playwright.PageWaitForURLOptions{Timeout: &timeout, WaitUntil: until})
}

// evaluate calls the function fn with arg on page, as Playwright's Evaluate does,
// and with no user gesture where the engine's Evaluate would give one
// (evaluateWithoutGesture): a page that loads has no user activation, and a case
// must not see one (navigator.userActivation, fullscreen) that WebKitGTK's
// and the BiDi route's cases do not. arg must be plain JSON (plainJSON).
func (e *playwrightEngine) evaluate(page playwright.Page, fn string, arg any) (any, error) {
	if e.remote || !knowledgeOf(e.name).evaluateWithoutGesture {
		return page.Evaluate(fn, arg)
	}
	params, err := runtimeEvaluate(fn, arg)
	if err != nil {
		return nil, err
	}
	cdp, err := e.pages.cdpSession(page)
	if err != nil {
		return nil, cdpError(page, e.pages, err)
	}
	type sent struct {
		reply any
		err   error
	}
	done := make(chan sent, 1)
	go func() {
		reply, err := cdp.Send("Runtime.evaluate", params)
		done <- sent{reply, err}
	}()
	var reply any
	select {
	case s := <-done:
		if s.err != nil {
			return nil, cdpError(page, e.pages, s.err)
		}
		reply = s.reply
	case <-e.pages.pageEnded(page):
		// A crashed renderer never answers (Evaluate's pending calls fail on the crash).
		if e.pages.pageIsCrashed(page) {
			return nil, evaluateError("Target crashed")
		}
		return nil, fmt.Errorf("%w: Target page, context or browser has been closed", playwright.ErrTargetClosed)
	}
	b, err := json.Marshal(reply)
	if err != nil {
		return nil, fmt.Errorf("unreadable reply %T to Runtime.evaluate", reply)
	}
	return runtimeEvaluated(b)
}

// runtimeEvaluate is the Runtime.evaluate of fn called with arg (plain JSON), as
// Playwright's Evaluate calls it (inpage.EvaluateCall), with no user gesture: a page
// that loads has no user activation, and a case must not see one.
func runtimeEvaluate(fn string, arg any) (map[string]any, error) {
	var a bytes.Buffer
	enc := json.NewEncoder(&a)
	enc.SetEscapeHTML(false) // markup stays its size: no \u003c for every <
	if err := enc.Encode(arg); err != nil {
		return nil, fmt.Errorf("encode the argument: %w", err)
	}
	return map[string]any{
		"expression":    inpage.Fill(inpage.EvaluateCall, "FN", fn, "ARG", string(bytes.TrimSpace(a.Bytes()))),
		"returnByValue": true, "awaitPromise": true, "userGesture": false,
	}, nil
}

// runtimeEvaluated is the value of a Runtime.evaluate reply, or its exception as the
// error Playwright's Evaluate gives for it.
func runtimeEvaluated(reply []byte) (any, error) {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
				Value       any    `json:"value"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, fmt.Errorf("unreadable reply to Runtime.evaluate: %w", err)
	}
	if d := r.ExceptionDetails; d != nil {
		// Playwright's message for a thrown value (getExceptionMessage).
		msg := d.Text
		if x := d.Exception; x != nil {
			msg = x.Description
			if msg == "" {
				msg = fmt.Sprint(x.Value)
			}
		}
		return nil, evaluateError(msg)
	}
	return r.Result.Value, nil
}

// evaluateError is the error Playwright's Evaluate gives with message msg.
func evaluateError(msg string) error {
	return fmt.Errorf("%w: %w", playwright.ErrPlaywright, &playwright.Error{Name: "Error", Message: msg})
}

// cdpError is err from page's CDP session as Evaluate would have said it, which is
// what withPage reads: a closed page's is ErrTargetClosed, and a navigation's (V8's
// and the protocol's texts for it) Playwright's own "context was destroyed"
// (contextDestroyed, crExecutionContext.ts).
func cdpError(page playwright.Page, t *pageTracker, err error) error {
	switch s := err.Error(); {
	case errors.Is(err, playwright.ErrTargetClosed), strings.Contains(strings.ToLower(s), "crash"):
		return err
	case !t.pageOpen(page):
		return fmt.Errorf("%w: %w", playwright.ErrTargetClosed, err)
	case browser.ContextGone(s):
		return evaluateError("Execution context was destroyed, most likely because of a navigation.")
	}
	return err
}

// withPage runs load then evaluates expr with arg on the page under
// ctx's deadline; expr's result must be JSON text. Playwright's Evaluate has no
// timeout of its own, so a case that never yields (while(true){}) would hold the
// engine forever: past the deadline the page is abandoned and replaced.
func (e *playwrightEngine) withPage(ctx context.Context, load func(playwright.Page, float64) error, expr string, arg any) (json.RawMessage, error) {
	if _, err := e.ensureBrowser(); err != nil {
		return nil, err
	}
	timeout := 30_000.0
	if dl, ok := ctx.Deadline(); ok {
		timeout = float64(time.Until(dl).Milliseconds())
		if timeout < 1 {
			return nil, context.DeadlineExceeded
		}
	}
	type result struct {
		page playwright.Page
		raw  json.RawMessage
		err  error
	}
	// Everything that talks to the browser runs here, under the deadline: even opening
	// a page can queue behind a stuck case (a renderer busy with 50 MB of markup).
	e.mu.Lock()
	page, browserCtx, pwb, driver := e.page, e.context, e.browser, e.pw
	e.mu.Unlock()
	done := make(chan result, 1)
	go func() {
		r := result{page: page}
		if r.page == nil || !e.pages.pageOpen(r.page) { // a case may have called window.close()
			if r.page, r.err = e.newPage(browserCtx); r.err != nil {
				r.err = e.errorf("new page: %w", r.err)
				done <- r
				return
			}
		}
		if r.err = load(r.page, timeout); r.err != nil || expr == "" {
			done <- r
			return
		}
		var v any
		if f, ok := arg.(func() any); ok { // an argument that depends on what load took
			arg = f()
		}
		if v, r.err = e.evaluate(r.page, expr, arg); r.err == nil {
			if s, ok := v.(string); ok {
				r.raw = json.RawMessage(s)
			} else {
				r.err = fmt.Errorf("evaluate returned %T, want a JSON string", v)
			}
		}
		done <- r
	}()
	select {
	case r := <-done:
		timedOut := errors.Is(r.err, playwright.ErrTimeout) // Playwright's own clock ran out first
		if r.err != nil && driverGone(r.err) {
			driver.gone.Store(true)
			e.log.Warn().Str("engine", e.name).Err(r.err).Msg("playwright driver gone; relaunching it on the next call")
			return nil, e.errorf("playwright driver died: %w", r.err)
		}
		if r.err != nil && r.page != nil && e.pages.pageCrashed(r.page, r.err) {
			e.setPage(pwb, r.page, false) // kept, marked crashed: the next call replaces it
			return nil, e.errorf("page crashed (its renderer or content process died): %v", browser.FirstLine(r.err))
		}
		e.setPage(pwb, r.page, timedOut)
		if timedOut {
			// The page is still busy with the case; the reset opens another.
			go r.page.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)})
			return nil, fmt.Errorf("%w (%v)", context.DeadlineExceeded, browser.FirstLine(r.err))
		}
		if r.err != nil && e.pages.contextLost(pwb, browserCtx, r.page, r.err) && pwb.IsConnected() {
			return nil, e.errorf("page crashed or closed with its context (its content process died?): %v", browser.FirstLine(r.err))
		}
		if r.err != nil && !pwb.IsConnected() {
			e.log.Warn().Str("engine", e.name).Err(r.err).Msg("browser disconnected; relaunching on the next call")
			return nil, e.errorf("browser crashed or disconnected: %w", r.err)
		}
		return r.raw, r.err
	case <-ctx.Done():
		// Answer now and leave the page behind: the next call (the pool's reset)
		// opens another, or relaunches the browser if even that cannot happen in time.
		e.log.Warn().Str("engine", e.name).Str("op", browser.OpOf(ctx)).Err(ctx.Err()).
			Msg(browser.OpOf(ctx) + " did not finish in time; abandoning the page")
		e.setPage(pwb, nil, true)
		go func() {
			if r := <-done; r.page != nil {
				r.page.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)})
			}
		}()
		return nil, ctx.Err()
	}
}

// setPage records the page a call ended with (nil: abandoned, open a new one next
// time), unless a relaunch replaced the browser meanwhile.
func (e *playwrightEngine) setPage(pwb playwright.Browser, page playwright.Page, abandon bool) {
	if abandon {
		page = nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.browser == pwb {
		e.page = page
	}
}

// errorf is fmt.Errorf's error as e's engine's.
func (e *playwrightEngine) errorf(format string, args ...any) error {
	return browser.EngineErrorf(e.name, format, args...)
}
