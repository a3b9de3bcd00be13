package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/dump"
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

	// Load replaces the page's document with html, with Playwright setContent
	// semantics (document.open/write/close on the current page), and waits for load.
	// Then it evaluates fn, a JavaScript function expression, called with args, and
	// returns the function's JSON result (a returned promise is awaited).
	Load(ctx context.Context, html string, fn string, args ...any) (json.RawMessage, error)

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

// Engine states reported in Health.
const (
	StateReady      = "ready"
	StateRestarting = "restarting"
	StateFailed     = "failed" // the last relaunch failed; the next call tries again
)

// Health is an engine's state and relaunch count.
type Health struct {
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
	Reason   string `json:"reason,omitempty"` // why the last relaunch happened or failed
}

// reported is h as Health returns it: an engine that never relaunched is ready.
func (h Health) reported() Health {
	if h.State == "" {
		h.State = StateReady
	}
	return h
}

// ErrNotLaunched is the per-engine error for an engine the request names but the
// process did not launch.
var ErrNotLaunched = errors.New("engine not launched")

// viewportWidth and viewportHeight are the spec's viewport, which every engine is
// set to and then verified against before it serves a case.
var (
	viewportWidth  = dump.Viewport.Width
	viewportHeight = dump.Viewport.Height
)

// WithCaseScript wraps fn, a function expression, into one whose first argument is
// the case's script, run before fn by indirect eval (global scope, like a classic
// <script>); fn gets the remaining arguments. A script that throws is the case's
// failure, not the walk's: the wrapper then returns {"scriptError": "Name: message"}
// instead of calling fn, and fn's own result comes back as {"result": ...}.
func WithCaseScript(fn string) string {
	return `(function (script) {
  if (script) {
    try {
      (0, eval)(script);
    } catch (e) {
      var name = e && e.name ? e.name : typeof e;
      var msg = e && e.message !== undefined ? e.message : String(e);
      return { scriptError: name + ": " + msg };
    }
  }
  return { result: (` + fn + `).apply(null, Array.prototype.slice.call(arguments, 1)) };
})`
}

// caseResult is what WithCaseScript's wrapper returns.
type caseResult struct {
	Result      json.RawMessage `json:"result"`
	ScriptError string          `json:"scriptError"`
}

// runCase loads html, runs the case's script, then fn with args, and returns fn's
// JSON result; a throwing script is a caseError.
func runCase(ctx context.Context, e Engine, html, script, fn string, args ...any) (json.RawMessage, error) {
	raw, err := e.Load(ctx, html, WithCaseScript(fn), append([]any{script}, args...)...)
	if err != nil {
		return nil, err
	}
	var res caseResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("walk returned malformed JSON: %v", err)
	}
	if res.ScriptError != "" {
		return nil, caseErrorf("script threw: %s", res.ScriptError)
	}
	return res.Result, nil
}

// CallExpression wraps fn, a function expression, into one that takes the args array
// and returns fn's (awaited) result as JSON text made by the page's own
// JSON.stringify. Every backend evaluates this same wrapper, so the driver's value
// serialization (which differs between CDP, BiDi and WebDriver) never shapes a result.
func CallExpression(fn string) string {
	return "async (args) => { const v = await (" + fn + ").apply(null, args || []); " +
		"return v === undefined ? 'null' : JSON.stringify(v); }"
}
