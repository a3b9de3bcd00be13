package routetest

// The own-client routes' conformance suite (cdp: Chromium, bidi: Firefox): Run runs
// every body below as a subtest against the real browser, so a route gets them all
// from one call: the same answers as the Playwright route, the per-case isolation of
// the reset, a kept document, a hung case, a killed content process, Close, and url
// cases.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/environment"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/inert"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OwnRoute is one own-client route as the suite (Run) sees it.
type OwnRoute struct {
	Engine  string // browser.Chromium or browser.Firefox
	Browser string // the browser as messages name it: "Chromium", "Firefox"
	// Says are what the route's Route must name (its executable, its protocol).
	Says []string
	// ExtraCases are the route's own cases (what a page can observe of its window and
	// document), run after the shared ones and answered as the Playwright route does.
	ExtraCases []Case
	// Extra is merged over the pinned environment's launch settings (Settings).
	Extra browser.LaunchSettings
	// Start launches the route's engine with s.
	Start func(ctx context.Context, s browser.LaunchSettings, log zerolog.Logger) (browser.Engine, error)
	// Popups counts the windows a case opened that are still open.
	Popups func(ctx context.Context, e browser.Engine) (int, error)
	// Proc is the browser's own process and its profile directory.
	Proc func(e browser.Engine) (pid int, profile string)
}

// Settings are the launch settings the route and the Playwright route get in these
// tests: the pinned environment (fonts, switches, prefs) and r.Extra.
func (r OwnRoute) Settings(t *testing.T) browser.LaunchSettings {
	t.Helper()
	s, err := environment.Settings()
	require.NoError(t, err)
	s.Merge(r.Extra)
	return s
}

// Launch launches the route's engine with s; it is closed when the test ends.
func (r OwnRoute) Launch(t *testing.T, s browser.LaunchSettings) browser.Engine {
	t.Helper()
	e, err := r.Start(context.Background(), s, testutil.Logger(t))
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// Run runs the suite against route r, each body as a subtest named after it.
func Run(t *testing.T, r OwnRoute) {
	testutil.NeedsBrowsers(t)
	for _, b := range []struct {
		name string
		body func(*testing.T, OwnRoute)
	}{
		{"AnswersAsThePlaywrightRoute", answersAsThePlaywrightRoute},
		{"ResetIsolatesCases", resetIsolatesCases},
		{"KeepReusesTheDocument", keepReusesTheDocument},
		{"HungCaseCostsOneCase", hungCaseCostsOneCase},
		{"KilledContentProcessCostsOneCase", killedContentProcessCostsOneCase},
		{"CloseLeavesNothing", closeLeavesNothing},
		{"VisitAndLoadURL", visitAndLoadURL},
	} {
		t.Run(b.name, func(t *testing.T) { b.body(t, r) })
	}
}

// Case is an html case with its script, run as the oracle runs a geometry case.
type Case struct{ HTML, Script string }

// playwrightCases are cases both own routes answer as the Playwright route does;
// each route adds its own (OwnRoute.ExtraCases).
var playwrightCases = []Case{
	{"<!doctype html><div style='width:100px;padding:3px'><p>hello <b>world</b></p><span>x</span></div>", ""},
	{"<!doctype html><p style='font:16px monospace'>mono</p><ul><li>a<li>b</ul>", "document.body.appendChild(document.createElement('p')).textContent = 'added'"},
	{"<p>throws</p>", "throw new TypeError('no')"},
	{"<!doctype html><div style='display:flex;gap:7px'><div style='flex:1'>a</div><div style='flex:2;writing-mode:vertical-rl'>bb</div></div>", "await new Promise(r => setTimeout(r, 5)); document.body.style.margin = '3px'"},
}

// answersAsThePlaywrightRoute: the route answers playwrightCases and r.ExtraCases,
// with and without a script, byte for byte as the Playwright route does on the same
// build, and its Route names each of r.Says.
func answersAsThePlaywrightRoute(t *testing.T, r OwnRoute) {
	s := r.Settings(t)
	log := testutil.Logger(t)
	d, err := playwright.Start(log)
	require.NoError(t, err)
	t.Cleanup(func() { d.Stop() })
	pw, err := d.Launch(playwright.OptionsFor(r.Engine, s), log)
	require.NoError(t, err)
	t.Cleanup(func() { pw.Close() })
	own := r.Launch(t, s)
	assert.Equal(t, pw.Version(), own.Version(), "the same %s build, in the same words", r.Browser)
	for _, say := range r.Says {
		assert.Contains(t, own.Route(), say)
	}
	for i, c := range slices.Concat(playwrightCases, r.ExtraCases) {
		want := runGeometry(t, pw, c.HTML, c.Script)
		got := runGeometry(t, own, c.HTML, c.Script)
		assert.Equal(t, want, got, "case %d: %s / %s", i, c.HTML, c.Script)
	}
}

// resetIsolatesCases: nothing a case leaves behind reaches the next one (globals,
// window.name, history entries, a timer, a popup), and the next case has the focus.
func resetIsolatesCases(t *testing.T, r OwnRoute) {
	e := r.Launch(t, r.Settings(t))
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
	popups, err := r.Popups(ctx, e)
	require.NoError(t, err)
	assert.Zero(t, popups, "the popup was closed")

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

// keepReusesTheDocument: an inert case's document is kept (Keeper) and the next Load
// writes over it, through the case program the first left on the window
// (browser.CaseProgramFor); a page with a popup open is not kept.
func keepReusesTheDocument(t *testing.T, r OwnRoute) {
	e := r.Launch(t, r.Settings(t))
	keeper, ok := e.(browser.Keeper)
	require.True(t, ok, "%T keeps no page", e)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	text := `function () { return document.body.textContent; }`
	// Inert cases, checked in the engine as the oracle runs them (runInertCase).
	inertLoad := func(markup string) string {
		allowed, why := inert.Judge(markup)
		require.Empty(t, why)
		raw, err := e.Load(ctx, markup, inpage.Fill(inpage.InertCheck, "FN", text), allowed)
		require.NoError(t, err)
		var res struct {
			Result json.RawMessage `json:"result"`
			Inert  *string         `json:"inert"`
		}
		require.NoError(t, json.Unmarshal(raw, &res), "%s", raw)
		require.NotNil(t, res.Inert, "%s", raw)
		assert.Empty(t, *res.Inert, "the inert check passes")
		return string(res.Result)
	}
	assert.Equal(t, `"one"`, inertLoad("<p>one</p>"))
	require.True(t, keeper.Keep())
	assert.Equal(t, `"two"`, inertLoad("<p>two</p>"))
	// A kept window's Load sends the short program; a window without the one it
	// calls (here: a new one that held only a case with a script) answers a failed
	// inert check.
	require.NoError(t, e.Reset(ctx))
	_, err := e.Load(ctx, "<p>x</p>", browser.WithCaseScript(text), "")
	require.NoError(t, err)
	require.True(t, keeper.Keep())
	raw, err := e.Load(ctx, "<p>y</p>", text)
	require.NoError(t, err)
	assert.JSONEq(t, `{"inert":"the kept window holds no case program"}`, string(raw))
	require.NoError(t, e.Reset(ctx))
	// A popup: not kept.
	_, err = e.Load(ctx, "<p>three</p>", browser.WithCaseScript(text), "window.open('about:blank')")
	require.NoError(t, err)
	assert.False(t, keeper.Keep(), "a page with another window open is not kept")
	require.NoError(t, e.Reset(ctx))
}

// hungCaseCostsOneCase: a case that never yields is answered with the deadline's
// error, and the next case works (the browser is relaunched, once).
func hungCaseCostsOneCase(t *testing.T, r OwnRoute) {
	e := r.Launch(t, r.Settings(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := e.Load(ctx, "<p>hang</p>", browser.WithCaseScript(`function () { return 1; }`), "while (true) {}")
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Equal(t, browser.StateRestarting, e.Health().State)

	// The reset relaunches the browser, under a bound shorter than any relaunch (the
	// pool gives a reset 3 s, which a relaunch under load uses up): the relaunched
	// page is new and needs no reset in what is left of it. 05864a4 reset it anyway,
	// failed, and relaunched a second time: Restarts was 2.
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

// killedContentProcessCostsOneCase: killing the content process costs one case; the
// next Reset relaunches.
func killedContentProcessCostsOneCase(t *testing.T, r OwnRoute) {
	e := r.Launch(t, r.Settings(t))
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

// closeLeavesNothing: Close leaves no process of the browser's group and no profile
// behind, twice, and a later call is an error.
func closeLeavesNothing(t *testing.T, r OwnRoute) {
	e := r.Launch(t, r.Settings(t))
	pid, profile := r.Proc(e)
	require.NotEmpty(t, host.ProcessTree([]int{pid}))
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "twice")
	assert.Empty(t, GroupProcs(pid), "no live process of %s's group", r.Browser)
	_, err := os.Stat(profile)
	assert.True(t, os.IsNotExist(err), "the profile is removed")
	_, err = e.Load(context.Background(), "", "function () { return 1; }")
	assert.Error(t, err)
}

// visitAndLoadURL: a url case and a trace-like visit see the page's own document
// (the init script ran first) and add no history entry, and the html case after them
// runs in an opaque about:blank with history 1 and the focus.
func visitAndLoadURL(t *testing.T, r OwnRoute) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		// x is 1 when the init script ran before the page's own.
		fmt.Fprintf(w, "<title>%s</title><script>window.x = window.pre === 'pre' ? 1 : 0; document.cookie = 'c=1'</script><p>%s</p>", r.URL.Path, r.URL.Path)
	}))
	defer srv.Close()
	s := r.Settings(t)
	s.InitScripts = []string{"window.pre = 'pre';"}
	e := r.Launch(t, s)
	runs, ok := e.(interface{ RunsInitScripts() bool })
	require.True(t, ok, "%T says nothing of init scripts", e)
	assert.True(t, runs.RunsInitScripts())
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
