package cdp

// The system Chromium over the Chrome DevTools Protocol with the oracle's own client
// (--chromium-route=cdp, docs/cdp-route.md), in these files: the engine (this file:
// launch, the page's setup, Load, Visit, navigation, Screenshot), the page and its
// events (cdp/page.go), the reset, Keep and Prepare (cdp/reset.go), the typed
// commands and the route's errors (cdp/session.go), events by subscription
// (cdp/subscribe.go), the Chromium process
// (cdp/process.go), and the wire (cdp/wire.go). No Playwright
// driver: a case is one Runtime.evaluate where Playwright's route relays it and its
// events through node. The page is set up as Playwright sets up its pages (viewport
// and screen, focus emulation, media features, downloads refused, dialogs dismissed),
// so that a case sees the same browser on either route (the gate: cmd/bench).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/ownclient"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/inspector"
	cdppage "github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// errNotOnRoute is the per-engine error of a request the CDP route does not
// serve (docs/cdp-route.md).
var errNotOnRoute = errors.New("not supported on the cdp route")

// options chooses the Chromium build and its launch settings.
type options struct {
	ExecutablePath string   // default SystemChromium, run as Executable says
	Args           []string // LaunchSettings.ChromiumArgs
	Env            []string // KEY=VALUE added to the browser's environment
	Permissions    []string // granted to every page, in Playwright's names
	InitScripts    []string // run before any page script in every document
	MemoryCgroup   string   // cgroup.procs of the engine's memory cgroup; "": none
	MaxReply       int64    // bound of one reply in bytes; 0: browser.DefaultMaxReply
	BundledAbsent  string   // see browser.BundledAbsent
}

// cdpEngine is one Chromium with one page (a target in a browser context of its
// own, as Playwright's pages are), reached over the debugging pipe. The oracle calls
// it one call at a time; Health, Keep and Close may run beside a call.
type cdpEngine struct {
	ownclient.Browser[*cdpProc, *cdpConn] // the process, the pipe's connection, relaunch, health
	opts                                  options

	// Under the Browser's lock (Current, SetPage), with the page's marks:
	bctx string   // the browser context every page opens in
	page *cdpPage // nil: none open (a case closed it); the next call opens one
}

// launch launches Chromium and opens its page at the spec's viewport.
func launch(ctx context.Context, opts options, log zerolog.Logger) (browser.Engine, error) {
	e, exe := &cdpEngine{opts: opts}, Executable(opts.ExecutablePath)
	err := e.Browser.Launch(ctx, exe, log, ownclient.Setup{Engine: browser.Chromium,
		Route:    "cdp " + exe + " Chrome DevTools Protocol (oracle's own client)",
		ConnLost: errCDPGone.Error(), Start: e.startBrowser, PageReasonLocked: e.pageCrashedLocked,
		BundledAbsent: opts.BundledAbsent, MaxReply: opts.MaxReply})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// RunsInitScripts says the recorder arrives by init script, not inline.
func (e *cdpEngine) RunsInitScripts() bool { return len(e.opts.InitScripts) > 0 }

// startBrowser launches Chromium, sets up its browser context and opens the page; on any
// failure nothing it started is left running.
func (e *cdpEngine) startBrowser(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	p, err := e.startChromium()
	if err != nil {
		return e.Errorf("launch: %w", err)
	}
	conn := newCDPConn(p.toBrowser, p.fromBrowser, e.MaxMessage(), e.event, e.Log)
	e.attachPopups(conn)
	version, bctx, page, err := e.openBrowser(ctx, conn)
	if err != nil {
		return e.Abandon(p, conn, p.out.Tail(), err)
	}
	return e.Adopt(p, conn, version, func() { e.bctx, e.page = bctx, page })
}

// openBrowser reads the build, makes the browser context (downloads refused, the
// launch profile's grants) and opens the page in it.
func (e *cdpEngine) openBrowser(ctx context.Context, conn *cdpConn) (version, bctx string, page *cdpPage, err error) {
	b := cdpSession{conn: conn}
	v, err := cdp.Call(ctx, b, cdpbrowser.GetVersion, cdp.Empty{})
	if err != nil {
		return "", "", nil, err
	}
	if !strings.Contains(v.Product, "/") {
		return "", "", nil, fmt.Errorf("Browser.getVersion gave no product: %+v", v)
	}
	version = v.Product[strings.Index(v.Product, "/")+1:] // as Playwright reports it: HeadlessChrome/156.0… -> 156.0…
	// Every page target of the context, for the popups' dialogs (event).
	if _, err := cdp.Call(ctx, b, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true}); err != nil {
		return "", "", nil, err
	}
	c, err := cdp.Call(ctx, b, target.CreateBrowserContext, target.CreateBrowserContextParams{DisposeOnDetach: ptr(true)})
	if err != nil {
		return "", "", nil, err
	}
	if c.BrowserContextID == "" {
		return "", "", nil, errors.New("Target.createBrowserContext gave no id")
	}
	bctx = string(c.BrowserContextID)
	// A case's download is refused (docs/untrusted.md), as on the Playwright route
	// (AcceptDownloads false).
	if _, err := cdp.Call(ctx, b, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny, BrowserContextID: c.BrowserContextID}); err != nil {
		return "", "", nil, err
	}
	if len(e.opts.Permissions) > 0 {
		var perms []cdpbrowser.PermissionType
		for _, p := range e.opts.Permissions {
			name, ok := cdpPermissions[p]
			if !ok {
				return "", "", nil, fmt.Errorf("permission %q: %w", p, errNotOnRoute)
			}
			perms = append(perms, name)
		}
		if _, err := cdp.Call(ctx, b, grantPermissions, grantPermissionsParams{Permissions: perms, BrowserContextID: c.BrowserContextID}); err != nil {
			return "", "", nil, err
		}
	}
	page, err = e.openPage(ctx, conn, bctx)
	return version, bctx, page, err
}

// cdpPermissions are Playwright's permission names the launch profiles use, as CDP's
// Browser.grantPermissions spells them (Playwright's crBrowser.ts).
var cdpPermissions = map[string]cdpbrowser.PermissionType{
	"camera": cdpbrowser.PermissionTypeVideoCapture, "microphone": cdpbrowser.PermissionTypeAudioCapture,
	"geolocation": cdpbrowser.PermissionTypeGeolocation, "notifications": cdpbrowser.PermissionTypeNotifications,
	"midi": cdpbrowser.PermissionTypeMidi, "clipboard-read": cdpbrowser.PermissionTypeClipboardReadWrite,
	"clipboard-write": cdpbrowser.PermissionTypeClipboardSanitizedWrite,
}

// openPage opens a page in bctx and sets it up as Playwright sets up each of its
// pages (crPage.ts): the spec's viewport on the pinned screen, focus emulation (every
// page has the focus, as a headless browser's only window would), the pinned media
// features, and the init scripts.
func (e *cdpEngine) openPage(ctx context.Context, conn *cdpConn, bctx string) (*cdpPage, error) {
	b := cdpSession{conn: conn}
	t, err := cdp.Call(ctx, b, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", BrowserContextID: cdp.BrowserContextID(bctx)})
	if err != nil {
		return nil, err
	}
	if t.TargetID == "" {
		return nil, errors.New("Target.createTarget gave no target")
	}
	a, err := cdp.Call(ctx, b, target.AttachToTarget, target.AttachToTargetParams{TargetID: t.TargetID, Flatten: ptr(true)})
	if err != nil {
		return nil, err
	}
	if a.SessionID == "" {
		return nil, errors.New("Target.attachToTarget gave no session")
	}
	page := newCDPPage(string(t.TargetID), string(a.SessionID))
	e.SetPage(func() { e.page = page }) // its events from now on
	s := cdpSession{conn: conn, id: page.session}
	if err := e.setUpPage(ctx, s); err != nil {
		return nil, err
	}
	// The window the viewport's size too, as Playwright sizes it (a new target's
	// window is not: outerWidth 780 there, 800 on Playwright's route).
	w, err := cdp.Call(ctx, b, cdpbrowser.GetWindowForTarget, cdpbrowser.GetWindowForTargetParams{TargetID: t.TargetID})
	if err != nil {
		return nil, err
	}
	if _, err := cdp.Call(ctx, b, cdpbrowser.SetWindowBounds, cdpbrowser.SetWindowBoundsParams{WindowID: w.WindowID,
		Bounds: &cdpbrowser.Bounds{Width: int64(dump.Viewport.Width), Height: int64(dump.Viewport.Height)}}); err != nil {
		return nil, err
	}
	return page, nil
}

// setUpPage sets up a new page's session as Playwright sets up its pages: its events,
// focus emulation, the viewport on the pinned screen, the pinned media features and
// the init scripts.
func (e *cdpEngine) setUpPage(ctx context.Context, s cdpSession) error {
	if _, err := cdp.Call(ctx, s, cdppage.Enable, cdppage.EnableParams{}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, s, inspector.Enable, cdp.Empty{}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, s, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, s, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(dump.Viewport.Width), Height: int64(dump.Viewport.Height), DeviceScaleFactor: 1, Mobile: false,
		ScreenWidth: host.ScreenWidth, ScreenHeight: host.ScreenHeight,
		ScreenOrientation: &emulation.ScreenOrientation{Angle: 0, Type: emulation.ScreenOrientationTypeLandscapePrimary},
	}); err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, s, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "", Features: []*emulation.MediaFeature{
		{Name: "prefers-color-scheme", Value: "light"},
		{Name: "prefers-reduced-motion", Value: "no-preference"},
		{Name: "forced-colors", Value: "none"},
		{Name: "prefers-contrast", Value: "no-preference"},
	}}); err != nil {
		return err
	}
	for _, src := range e.opts.InitScripts {
		if _, err := cdp.Call(ctx, s, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: src, RunImmediately: ptr(true)}); err != nil {
			return err
		}
	}
	return nil
}

// ptr is a pointer to v: cdproto's optional parameters.
func ptr[T any](v T) *T { return &v }

// current is the connection and page a call works on, opening a page when a case
// closed the last one.
func (e *cdpEngine) current(ctx context.Context) (*cdpConn, *cdpPage, error) {
	var page *cdpPage
	var bctx string
	conn := e.Current(func() { page, bctx = e.page, e.bctx })
	if page != nil {
		if _, _, _, gone, _ := page.state(); !gone {
			return conn, page, nil
		}
		if page.isCrashed() {
			return nil, nil, e.failed(ctx, "page crashed", errors.New("its renderer died"))
		}
	}
	page, err := e.openPage(ctx, conn, bctx)
	if err != nil {
		return nil, nil, e.failed(ctx, "new page", err)
	}
	return conn, page, nil
}

// navigateBlank navigates page to a new about:blank document and waits for its load:
// a new document and global (about:blank to about:blank adds no history entry).
func (e *cdpEngine) navigateBlank(ctx context.Context, conn *cdpConn, page *cdpPage) error {
	_, _, before, _, _ := page.state()
	if _, err := cdp.Call(ctx, cdpSession{conn, page.session}, cdppage.Navigate, cdppage.NavigateParams{URL: "about:blank"}); err != nil {
		return err
	}
	return e.waitFor(ctx, page, "about:blank", true, before)
}

// waitFor waits until a navigation after the seq-th committed url's document in
// page, and with load until that document loaded.
func (e *cdpEngine) waitFor(ctx context.Context, page *cdpPage, url string, load bool, seq int) error {
	for {
		at, loaded, n, gone, changed := page.state()
		if gone {
			return e.pageGone(page)
		}
		if n > seq && at == url && page.navigationFailed() {
			return e.navigationError(ctx, page, url)
		}
		if n > seq && at == url && (!load || loaded) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// navigationError is the error of a navigation to url that committed Chromium's
// error page, in the words Playwright's route gives it: the network error's name,
// which the error page shows (net::ERR_PROXY_CONNECTION_FAILED at url).
func (e *cdpEngine) navigationError(ctx context.Context, page *cdpPage, url string) error {
	conn := e.Current(nil)
	// Its script fills in the name: read once it loaded (or a moment later).
	wait, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for loaded := false; !loaded; {
		_, l, _, gone, changed := page.state()
		if loaded = l || gone; !loaded {
			select {
			case <-changed:
			case <-wait.Done():
				loaded = true
			}
		}
	}
	code := "net::ERR_FAILED"
	r, err := cdp.Call(ctx, cdpSession{conn, page.session}, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: netErrorJS, ReturnByValue: ptr(true)})
	var name string
	if err == nil && r.Result != nil && json.Unmarshal(r.Result.Value, &name) == nil && name != "" {
		code = "net::" + name
	}
	return &navigationFailure{code + " at " + url}
}

// navigationFailure is a navigation that ended on Chromium's error page.
type navigationFailure struct{ text string }

func (f *navigationFailure) Error() string { return f.text }

// pageGone is the error of a call on a page that crashed or closed, in the words of
// Playwright's route.
func (e *cdpEngine) pageGone(page *cdpPage) error {
	if page.isCrashed() {
		return &pageScriptError{"Target crashed"}
	}
	return fmt.Errorf("%w: Target page, context or browser has been closed", errTargetClosed)
}

// Load evaluates the case program on the reset's about:blank (or a kept inert case's
// document), in one Runtime.evaluate.
func (e *cdpEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	plain, err := browser.PlainJSON(args)
	if err != nil {
		return nil, err
	}
	if err := e.Ensure(ctx); err != nil {
		return nil, err
	}
	ready, kept := e.TakeMarks()
	conn, page, err := e.current(ctx)
	if err != nil {
		return nil, err
	}
	if !ready && !kept {
		// A new page (the first, a relaunched browser's, one opened after a case
		// closed its window), or a reset that did not finish: the same kind of
		// document the reset makes.
		if err := e.navigateBlank(ctx, conn, page); err != nil {
			return nil, e.failed(ctx, "navigate to about:blank", err)
		}
	}
	arg := browser.CaseArg(html, fn, plain, browser.SettleBudget(ctx))
	if kept {
		arg = browser.KeptCaseArg(html, fn, plain, browser.SettleBudget(ctx))
	}
	return e.evaluateJSON(ctx, conn, page, browser.CaseProgramFor(kept), arg)
}

// evaluate calls fn with arg (plain JSON) on page with no user gesture
// (cdpEvaluateParams) and returns its value. An exception is the case's error; a page
// that crashed or closed under the call, or a call past its deadline, leaves the
// engine broken (the next call relaunches it: a busy loop holds the renderer).
func (e *cdpEngine) evaluate(ctx context.Context, conn *cdpConn, page *cdpPage, fn string, arg any) (any, error) {
	params, err := cdpEvaluateParams(fn, arg)
	if err != nil {
		return nil, err
	}
	type sent struct {
		reply cdpruntime.EvaluateResult
		err   error
	}
	done := make(chan sent, 1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		reply, err := cdp.Call(cctx, cdpSession{conn, page.session}, cdpruntime.Evaluate, params)
		done <- sent{reply, err}
	}()
	select {
	case s := <-done:
		if s.err != nil {
			if lostContext(s.err) {
				return nil, &pageScriptError{"Execution context was destroyed, most likely because of a navigation."}
			}
			if _, fault := asCDPError(s.err); fault {
				if targetClosed(s.err) {
					page.end(false) // its session is gone: the next call opens a new page
				}
				if _, _, _, gone, _ := page.state(); gone {
					return nil, e.pageGone(page)
				}
			}
			return nil, e.failed(ctx, "evaluate", s.err)
		}
		return cdpEvaluated(s.reply)
	case <-page.ended:
		// A crashed renderer never answers.
		if page.isCrashed() {
			return nil, e.failed(ctx, "page crashed", &pageScriptError{"Target crashed"})
		}
		return nil, e.pageGone(page)
	}
}

// evaluateJSON is evaluate of a function whose value is JSON text.
func (e *cdpEngine) evaluateJSON(ctx context.Context, conn *cdpConn, page *cdpPage, fn string, arg any) (json.RawMessage, error) {
	v, err := e.evaluate(ctx, conn, page, fn, arg)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("evaluate returned %T, want a JSON string", v)
	}
	return json.RawMessage(s), nil
}

// failed records that a call on the browser failed, so the next call relaunches it:
// a call that outlived its deadline leaves the renderer busy (while(true){} wedges
// it), and a crash or a dead pipe leaves nothing to call. The error is the deadline's,
// or the engine's naming op and the wire's reason: only a pipe the browser ended is
// called a crash (a reply over the bound, or the engine's Close, says so instead).
func (e *cdpEngine) failed(ctx context.Context, op string, err error) error {
	e.BreakFor(ctx, op, err)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case op == "page crashed":
		return e.Errorf("page crashed (its renderer or content process died): %v", browser.FirstLine(err))
	case errors.Is(err, errCDPGone):
		return e.Errorf("browser crashed or disconnected: %w", err)
	}
	return e.Errorf("%s: %w", op, err)
}

// Visit replaces the page's document with url's (location.replace: no history entry),
// waits for its load, then evaluates fn by CallExpression. The recorder of trace
// pages arrives by init script (RunsInitScripts).
func (e *cdpEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	plain, err := browser.PlainJSON(args)
	if err != nil {
		return nil, err
	}
	conn, page, err := e.navigateTo(ctx, url, true)
	if err != nil {
		return nil, err
	}
	return e.evaluateJSON(ctx, conn, page, browser.CallExpression(fn), plain)
}

// LoadURL replaces the page's document with url's and waits for the commit only;
// the case program settles the document (no write) and calls fn.
func (e *cdpEngine) LoadURL(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	plain, err := browser.PlainJSON(args)
	if err != nil {
		return nil, err
	}
	conn, page, err := e.navigateTo(ctx, url, false)
	if err != nil {
		return nil, err
	}
	return e.evaluateJSON(ctx, conn, page, browser.CaseProgram(), browser.CaseURLArg(fn, plain, browser.SettleBudget(ctx)))
}

// navigateTo replaces the page's document with url's by the page's own
// location.replace (the driver's navigation would add a history entry), and waits
// until the page is there: its load with load, else its commit. A file: url (only the
// oracle's callers choose one, never a case; no page may navigate to file:) takes the
// driver's navigation; its history entry costs a new page at the reset.
func (e *cdpEngine) navigateTo(ctx context.Context, url string, load bool) (*cdpConn, *cdpPage, error) {
	if err := e.Ensure(ctx); err != nil {
		return nil, nil, err
	}
	e.TakeMarks()
	conn, page, err := e.current(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := e.replaceTo(ctx, conn, page, url, load); err != nil {
		var nf *navigationFailure
		if errors.As(err, &nf) { // the page is live, on its error page: the case's error
			return nil, nil, e.Errorf("%w", err)
		}
		return nil, nil, e.failed(ctx, "navigate to "+url, err)
	}
	return conn, page, nil
}

// replaceTo navigates page to url (location.replace, or the driver's navigation for
// file:) and waits for its commit, and with load for its load.
func (e *cdpEngine) replaceTo(ctx context.Context, conn *cdpConn, page *cdpPage, url string, load bool) error {
	_, _, before, _, _ := page.state()
	if strings.HasPrefix(url, "file:") {
		if _, err := cdp.Call(ctx, cdpSession{conn, page.session}, cdppage.Navigate, cdppage.NavigateParams{URL: url}); err != nil {
			return err
		}
		return e.waitFor(ctx, page, url, true, before)
	}
	params, err := cdpEvaluateParams(browser.ReplaceScript(false), url)
	if err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, cdpSession{conn, page.session}, cdpruntime.Evaluate, params); err != nil {
		if _, fault := asCDPError(err); !fault {
			return err // the navigation may end the call's context first: a CDP error reply is no failure
		}
	}
	return e.waitFor(ctx, page, url, load, before)
}

// Screenshot is the page's viewport as PNG (Page.captureScreenshot).
func (e *cdpEngine) Screenshot(ctx context.Context) ([]byte, error) {
	if err := e.Ensure(ctx); err != nil {
		return nil, err
	}
	conn, page, err := e.current(ctx)
	if err != nil {
		return nil, err
	}
	s, err := cdp.Call(ctx, cdpSession{conn, page.session}, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{Format: cdppage.CaptureScreenshotFormatPng})
	if err != nil {
		if undecoded := (*cdpResultError)(nil); errors.As(err, &undecoded) {
			return nil, e.Errorf("screenshot: %w", err)
		}
		return nil, e.failed(browser.WithOp(ctx, "screenshot"), "screenshot", err)
	}
	return s.Data, nil // cdproto decodes its base64
}
