package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/layout-oracle/oracle/inpage"
)

// Engine names as the protocol spells them.
const (
	Chromium = "chromium"
	Firefox  = "firefox"
	WebKit   = "webkit"
)

// AllEngines is every engine the oracle knows, in the order it reports them.
var AllEngines = []string{Chromium, Firefox, WebKit}

// Engine is one open browser. Everything a request asks of an engine is built from
// these two calls and the same in-page JavaScript (dump.WalkJS, the reflection and
// trace scripts), so the backends differ only in how they reach the page.
//
// An Engine serves one call at a time; the oracle never calls it concurrently.
type Engine interface {
	// Name is the protocol name: chromium, firefox or webkit.
	Name() string
	// Version is the exact browser build, from the driver (never the user agent).
	Version() string
	// Route says how the engine is reached and which binary, e.g.
	// "playwright-go system /usr/bin/chromium" or "webdriver /usr/bin/WebKitWebDriver".
	Route() string

	// Load evaluates the case program (case.js) in one driver call on the page as
	// Reset left it (a fresh about:blank): it captures the built-ins, replaces the
	// document with html (document.open/write/close), waits for the settle point
	// (docs/serving.md, "Settle point"), then calls fn, a JavaScript function expression, with
	// the captured built-ins as `this` and args, and returns fn's JSON result (a
	// returned promise is awaited). A page that does not settle within the deadline's
	// budget is an error naming what did not settle.
	Load(ctx context.Context, html string, fn string, args ...any) (json.RawMessage, error)

	// LoadURL navigates the page to url (a document the oracle's origin serves from
	// --docroot), then evaluates the case program there as Load does, except that it
	// writes nothing: it settles the navigated document (the same settle point, plus
	// reftest-wait: docs/serving.md, "Settle point"; docs/web-content.md) and calls fn. The
	// built-ins are captured when the program starts, after the document's own
	// scripts began to run.
	LoadURL(ctx context.Context, url string, fn string, args ...any) (json.RawMessage, error)

	// Visit navigates the page to url, waits for load, then evaluates fn as Load does.
	// The recorder of trace pages arrives first in the served document or by init script.
	Visit(ctx context.Context, url string, fn string, args ...any) (json.RawMessage, error)

	// Reset returns the page to a fresh about:blank document with a new global
	// object, so nothing a case left behind (globals, timers, listeners, top-level
	// let bindings) reaches the next case.
	Reset(ctx context.Context) error

	// Health says whether the engine is serving and how often it was relaunched.
	// Backends heal themselves: a crashed browser or dead driver is relaunched on
	// the next call.
	Health() Health

	// Close ends the browser and every process it started. Safe to call twice.
	Close() error
}

// Keeper is an Engine whose page can stay as an inert case left it (the oracle's
// pool decides which cases are inert: oracle/inert). Keep, called right after such a
// case, says whether the page is still the one document the case wrote into, on
// about:blank, with no other window; then the next Load writes into that document
// with no navigation (and scrolls it back to the origin first: CaseArg's kept), and
// the pool skips the Reset in between. False: the pool resets the page as usual.
type Keeper interface {
	Keep() bool
}

// Engine states reported in Health.
const (
	StateReady      = "ready"
	StateStarting   = "starting" // ping only: the engine is launching or self-checking; requests naming it wait
	StateRestarting = "restarting"
	StateFailed     = "failed" // the last relaunch failed; the next call tries again
)

// Health is an engine's state and relaunch count.
type Health struct {
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
	Reason   string `json:"reason,omitempty"` // why the last relaunch happened or failed
}

// Reported is h as Health returns it: an engine that never relaunched is ready.
func (h Health) Reported() Health {
	if h.State == "" {
		h.State = StateReady
	}
	return h
}

// DefaultDeadline bounds one engine's work on one request when the caller's context
// has no deadline of its own (the oracle's --deadline default).
const DefaultDeadline = 30 * time.Second

// probeTimeout bounds Prepare's check of a page: a live idle page answers in
// milliseconds; one whose content process died hangs (Firefox) or errs.
const ProbeTimeout = 3 * time.Second

// ErrNotLaunched is the per-engine error for an engine the request names but the
// process did not launch.
var ErrNotLaunched = errors.New("engine not launched")

// WithCaseScript wraps fn, a walk (a function expression that finds the case
// program's captured built-ins as `this`), into one whose first argument is the case's
// script, run by the captured indirect eval (global scope, like a classic <script>)
// after the document has settled; the page then settles again and fn runs with the
// remaining arguments. A script that throws is the case's failure, not the walk's: the
// wrapper then returns {"scriptError": "Name: message"} instead of calling fn, and
// fn's own result comes back as {"result": ...}. With no script there is nothing to
// settle again, and fn runs at once. The text is inpage/with_case_script.js.
func WithCaseScript(fn string) string {
	return inpage.Fill(inpage.WithCaseScript, "FN", fn)
}

// caseJS is the case program (inpage/case.js): every Load, in every engine and on
// every route, is one driver call evaluating this text on a fresh about:blank page
// (in a kept window, CaseProgramFor's call of the one the window holds).
var caseJS = inpage.Case

// CaseProgram is the case program's text, a function expression taking one argument,
// CaseArg's value, and returning a promise of the JSON text of fn's result.
func CaseProgram() string { return caseJS }

// CaseProgramFor is CaseProgram, or for a Load into a kept window (KeptCaseArg)
// inpage.KeptCase: a short function that calls the program the window's first
// inert case left on it, so a kept case costs no 32 KB of program text sent and
// compiled (the engines' compile caches do not all keep it).
func CaseProgramFor(kept bool) string {
	if kept {
		return inpage.KeptCase
	}
	return caseJS
}

// CaseArg is the case program's argument for one Load: the html to write, fn (a
// function expression called with the captured built-ins as `this` and args once the
// page has settled), and the settle budget in milliseconds.
func CaseArg(html, fn string, args []any, budget time.Duration) map[string]any {
	if args == nil {
		args = []any{}
	}
	return map[string]any{"html": html, "fn": fn, "args": args, "budget": budget.Milliseconds()}
}

// keptCaseArg is CaseArg for a Load into a document an inert case was kept in
// (Keeper): the program scrolls the window back to the origin before it writes, as
// a new document starts (an inert case's own layout can scroll it: scroll snapping,
// an initial scroll target).
func KeptCaseArg(html, fn string, args []any, budget time.Duration) map[string]any {
	a := CaseArg(html, fn, args, budget)
	a["kept"] = true
	return a
}

// caseURLArg is the case program's argument for one LoadURL: nothing to write (the
// page navigated to its document), and the root's reftest-wait class honoured.
func CaseURLArg(fn string, args []any, budget time.Duration) map[string]any {
	a := CaseArg("", fn, args, budget)
	a["navigated"] = true
	a["reftestWait"] = true
	return a
}

// settleBudget is how long the case program may wait for the page to settle: three
// quarters of what is left of ctx's deadline, so that a page that never settles is
// answered with the program's own error (naming what did not settle) before the
// driver's or the oracle's clock runs out.
func SettleBudget(ctx context.Context) time.Duration {
	remaining := DefaultDeadline
	if dl, ok := ctx.Deadline(); ok {
		remaining = time.Until(dl)
	}
	if remaining < 0 {
		remaining = 0
	}
	return remaining * 3 / 4
}

// CallExpression wraps fn, a function expression, into one that takes the args array
// and returns fn's (awaited) result as JSON text made by the page's own
// JSON.stringify. Every backend evaluates this same wrapper for Visit (trace pages), so
// the driver's value serialization (which differs between CDP, BiDi and WebDriver)
// never shapes a result; Load uses the case program instead. The text is
// inpage/call_expression.js.
func CallExpression(fn string) string {
	return inpage.Fill(inpage.CallExpression, "FN", fn)
}

// engineError is an engine's own error: its message begins with the engine's name,
// added here rather than in every message. errors.Is and errors.As see through it.
type engineError struct {
	Engine string
	Err    error
}

func (e *engineError) Error() string { return e.Engine + ": " + e.Err.Error() }
func (e *engineError) Unwrap() error { return e.Err }

// EngineErrorf is fmt.Errorf's error as engine's. An argument that is already
// engine's error loses its own prefix: the message names the engine once
// ("webkit: restart: start ...", not "webkit: restart: webkit: start ...").
func EngineErrorf(engine, format string, args ...any) error {
	for i, a := range args {
		if ee, ok := a.(*engineError); ok && ee.Engine == engine {
			args[i] = ee.Err
		}
	}
	return &engineError{Engine: engine, Err: fmt.Errorf(format, args...)}
}
