package cdp

// Tests of the CDP route (cdp/cdp.go) against the real Chromium: the same answers as the
// Playwright route, the per-case isolation of its reset, dialogs, a hung case, and no
// process left behind.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/layout-oracle/oracle/oracle/browser/environment"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/internal/routetest"

	"github.com/layout-oracle/oracle/oracle/browser/playwright"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cdpTestSettings are the launch settings both routes get in these tests: the pinned
// environment (fonts, switches).
func cdpTestSettings(t *testing.T) browser.LaunchSettings {
	t.Helper()
	s, err := environment.Settings()
	require.NoError(t, err)
	return s
}

func launchCDP(t *testing.T, s browser.LaunchSettings) *cdpEngine {
	t.Helper()
	e, err := Launch(context.Background(), Options{Args: s.ChromiumArgs, Env: s.Env, InitScripts: s.InitScripts}, testutil.Logger(t))
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e.(*cdpEngine)
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

// The CDP route answers html cases, with and without a script, byte for byte as the
// Playwright route does: the same build, switches, case program and page setup.
func TestCDPChromiumAnswersAsThePlaywrightRoute(t *testing.T) {
	testutil.NeedsBrowsers(t)
	s := cdpTestSettings(t)
	log := testutil.Logger(t)
	d, err := playwright.Start(log)
	require.NoError(t, err)
	t.Cleanup(func() { d.Stop() })
	pw, err := d.Launch(playwright.OptionsFor(browser.Chromium, s), log)
	require.NoError(t, err)
	t.Cleanup(func() { pw.Close() })
	cdp := launchCDP(t, s)
	assert.Equal(t, pw.Version(), cdp.Version(), "the same Chromium build, in the same words")
	assert.Contains(t, cdp.Route(), Executable(""))
	assert.Contains(t, cdp.Route(), "Chrome DevTools Protocol (oracle's own client)")

	cases := []struct{ html, script string }{
		{"<!doctype html><div style='width:100px;padding:3px'><p>hello <b>world</b></p><span>x</span></div>", ""},
		{"<!doctype html><p style='font:16px monospace'>mono</p><ul><li>a<li>b</ul>", "document.body.appendChild(document.createElement('p')).textContent = 'added'"},
		{"<p>throws</p>", "throw new TypeError('no')"},
		// What the page can observe of its window and document.
		{"<p id=o></p>", cdpFingerprint},
		{"<!doctype html><div style='display:flex;gap:7px'><div style='flex:1'>a</div><div style='flex:2;writing-mode:vertical-rl'>bb</div></div>", "await new Promise(r => setTimeout(r, 5)); document.body.style.margin = '3px'"},
		// Dialogs no one answers: dismissed, as Playwright dismisses them.
		{"<p id=o></p>", "o.textContent = JSON.stringify([alert('a'), confirm('c'), prompt('p', 'd')])"},
	}
	for i, c := range cases {
		want := routetest.RunGeometry(t, pw, c.html, c.script)
		got := routetest.RunGeometry(t, cdp, c.html, c.script)
		assert.Equal(t, want, got, "case %d: %s / %s", i, c.html, c.script)
	}
}

// A beforeunload handler holds neither the reset nor the next case.
func TestCDPBeforeUnloadDoesNotHoldTheReset(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpTestSettings(t))
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
	e := launchCDP(t, cdpTestSettings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _ = e.Load(ctx, "<p>x</p>", browser.WithCaseScript(`function () { return 1; }`), "window.close()")
	require.NoError(t, e.Reset(ctx))
	raw, err := e.Load(ctx, "<p>next</p>", `function () { return [document.body.textContent, history.length, document.hasFocus()]; }`)
	require.NoError(t, err)
	assert.JSONEq(t, `["next",1,true]`, string(raw))
	assert.Equal(t, 0, e.Health().Restarts)
}

// Nothing a case leaves behind reaches the next one: globals, window.name, history
// entries, a timer, a popup; and the next case has the focus.
func TestCDPResetIsolatesCases(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpTestSettings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	check := `function () { return new Promise(r => setTimeout(() => r([typeof window.leak, window.name, history.length,
		document.getElementsByTagName('i').length, document.hasFocus(), document.title]), 50)); }`
	want := `["undefined","",1,0,true,""]`
	first, err := e.Load(ctx, "<p>first</p>", check)
	require.NoError(t, err)
	assert.JSONEq(t, want, string(first), "the first case")
	require.NoError(t, e.Reset(ctx))

	dirty := `window.leak = 1; window.name = 'left'; history.pushState({}, '', '#a'); history.pushState({}, '', '#b');
		setInterval(() => { document.body.appendChild(document.createElement('i')); document.title = 'timer'; }, 1);
		window.open('about:blank', '_blank');`
	now := `function () { return [typeof window.leak, window.name, history.length]; }` // WithCaseScript awaits no promise of fn's
	raw, err := e.Load(ctx, "<p>dirty</p>", browser.WithCaseScript(now), dirty)
	require.NoError(t, err)
	assert.JSONEq(t, `{"result":["number","left",3]}`, string(raw), "the case's own state was there")
	require.NoError(t, e.Reset(ctx))
	others, err := e.otherPages(ctx, e.Conn, e.page)
	require.NoError(t, err)
	assert.Empty(t, others, "the popup was closed")

	after, err := e.Load(ctx, "<p>after</p>", check)
	require.NoError(t, err)
	assert.JSONEq(t, want, string(after), "the case after a dirty one")
	require.NoError(t, e.Reset(ctx))

	// window.name alone (no history entry) is cleared without a new tab.
	_, err = e.Load(ctx, "<p>named</p>", browser.WithCaseScript(now), "window.name = 'x'; window.leak = 2")
	require.NoError(t, err)
	require.NoError(t, e.Reset(ctx))
	after, err = e.Load(ctx, "<p>after</p>", check)
	require.NoError(t, err)
	assert.JSONEq(t, want, string(after))
	assert.Equal(t, 0, e.Health().Restarts, "no relaunch was needed")
}

// An inert case's document is kept (Keeper) and the next Load writes over it.
func TestCDPKeepReusesTheDocument(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpTestSettings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	text := `function () { return document.body.textContent; }`
	_, err := e.Load(ctx, "<p>one</p>", text)
	require.NoError(t, err)
	require.True(t, e.Keep())
	raw, err := e.Load(ctx, "<p>two</p>", text)
	require.NoError(t, err)
	assert.Equal(t, `"two"`, string(raw))
	// A popup: not kept.
	_, err = e.Load(ctx, "<p>three</p>", browser.WithCaseScript(text), "window.open('about:blank')")
	require.NoError(t, err)
	assert.False(t, e.Keep(), "a page with another window open is not kept")
	require.NoError(t, e.Reset(ctx))
}

// A case that never yields is answered with the deadline's error, and the next case
// works (the browser is relaunched).
func TestCDPHungCaseCostsOneCase(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpTestSettings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := e.Load(ctx, "<p>hang</p>", browser.WithCaseScript(`function () { return 1; }`), "while (true) {}")
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Equal(t, browser.StateRestarting, e.Health().State)

	// The reset relaunches the browser, under a bound shorter than any relaunch (the
	// pool gives a reset 3 s, which a relaunch under load uses up): the relaunched
	// page is new and needs no reset in what is left of it. 05864a4 reset it anyway,
	// failed, and relaunched a second time (issue 40, item 7): Restarts was 2.
	rctx, rcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer rcancel()
	require.NoError(t, e.Reset(rctx))
	assert.Equal(t, 1, e.Health().Restarts, "one relaunch for the hung case")
	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	raw, err := e.Load(ctx2, "<p>next</p>", `function () { return [document.body.textContent, history.length, document.hasFocus()]; }`)
	require.NoError(t, err)
	assert.JSONEq(t, `["next",1,true]`, string(raw))
	assert.Equal(t, 1, e.Health().Restarts)
	assert.Equal(t, browser.StateReady, e.Health().State)
}

// Killing the content process costs one case: the next Reset relaunches.
func TestCDPKilledContentProcessCostsOneCase(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpTestSettings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := e.Load(ctx, "<p>x</p>", `function () { return 1; }`)
	require.NoError(t, err)
	require.NoError(t, e.Reset(ctx))
	killed := 0
	for pid := range browser.ContentProcesses(e) {
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		killed++
	}
	require.NotZero(t, killed, "a content process to kill")
	time.Sleep(300 * time.Millisecond)
	_, _ = e.Load(ctx, "<p>maybe</p>", `function () { return 1; }`) // may fail: the one case it costs
	require.NoError(t, e.Reset(ctx))
	raw, err := e.Load(ctx, "<p>next</p>", `function () { return document.body.textContent; }`)
	require.NoError(t, err)
	assert.Equal(t, `"next"`, string(raw))
}

// The CDP route runs Debian's browser itself, not its wrapper script (whose files in
// /etc/chromium.d may name another program: issue 40, item 10), with the switches
// the script adds, so the program that runs is the file the warm start fingerprints.
func TestCDPRunsDebiansChromiumItself(t *testing.T) {
	testutil.NeedsBrowsers(t)
	if Executable("") != debianChromiumBinary {
		t.Skip("needs Debian's Chromium")
	}
	e := launchCDP(t, cdpTestSettings(t))
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

// Close leaves no Chromium process and no profile behind.
func TestCDPCloseLeavesNothing(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e := launchCDP(t, cdpTestSettings(t))
	pid, profile := e.Proc.PID(), e.Proc.profile
	require.NotEmpty(t, host.ProcessTree([]int{pid}))
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "twice")
	assert.Empty(t, routetest.GroupProcs(pid), "no live process of Chromium's group")
	_, err := os.Stat(profile)
	assert.True(t, os.IsNotExist(err), "the profile is removed")
	_, err = e.Load(context.Background(), "", "function () { return 1; }")
	assert.Error(t, err)
}

// A url case and a trace-like visit: the page's own document, no history entry, and
// the html case after them runs in an opaque about:blank with history 1 and the focus.
func TestCDPVisitAndLoadURL(t *testing.T) {
	testutil.NeedsBrowsers(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		// x is 1 when the init script ran before the page's own.
		fmt.Fprintf(w, "<title>%s</title><script>window.x = window.pre === 'pre' ? 1 : 0; document.cookie = 'c=1'</script><p>%s</p>", r.URL.Path, r.URL.Path)
	}))
	defer srv.Close()
	s := cdpTestSettings(t)
	s.InitScripts = []string{"window.pre = 'pre';"}
	e := launchCDP(t, s)
	assert.True(t, e.RunsInitScripts())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state := `function () { return [document.title, window.x, history.length, location.href, self.origin, document.hasFocus()]; }`

	raw, err := e.Visit(ctx, srv.URL+"/visit", state)
	require.NoError(t, err)
	assert.JSONEq(t, fmt.Sprintf(`["/visit",1,1,%q,%q,true]`, srv.URL+"/visit", srv.URL), string(raw))
	require.NoError(t, e.Reset(ctx))

	raw, err = e.Load(ctx, "<p>html</p>", state)
	require.NoError(t, err)
	assert.JSONEq(t, `["",null,1,"about:blank","null",true]`, string(raw), "an opaque about:blank after a visit")
	require.NoError(t, e.Reset(ctx))

	raw, err = e.LoadURL(ctx, srv.URL+"/url", `function () { return [document.title, window.x, history.length, document.body.textContent]; }`)
	require.NoError(t, err)
	assert.JSONEq(t, `["/url",1,1,"/url"]`, string(raw))
	require.NoError(t, e.Reset(ctx))
	raw, err = e.Load(ctx, "<p>html</p>", state)
	require.NoError(t, err)
	assert.JSONEq(t, `["",null,1,"about:blank","null",true]`, string(raw), "an opaque about:blank after a url case")
	assert.Equal(t, 0, e.Health().Restarts)
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
	s := cdpTestSettings(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := Launch(ctx, Options{Args: s.ChromiumArgs, Env: s.Env, Permissions: []string{"geolocation", "notifications"}}, testutil.Logger(t))
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

	_, err = Launch(ctx, Options{Args: s.ChromiumArgs, Env: s.Env, Permissions: []string{"no-such-grant"}}, testutil.Logger(t))
	assert.ErrorIs(t, err, ErrNotOnRoute)
}
