package bidi

// Tests of the BiDi route (bidi/bidi.go) against the real Firefox ESR: the same answers as
// the Playwright route, the per-case isolation of its reset, a hung case, and no
// process left behind. Their bodies are both own routes' (internal/routetest).

import (
	"context"
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/internal/routetest"
	"github.com/rs/zerolog"
)

// bidiRoute is the BiDi route as the tests both own routes share see it: its launch
// settings are the pinned environment's and the oracle's process model.
var bidiRoute = routetest.OwnRoute{
	Engine: browser.Firefox, Browser: "Firefox",
	Extra: browser.LaunchSettings{FirefoxPrefs: map[string]any{"fission.webContentIsolationStrategy": 0,
		"dom.ipc.processCount": 1, "dom.ipc.processCount.webIsolated": 1}},
	Start: func(ctx context.Context, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error) {
		return launch(ctx, options{Prefs: s.FirefoxPrefs, Env: s.Env, InitScripts: s.InitScripts}, log)
	},
	Popups: func(ctx context.Context, e browser.Engine) (int, error) {
		tops, err := topContexts(ctx, e.(*bidiEngine).Current(nil))
		return len(tops) - 1, err // all but the page
	},
	Proc: func(e browser.Engine) (int, string) { p := e.(*bidiEngine).Proc(); return p.PID(), p.profile },
}

// The BiDi route answers html cases, with and without a script, byte for byte as
// the Playwright route does: the same case program, prefs and viewport.
func TestBiDiFirefoxAnswersAsThePlaywrightRoute(t *testing.T) {
	routetest.AnswersAsThePlaywrightRoute(t, bidiRoute, []string{browser.SystemFirefox, "WebDriver BiDi (oracle's own client)"},
		append(routetest.PlaywrightCases,
			// What the page can observe of its window and document.
			routetest.Case{HTML: "<p id=o></p>", Script: "o.textContent = [history.length, JSON.stringify(window.name), document.hasFocus(), innerWidth, innerHeight, devicePixelRatio, document.visibilityState, matchMedia('(hover: hover)').matches, navigator.webdriver, document.compatMode, document.URL].join()"}))
}

// Nothing a case leaves behind reaches the next one: globals, window.name, history
// entries, a timer, a popup; and the next case has the focus.
func TestBiDiResetIsolatesCases(t *testing.T) { routetest.ResetIsolatesCases(t, bidiRoute) }

// An inert case's document is kept (Keeper) and the next Load writes over it.
func TestBiDiKeepReusesTheDocument(t *testing.T) { routetest.KeepReusesTheDocument(t, bidiRoute) }

// A case that never yields is answered with the deadline's error, and the next case
// works (the browser is relaunched).
func TestBiDiHungCaseCostsOneCase(t *testing.T) { routetest.HungCaseCostsOneCase(t, bidiRoute) }

// Killing the content process costs one case: the next Reset relaunches.
func TestBiDiKilledContentProcessCostsOneCase(t *testing.T) {
	routetest.KilledContentProcessCostsOneCase(t, bidiRoute)
}

// Close leaves no Firefox process and no profile behind.
func TestBiDiCloseLeavesNothing(t *testing.T) { routetest.CloseLeavesNothing(t, bidiRoute) }

// A url case and a trace-like visit: the page's own document, no history entry, and
// the html case after them runs in an opaque about:blank with history 1 and the focus.
func TestBiDiVisitAndLoadURL(t *testing.T) { routetest.VisitAndLoadURL(t, bidiRoute) }
