package bidi

// Tests of the BiDi route (bidi/bidi.go) against the real Firefox ESR: the own-client
// routes' conformance suite (internal/routetest).

import (
	"context"
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/internal/routetest"
	"github.com/rs/zerolog"
)

// bidiRoute is the BiDi route as the conformance suite sees it: its launch settings are
// the pinned environment's and the oracle's process model.
var bidiRoute = routetest.OwnRoute{
	Engine: browser.Firefox, Browser: "Firefox",
	Says: []string{browser.SystemFirefox, "WebDriver BiDi (oracle's own client)"},
	ExtraCases: []routetest.Case{
		// What the page can observe of its window and document.
		{HTML: "<p id=o></p>", Script: "o.textContent = [history.length, JSON.stringify(window.name), document.hasFocus(), innerWidth, innerHeight, devicePixelRatio, document.visibilityState, matchMedia('(hover: hover)').matches, navigator.webdriver, document.compatMode, document.URL].join()"},
	},
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

// The conformance suite against the real Firefox: the BiDi route answers html cases
// (bidiRoute.ExtraCases too) byte for byte as the Playwright route does (the same case
// program, prefs and viewport); nothing a case leaves behind reaches the next; an inert
// case's document is kept; a hung case and a killed content process each cost one
// case; Close leaves no process and no profile; a url case and a visit see the page's
// own document.
func TestBiDiRoute(t *testing.T) { routetest.Run(t, bidiRoute) }
