package bidi

// Firefox over raw WebDriver BiDi with the oracle's own client (--firefox-route=bidi,
// docs/bidi-route.md), in three files: the engine (this file: launch, Load, Reset,
// Keep, Prepare, relaunch, Close), the Firefox process and its profile
// (bidi/process.go), and the wire client (bidi/wire.go). No Playwright driver and no
// injected script: one BiDi command per case where Playwright's route relays several
// through node and evaluates its 340 KB script in every new document.

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/browser/ownclient"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/rs/zerolog"
)

// errNotOnRoute is the per-engine error of a request the BiDi route does not
// serve yet (docs/bidi-route.md).
var errNotOnRoute = errors.New("not supported on the bidi route")

// options chooses the Firefox build and its launch settings.
type options struct {
	ExecutablePath string         // default SystemFirefox
	Prefs          map[string]any // LaunchSettings.FirefoxPrefs, into user.js
	Env            []string       // KEY=VALUE added to the browser's environment
	MemoryCgroup   string         // cgroup.procs of the engine's memory cgroup; "": none
	MaxReply       int64          // bound of one reply in bytes; 0: browser.DefaultMaxReply
	BundledAbsent  string         // see browser.BundledAbsent
	InitScripts    []string       // run before any page script in every document (script.addPreloadScript)
}

// bidiEngine is one Firefox with one page (a top-level browsing context), reached
// over one BiDi session. The oracle calls it one call at a time; Health, Keep and
// Close may run beside a call.
type bidiEngine struct {
	ownclient.Browser[*bidiProc, *bidiConn] // the process, the session's connection, relaunch, health
	opts                                    options

	// Under the Browser's lock (Current, SetPage), with the page's marks:
	page string // the page's browsing context id
}

// launch launches Firefox and opens its page at the spec's viewport.
func launch(ctx context.Context, opts options, log zerolog.Logger) (browser.Engine, error) {
	e, exe := &bidiEngine{opts: opts}, cmp.Or(opts.ExecutablePath, browser.SystemFirefox)
	err := e.Browser.Launch(ctx, exe, log, ownclient.Setup{Engine: browser.Firefox,
		Route:    "bidi " + exe + " WebDriver BiDi (oracle's own client)",
		ConnLost: errBiDiGone.Error(), Start: e.startBrowser, BundledAbsent: opts.BundledAbsent, MaxReply: opts.MaxReply})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// RunsInitScripts says the recorder arrives by preload script, not inline.
func (e *bidiEngine) RunsInitScripts() bool { return len(e.opts.InitScripts) > 0 }

// startBrowser launches Firefox, opens the session and sets up its page; on any
// failure nothing it started is left running.
func (e *bidiEngine) startBrowser(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 180*time.Second) // session.new alone took 11 s at load average 40
	defer cancel()
	p, err := e.startFirefox(ctx)
	if err != nil {
		return e.Errorf("launch: %w", err)
	}
	conn, page, version, err := e.openSession(ctx, p)
	if err != nil {
		return e.Abandon(p, conn, p.out.Tail(), err)
	}
	return e.Adopt(p, conn, version, func() { e.page = page })
}

// openSession dials p's BiDi endpoint, starts the session and prepares the page.
func (e *bidiEngine) openSession(ctx context.Context, p *bidiProc) (*bidiConn, string, string, error) {
	conn, err := dialBiDi(ctx, p.url+"/session", e.MaxMessage(), e.Log)
	if err != nil {
		return nil, "", "", err
	}
	host.NoDelayFirefox(browser.Firefox, []int{p.PID()}, e.Log) // Firefox's end of our socket
	raw, err := conn.call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}})
	if err != nil {
		return conn, "", "", err
	}
	var s struct {
		Capabilities struct {
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Capabilities.BrowserVersion == "" {
		return conn, "", "", fmt.Errorf("session.new gave no browserVersion: %s", raw)
	}
	// A case's download is refused, as on the Playwright route (AcceptDownloads false):
	// in Firefox one took the focus from the page for good.
	if _, err := conn.call(ctx, "browser.setDownloadBehavior", map[string]any{
		"downloadBehavior": map[string]any{"type": "denied"}}); err != nil {
		return conn, "", "", err
	}
	// The init scripts (the trace recorder), before any page script in every document
	// of every context, as Playwright's addInitScript; each is a script's text, run as
	// a function body.
	for _, src := range e.opts.InitScripts {
		if _, err := conn.call(ctx, "script.addPreloadScript", map[string]any{"functionDeclaration": inpage.Fill(preloadJS, "SRC", src)}); err != nil {
			return conn, "", "", err
		}
	}
	// The page is a tab of its own, as Playwright's new page is: Firefox's startup tab
	// never has the focus (document.hasFocus() false even after browsingContext.activate).
	tops, err := topContexts(ctx, conn)
	if err != nil {
		return conn, "", "", err
	}
	page, err := createTab(ctx, conn)
	if err != nil {
		return conn, "", "", err
	}
	for _, t := range tops {
		if err := closeContext(ctx, conn, t.Context); err != nil {
			return conn, "", "", err
		}
	}
	return conn, page, s.Capabilities.BrowserVersion, nil
}

// bidiContext is one entry of browsingContext.getTree.
type bidiContext struct {
	Context string `json:"context"`
	URL     string `json:"url"`
}

// topContexts lists the browser's top-level browsing contexts (tabs and windows).
func topContexts(ctx context.Context, c *bidiConn) ([]bidiContext, error) {
	raw, err := c.call(ctx, "browsingContext.getTree", map[string]any{"maxDepth": 0})
	if err != nil {
		return nil, err
	}
	var t struct {
		Contexts []bidiContext `json:"contexts"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	return t.Contexts, nil
}

// closeContext closes a top-level browsing context without running its beforeunload
// (a case's handler must not hold the close).
func closeContext(ctx context.Context, c *bidiConn, id string) error {
	_, err := c.call(ctx, "browsingContext.close", map[string]any{"context": id, "promptUnload": false})
	return err
}

// setViewport sets page's viewport to the spec's (a viewport is per top-level context).
func setViewport(ctx context.Context, c *bidiConn, page string) error {
	_, err := c.call(ctx, "browsingContext.setViewport", map[string]any{"context": page,
		"viewport": map[string]any{"width": dump.Viewport.Width, "height": dump.Viewport.Height}})
	return err
}

// current is the connection and page a call works on.
func (e *bidiEngine) current() (*bidiConn, string) {
	var page string
	conn := e.Current(func() { page = e.page })
	return conn, page
}

// navigateBlank navigates page to a new about:blank document and waits for its load:
// a new document and global (about:blank to about:blank adds no history entry).
func navigateBlank(ctx context.Context, c *bidiConn, page string) error {
	_, err := c.call(ctx, "browsingContext.navigate", map[string]any{"context": page, "url": "about:blank", "wait": "complete"})
	return err
}

// Load evaluates the case program on the reset's about:blank (or a kept inert case's
// document), in one script.callFunction.
func (e *bidiEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	if err := e.Ensure(ctx); err != nil {
		return nil, err
	}
	ready, kept := e.TakeMarks()
	conn, page := e.current()
	if !ready && !kept {
		// A new page (the first, a relaunched browser's, a new tab), or a reset that
		// did not finish: the same kind of document the reset makes.
		if err := navigateBlank(ctx, conn, page); err != nil {
			return nil, e.failed(ctx, "navigate to about:blank", err)
		}
	}
	arg := browser.CaseArg(html, fn, args, browser.SettleBudget(ctx))
	if kept {
		arg = browser.KeptCaseArg(html, fn, args, browser.SettleBudget(ctx))
	}
	return e.evaluate(ctx, conn, page, browser.CaseProgramFor(kept), arg)
}

// evaluate calls fn (a function expression of one argument returning JSON text)
// with arg, sent as a BiDi value (bidiValue).
func (e *bidiEngine) evaluate(ctx context.Context, conn *bidiConn, page, fn string, arg any) (json.RawMessage, error) {
	v, err := bidiValue(arg)
	if err != nil {
		return nil, err
	}
	raw, err := conn.call(ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn, "awaitPromise": true, "resultOwnership": "none",
		"target": map[string]any{"context": page}, "arguments": []any{v},
	})
	if err != nil {
		if text, ok := rejectedWithoutStack(err); ok {
			return nil, e.Errorf("evaluate: %s", text)
		}
		return nil, e.failed(ctx, "evaluate", err)
	}
	var r bidiRemoteValue
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, e.Errorf("evaluate: %w", err)
	}
	if r.Type == "exception" {
		text := "(no text)"
		if r.ExceptionDetails != nil {
			text = r.ExceptionDetails.Text
		}
		return nil, e.Errorf("evaluate: %s", text)
	}
	var s string
	if r.Result.Type != "string" || json.Unmarshal(r.Result.Value, &s) != nil {
		return nil, e.Errorf("evaluate returned %s, want a JSON string", r.Result.Type)
	}
	return json.RawMessage(s), nil
}

// missingStack begins the error Firefox's remote agent answers for a function whose
// promise was rejected when the page's realm recorded neither the promise's
// allocation nor its resolution site, which it needs for exceptionDetails (its
// windowglobal/script.sys.mjs): the case program's promise rejected from a later
// task, as it is when a page does not settle or a navigated document is not
// well-formed XML. The call finished in a live page; the rest of the message is the
// rejection's text.
const missingStack = "Error: Missing stack, unable to build exceptionDetails for exception: "

// rejectedWithoutStack is the rejection's text when err is that answer, so that it is
// the case's error, as any other exception is, and not a broken browser (a relaunch).
func rejectedWithoutStack(err error) (string, bool) {
	var be *bidiError
	if !errors.As(err, &be) || be.method != "script.callFunction" || be.code != "unknown error" {
		return "", false
	}
	return strings.CutPrefix(be.message, missingStack)
}

// failed records that a call on the browser failed, so the next call relaunches it:
// a call that outlived its deadline leaves the content process busy (while(true){}
// wedges it, and no BiDi command interrupts it), and any other driver error means a
// dead connection, browser or content process. The error is the deadline's, or the
// engine's naming op and the wire's reason: only a connection the browser ended is
// called a crash (a reply over the bound, or the engine's Close, says so instead).
func (e *bidiEngine) failed(ctx context.Context, op string, err error) error {
	e.BreakFor(ctx, op, err)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, errBiDiGone) {
		return e.Errorf("browser crashed or disconnected: %w", err)
	}
	return e.Errorf("%s: %w", op, err)
}

// bidiValue is v (made plain by encoding/json) as a BiDi LocalValue.
func bidiValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode argument: %w", err)
	}
	var plain any
	if err := json.Unmarshal(b, &plain); err != nil {
		return nil, err
	}
	return localValue(plain), nil
}

func localValue(v any) any {
	switch v := v.(type) {
	case nil:
		return map[string]any{"type": "null"}
	case bool:
		return map[string]any{"type": "boolean", "value": v}
	case float64:
		return map[string]any{"type": "number", "value": v}
	case string:
		return map[string]any{"type": "string", "value": v}
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = localValue(x)
		}
		return map[string]any{"type": "array", "value": out}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = []any{k, localValue(v[k])}
		}
		return map[string]any{"type": "object", "value": out}
	}
	return map[string]any{"type": "undefined"}
}

// Visit replaces the page's document with url's (location.replace: no history entry),
// waits for its load, then evaluates fn by CallExpression. The recorder of trace
// pages arrives by preload script (RunsInitScripts).
func (e *bidiEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	conn, page, err := e.navigateTo(ctx, url, true)
	if err != nil {
		return nil, err
	}
	if args == nil {
		args = []any{}
	}
	return e.evaluate(ctx, conn, page, browser.CallExpression(fn), args)
}

// LoadURL replaces the page's document with url's and waits for the commit only;
// the case program settles the document (no write) and calls fn.
func (e *bidiEngine) LoadURL(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	conn, page, err := e.navigateTo(ctx, url, false)
	if err != nil {
		return nil, err
	}
	return e.evaluate(ctx, conn, page, browser.CaseProgram(), browser.CaseURLArg(fn, args, browser.SettleBudget(ctx)))
}

// navigateTo replaces the page's document with url's by the page's own
// location.replace (the driver's navigation would add a history entry), and waits
// until the page is there: its load with load, else its commit. A file: url (only the
// oracle's callers choose one, never a case; no page may navigate to file:) takes the
// driver's navigation; its history entry costs a new tab at the reset, as every
// navigation does on this route.
func (e *bidiEngine) navigateTo(ctx context.Context, url string, load bool) (*bidiConn, string, error) {
	if err := e.Ensure(ctx); err != nil {
		return nil, "", err
	}
	e.TakeMarks()
	conn, page := e.current()
	if strings.HasPrefix(url, "file:") {
		_, err := conn.call(ctx, "browsingContext.navigate", map[string]any{"context": page, "url": url, "wait": "complete"})
		if err != nil {
			return nil, "", e.failed(ctx, "navigate", err)
		}
		return conn, page, nil
	}
	_, err := conn.call(ctx, "script.callFunction", map[string]any{
		"functionDeclaration": browser.ReplaceScript(false), "awaitPromise": false, "resultOwnership": "none",
		"target": map[string]any{"context": page}, "arguments": []any{localValue(url)},
	})
	var be *bidiError
	if err != nil && !errors.As(err, &be) { // the navigation may end the call's realm first
		return nil, "", e.failed(ctx, "navigate", err)
	}
	if err := e.waitFor(ctx, conn, page, url, load); err != nil {
		return nil, "", e.failed(ctx, "wait for "+url, err)
	}
	return conn, page, nil
}

// waitFor polls the page, from a sandbox the page's scripts cannot reach, until its
// document is url's, and with load until that document has loaded.
func (e *bidiEngine) waitFor(ctx context.Context, conn *bidiConn, page, url string, load bool) error {
	for {
		raw, err := conn.call(ctx, "script.evaluate", map[string]any{
			"expression": locationStateJS, "awaitPromise": false,
			"resultOwnership": "none", "target": map[string]any{"context": page, "sandbox": "layout-oracle"},
		})
		var be *bidiError
		switch {
		case err == nil:
			var r bidiRemoteValue
			var text string
			var st [2]string
			if json.Unmarshal(raw, &r) == nil && json.Unmarshal(r.Result.Value, &text) == nil &&
				json.Unmarshal([]byte(text), &st) == nil && st[0] == url && (!load || st[1] == "complete") {
				return nil
			}
		case !errors.As(err, &be): // a dead connection or the deadline; a realm that went away is retried
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Screenshot is BiDi's browsingContext.captureScreenshot of the viewport.
func (e *bidiEngine) Screenshot(ctx context.Context) ([]byte, error) {
	if err := e.Ensure(ctx); err != nil {
		return nil, err
	}
	conn, page := e.current()
	raw, err := conn.call(ctx, "browsingContext.captureScreenshot", map[string]any{"context": page, "origin": "viewport"})
	if err != nil {
		return nil, e.failed(browser.WithOp(ctx, "screenshot"), "screenshot", err)
	}
	var s struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, e.Errorf("screenshot: %w", err)
	}
	return base64.StdEncoding.DecodeString(s.Data)
}
