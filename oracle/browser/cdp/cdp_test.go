package cdp

// Tests of the CDP route (cdp/cdp.go) against the real Chromium: the own-client routes'
// conformance suite (internal/routetest), and what is the CDP route's own: dialogs, a
// beforeunload handler, a closed window, Debian's binary, permission grants.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/browser/internal/routetest"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cdpRoute is the CDP route as the conformance suite sees it: its launch settings are
// the pinned environment's (fonts, switches).
var cdpRoute = routetest.OwnRoute{
	Engine: browser.Chromium, Browser: "Chromium",
	Says: []string{Executable(""), "Chrome DevTools Protocol (oracle's own client)"},
	ExtraCases: []routetest.Case{
		// What the page can observe of its window and document.
		{HTML: "<p id=o></p>", Script: cdpFingerprint},
		// Dialogs no one answers: dismissed, as Playwright dismisses them.
		{HTML: "<p id=o></p>", Script: "o.textContent = JSON.stringify([alert('a'), confirm('c'), prompt('p', 'd')])"},
	},
	Start: func(ctx context.Context, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error) {
		return launch(ctx, options{Args: s.ChromiumArgs, Env: s.Env, InitScripts: s.InitScripts}, log)
	},
	Popups: func(ctx context.Context, e browser.Engine) (int, error) {
		ce := e.(*cdpEngine)
		others, err := ce.otherPages(ctx, ce.Current(nil), ce.page)
		return len(others), err
	},
	Proc: func(e browser.Engine) (int, string) { p := e.(*cdpEngine).Proc(); return p.PID(), p.profile },
}

// launchCDP launches the CDP route's engine with s, closed when the test ends.
func launchCDP(t *testing.T, s browser.LaunchSettings) *cdpEngine {
	return cdpRoute.Launch(t, s).(*cdpEngine)
}

// cdpFingerprint is what a page can observe of its browser, window and document that
// the route sets up (the viewport, the screen, the focus, the media features, the
// window's size, user activation), as a box whose size is a hash of it: the dump is
// geometry, and a text of the same length would lay out the same.
const cdpFingerprint = `const s = JSON.stringify([screen.width, screen.height, screen.availWidth, screen.orientation.type,
	innerWidth, innerHeight, outerWidth, outerHeight, devicePixelRatio, visualViewport.width, document.hasFocus(),
	document.visibilityState, history.length, window.name, navigator.webdriver, navigator.userActivation.hasBeenActive,
	navigator.maxTouchPoints, Intl.DateTimeFormat().resolvedOptions().timeZone, navigator.languages,
	['(prefers-color-scheme: light)', '(prefers-reduced-motion: no-preference)', '(forced-colors: none)',
	 '(prefers-contrast: no-preference)', '(hover: hover)', '(pointer: fine)', '(device-width: 1280px)',
	 '(orientation: landscape)', '(display-mode: browser)', '(scripting: enabled)'].map(q => matchMedia(q).matches),
	typeof Notification === 'undefined' ? null : Notification.permission, window.opener, window.top === window]);
	let h = 0; for (const c of s) h = (h * 31 + c.charCodeAt(0)) % 100003;
	o.style.cssText = 'display:block;width:' + h % 4000 + 'px;height:' + s.length + 'px';`

// The conformance suite against the real Chromium: the CDP route answers html cases
// (cdpRoute.ExtraCases too) byte for byte as the Playwright route does on the same
// build; nothing a case leaves behind reaches the next; an inert case's document is
// kept; a hung case and a killed content process each cost one case; Close leaves no
// process and no profile; a url case and a visit see the page's own document.
func TestCDPRoute(t *testing.T) { routetest.Run(t, cdpRoute) }

// A beforeunload handler holds neither the reset nor the next case.
func TestCDPBeforeUnloadDoesNotHoldTheReset(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpRoute.Settings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := e.Load(ctx, "<p>x</p>", browser.WithCaseScript(`function () { return 1; }`),
		"addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = 'stay'; }); document.body.click()")
	require.NoError(t, err)
	require.NoError(t, e.Reset(ctx))
	raw, err := e.Load(ctx, "<p>next</p>", `function () { return document.body.textContent; }`)
	require.NoError(t, err)
	assert.Equal(t, `"next"`, string(raw))
	assert.Equal(t, 0, e.Health().Restarts)
}

// A case that closes its window costs a new page, not a relaunch.
func TestCDPWindowClosedByTheCaseCostsANewPage(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpRoute.Settings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _ = e.Load(ctx, "<p>x</p>", browser.WithCaseScript(`function () { return 1; }`), "window.close()")
	require.NoError(t, e.Reset(ctx))
	raw, err := e.Load(ctx, "<p>next</p>", `function () { return [document.body.textContent, history.length, document.hasFocus()]; }`)
	require.NoError(t, err)
	assert.JSONEq(t, `["next",1,true]`, string(raw))
	assert.Equal(t, 0, e.Health().Restarts)
}

// The CDP route runs Debian's browser itself, not its wrapper script (whose files in
// /etc/chromium.d may name another program), with the switches
// the script adds, so the program that runs is the file the warm start fingerprints.
func TestCDPRunsDebiansChromiumItself(t *testing.T) {
	testutil.NeedsBrowsers(t)
	if Executable("") != debianChromiumBinary {
		t.Skip("needs Debian's Chromium")
	}
	e := launchCDP(t, cdpRoute.Settings(t))
	assert.Contains(t, e.Route(), "cdp "+debianChromiumBinary)
	var browser *host.ProcInfo
	for _, p := range host.ProcessTree(e.ProcessRoots()) {
		if p.Cmdline0 == "chromium" && !slices.ContainsFunc(p.Args, func(a string) bool { return strings.HasPrefix(a, "--type=") }) {
			browser = &p
			break
		}
	}
	require.NotNil(t, browser, "Chromium's browser process")
	assert.Equal(t, debianChromiumBinary, browser.Args[0])
	for _, flag := range append([]string{"--remote-debugging-pipe"}, debianChromiumFlags...) {
		assert.Contains(t, browser.Args, flag)
	}
}

// A launch profile's grants reach the page (Browser.grantPermissions: the pinned
// protocol no longer has it, Chromium 156 serves it; cdp/session.go), and a grant the
// route cannot name is refused at launch.
func TestCDPGrantsTheProfilesPermissions(t *testing.T) {
	testutil.NeedsBrowsers(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>page</p>")
	}))
	defer srv.Close()
	s := cdpRoute.Settings(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := launch(ctx, options{Args: s.ChromiumArgs, Env: s.Env, Permissions: []string{"geolocation", "notifications"}}, testutil.Logger(t))
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	states := `async function () { const q = n => navigator.permissions.query({name: n}).then(s => s.state);
		return [await q('geolocation'), await q('notifications'), await q('camera')]; }`
	raw, err := e.Visit(ctx, srv.URL+"/", states)
	require.NoError(t, err)
	var got []string
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Len(t, got, 3)
	assert.Equal(t, []string{"granted", "granted"}, got[:2], "the profile's grants")
	assert.NotEqual(t, "granted", got[2], "camera was not granted")

	_, err = launch(ctx, options{Args: s.ChromiumArgs, Env: s.Env, Permissions: []string{"no-such-grant"}}, testutil.Logger(t))
	assert.ErrorIs(t, err, errNotOnRoute)
}
