package webdriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/internal/routetest"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// These tests drive the real WebKitGTK (webkit2gtk-driver), not a mock. One engine is
// launched per test binary and shared; it dies with the binary (Pdeathsig, watchdog).
// TestWebDriverClose launches a second one, since closing is what it tests.

var (
	wdOnce   sync.Once
	wdShared *webDriverEngine
	wdErr    error
	wdLaunch time.Duration
)

// skipWithoutWebKit skips on a machine without WebKitGTK, except under CI (CI=true),
// where .ci/run installs it and a missing engine must fail, not pass quietly.
func skipWithoutWebKit(tb testing.TB) {
	tb.Helper()
	testutil.NeedsBrowsers(tb)
	if os.Getenv("CI") != "" {
		return
	}
	if _, err := os.Stat(browser.SystemWebKitWebDriver); err != nil {
		tb.Skipf("WebKitGTK tests need %s (Debian package webkit2gtk-driver): %v", browser.SystemWebKitWebDriver, err)
	}
	if _, err := os.Stat(browser.SystemMiniBrowser); err != nil {
		tb.Skipf("WebKitGTK tests need %s: %v", browser.SystemMiniBrowser, err)
	}
	if os.Getenv("DISPLAY") == "" {
		if _, err := os.Stat(host.DefaultXvfb); err != nil {
			tb.Skipf("WebKitGTK tests need DISPLAY or %s (Debian package xvfb)", host.DefaultXvfb)
		}
	}
}

// webkit is the shared engine.
func webkit(tb testing.TB) *webDriverEngine {
	tb.Helper()
	skipWithoutWebKit(tb)
	wdOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		start := time.Now()
		e, err := Launch(ctx, Options{}, testutil.Logger(tb))
		wdLaunch = time.Since(start)
		if err == nil {
			wdShared = e.(*webDriverEngine)
		}
		wdErr = err
	})
	if wdErr != nil {
		tb.Fatalf("launch WebKitGTK: %v", wdErr)
	}
	return wdShared
}

func caseCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// load is Load of html and fn, its result decoded into v.
func load(tb testing.TB, e browser.Engine, html, fn string, v any, args ...any) {
	tb.Helper()
	raw, err := e.Load(caseCtx(tb), html, fn, args...)
	if err != nil {
		tb.Fatalf("Load(%.60q): %v", html, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		tb.Fatalf("Load(%.60q) result %s: %v", html, raw, err)
	}
}

// walkResult is what the walk, wrapped by WithCaseScript, returns.
type walkResult struct {
	Dump        *dump.Dump `json:"result"`
	ScriptError string     `json:"scriptError"`
}

func walk(tb testing.TB, e browser.Engine, html, script string) walkResult {
	tb.Helper()
	var res walkResult
	load(tb, e, html, browser.WithCaseScript(dump.WalkJS), &res, script, dump.StyleProperties)
	return res
}

func TestWebDriverLaunch(t *testing.T) {
	e := webkit(t)
	t.Logf("launch %v, version %s, route %s, display %s, window chrome %v", wdLaunch, e.Version(), e.Route(), e.display, e.chrome)
	if !regexp.MustCompile(`^2\.\d+\.\d+$`).MatchString(e.Version()) {
		t.Errorf("Version() = %q, want a WebKitGTK 2.x.y", e.Version())
	}
	if e.Name() != browser.WebKit {
		t.Errorf("Name() = %q", e.Name())
	}
	if want := "webdriver " + browser.SystemWebKitWebDriver + " + MiniBrowser (WebKitGTK)"; e.Route() != want {
		t.Errorf("Route() = %q, want %q", e.Route(), want)
	}
	if os.Getenv("DISPLAY") == "" && e.xvfb == nil {
		t.Errorf("DISPLAY is unset but the engine owns no Xvfb")
	}
	if os.Getenv("DISPLAY") != "" {
		t.Logf("DISPLAY=%s was set; the engine used it", os.Getenv("DISPLAY"))
	}
}

func TestWebDriverViewport(t *testing.T) {
	e := webkit(t)
	for _, html := range []string{"", "<!doctype html>", "<!doctype html><body style='margin:0'><div style='height:10px'></div>"} {
		var v []float64
		load(t, e, html, "() => [innerWidth, innerHeight, document.documentElement.clientWidth, devicePixelRatio]", &v)
		if len(v) != 4 || v[0] != 800 || v[1] != 600 {
			t.Errorf("Load(%q): innerWidth/innerHeight = %v, want 800x600", html, v)
		}
		if len(v) == 4 && v[2] != 800 {
			t.Errorf("Load(%q): clientWidth = %v, want 800 (no scrollbar)", html, v[2])
		}
		t.Logf("Load(%q): inner %vx%v, clientWidth %v, devicePixelRatio %v", html, v[0], v[1], v[2], v[3])
	}
}

func TestWebDriverWalk(t *testing.T) {
	e := webkit(t)
	res := walk(t, e, `<div style="width:100px;height:50px"></div>`, "")
	if res.ScriptError != "" || res.Dump == nil {
		t.Fatalf("walk = %+v, want a dump", res)
	}
	d := res.Dump
	if d.Viewport != dump.Viewport {
		t.Errorf("viewport %+v, want %+v", d.Viewport, dump.Viewport)
	}
	var tags []string
	var div *dump.Node
	for i := range d.Nodes {
		tags = append(tags, d.Nodes[i].Tag)
		if d.Nodes[i].Tag == "DIV" {
			div = &d.Nodes[i]
		}
	}
	if got := strings.Join(tags, " "); got != "HTML HEAD BODY DIV" {
		t.Errorf("tags = %s, want HTML HEAD BODY DIV", got)
	}
	if div == nil {
		t.Fatal("no DIV node")
	}
	if div.Bounding.W != 100 || div.Bounding.H != 50 || div.Bounding.X != 8 || div.Bounding.Y != 8 {
		t.Errorf("DIV bounding = %+v, want 100x50 at (8,8)", div.Bounding)
	}
	if len(div.Style) != len(dump.StyleProperties) || div.Style["width"] != "100px" || div.Style["display"] != "block" {
		t.Errorf("DIV style = %v", div.Style)
	}
	if d.Overflowed {
		t.Errorf("overflowed = true for a small case")
	}

	// The shared geometry path, as the server calls it, is
	// TestWebDriverGeometry in package oracle.
}

func TestWebDriverCaseScript(t *testing.T) {
	e := webkit(t)
	res := walk(t, e, "<div id=a></div>", "document.getElementById('a').appendChild(document.createElement('b'));")
	if res.Dump == nil || res.Dump.Nodes[len(res.Dump.Nodes)-1].Tag != "B" {
		t.Errorf("script's mutation not in the dump: %+v", res)
	}
	res = walk(t, e, "<div></div>", "throw new RangeError('nope')")
	if res.ScriptError != "RangeError: nope" || res.Dump != nil {
		t.Errorf("throwing script: %+v, want scriptError RangeError: nope", res)
	}
}

func TestWebDriverFnException(t *testing.T) {
	e := webkit(t)
	_, err := e.Load(caseCtx(t), "<p>x</p>", "() => { throw new TypeError('boom'); }")
	if err == nil || !strings.Contains(err.Error(), "javascript error") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("fn throwing: err = %v, want a javascript error with the message", err)
	}
	t.Logf("error: %v", err)
	_, err = e.Load(caseCtx(t), "<p>x</p>", "() => Promise.reject(new Error('rejected'))")
	if err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("fn rejecting: err = %v", err)
	}
	_, err = e.Load(caseCtx(t), "<p>x</p>", "this is not a function")
	if err == nil {
		t.Fatal("a syntax error in fn gave no error")
	}
	var s string
	load(t, e, "<p>after</p>", "() => document.body.textContent", &s)
	if s != "after" {
		t.Errorf("Load after errors: %q", s)
	}
}

func TestWebDriverArgsAndResults(t *testing.T) {
	e := webkit(t)
	var v map[string]any
	load(t, e, "", "(a, b, c) => ({a, b, c, u: undefined, n: null})", &v, "s", 2.5, []string{"x", "y"})
	if v["a"] != "s" || v["b"] != 2.5 || fmt.Sprint(v["c"]) != "[x y]" || v["n"] != nil {
		t.Errorf("args round trip: %v", v)
	}
	raw, err := e.Load(caseCtx(t), "", "() => undefined")
	if err != nil || string(raw) != "null" {
		t.Errorf("undefined result: %s, %v", raw, err)
	}
	var later float64
	load(t, e, "", "() => new Promise(r => setTimeout(() => r(42), 20))", &later)
	if later != 42 {
		t.Errorf("awaited promise = %v", later)
	}
	// Load waits for the load event (a data: image is a subresource), and its handlers.
	var loaded []any
	load(t, e, `<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" onload="window.imgLoaded=true">
		<script>addEventListener('load', () => { window.loadRan = true; })</script>`,
		"() => [document.readyState, !!window.imgLoaded, !!window.loadRan]", &loaded)
	if fmt.Sprint(loaded) != "[complete true true]" {
		t.Errorf("after load: %v, want [complete true true]", loaded)
	}
}

func TestWebDriverNavigation(t *testing.T) {
	e := webkit(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><p id=served>served</p>")
	}))
	defer srv.Close()
	var href string
	for _, away := range []string{
		"<script>location = 'about:blank#x'</script>",
		"<script>location = '" + srv.URL + "/away'</script>",
		"<script>setTimeout(() => { location = '" + srv.URL + "/later'; }, 0)</script>",
		"<script>history.pushState(null, '', '#pushed')</script>",
	} {
		// The navigating case itself may fail (its document unloads mid-call); the
		// next Load must work on a fresh about:blank regardless.
		for _, fn := range []string{"() => location.href", "() => new Promise(r => setTimeout(() => r(location.href), 200))"} {
			_, err := e.Load(caseCtx(t), away, fn)
			t.Logf("case %.50q, fn %.30q: err %v", away, fn, err)
			load(t, e, "<p>back</p>", "() => location.href + ' ' + document.body.textContent", &href)
			if href != "about:blank back" {
				t.Errorf("after %q: next Load saw %q, want about:blank back", away, href)
			}
		}
	}
}

func TestWebDriverVisit(t *testing.T) {
	e := webkit(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><script>window.trace = ['recorder first'];</script><p id=t>trace page</p>")
	}))
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/trace/1"
	raw, err := e.Visit(caseCtx(t), url, "(x) => ({x, origin: location.origin, secure: isSecureContext, trace: window.trace, text: document.getElementById('t').textContent})", 7)
	if err != nil {
		t.Fatalf("Visit: %v", err)
	}
	var v struct {
		X      int
		Origin string
		Secure bool
		Trace  []string
		Text   string
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.X != 7 || !strings.HasPrefix(v.Origin, "http://localhost:") || !v.Secure || len(v.Trace) != 1 || v.Text != "trace page" {
		t.Errorf("Visit result %s", raw)
	}
	var href string
	load(t, e, "<p>x</p>", "() => location.href", &href)
	if href != "about:blank" {
		t.Errorf("Load after Visit on %q", href)
	}
}

func TestWebDriverDialogs(t *testing.T) {
	e := webkit(t)
	var v []any
	load(t, e, "<script>alert('in the document')</script><p>after alert</p>",
		"() => [document.body.textContent, confirm('in fn'), prompt('in fn too'), 'done']", &v)
	if fmt.Sprint(v) != "[after alert false <nil> done]" {
		t.Errorf("dialog case = %v, want [after alert false <nil> done] (dialogs dismissed, script goes on)", v)
	}
	// A dialog from a timer after the call returned must not wedge the next call.
	load(t, e, "<script>setTimeout(() => alert('late'), 0)</script>", "() => 1", new(float64))
	// Sleeps here, not polls: the timers must run between calls, and a poll is a
	// call. Polling the session's Get Alert Text (no script) never saw one of these
	// dialogs open between calls within 10 s, so there is no event to wait for.
	time.Sleep(50 * time.Millisecond)
	res := walk(t, e, "<div style='width:10px;height:10px'></div>", "alert('in the case script')")
	if res.Dump == nil || len(res.Dump.Nodes) != 4 {
		t.Errorf("walk after dialogs: %+v", res)
	}
	// A real dialog between calls: the session's "dismiss" behavior handles it.
	load(t, e, "<script>setTimeout(() => { window.afterAlert = alert('between calls') === undefined; }, 30)</script>", "() => 1", new(float64))
	// A sleep on purpose: the dialog must open between calls, and nothing was found
	// to show it open without sending a command (polling Get Alert Text never saw
	// it within 10 s), which would put the dialog in that command instead.
	time.Sleep(150 * time.Millisecond)
	var after bool
	load(t, e, "", "() => window.afterAlert", &after)
	if !after {
		t.Errorf("a real dialog between calls did not return as dismissed")
	}
	// A real dialog during a call (the page's own alert, which the call's stand-in
	// hides, reached on purpose): the driver cuts the command short and the result
	// is collected by a second command.
	var v2 []any
	load(t, e, "<p>native</p>", "() => { window."+oracleNativesProp+".alert.value.call(window, 'real'); return [document.body.textContent, 'collected']; }", &v2)
	if fmt.Sprint(v2) != "[native collected]" {
		t.Errorf("native dialog mid-call: %v", v2)
	}
	// Between calls the page's own functions are back.
	load(t, e, "<p>fine</p>", "() => { setTimeout(() => { window.alertBetween = String(alert); }, 20); return 1; }", new(float64))
	// A bare Execute Script, not a call: it installs no stand-ins the timer could see.
	pollUntil(t, "the timer between calls to run", func(ctx context.Context) bool {
		raw, err := e.session(ctx, http.MethodPost, "/execute/sync", map[string]any{"script": "return typeof window.alertBetween;", "args": []any{}})
		return err == nil && string(raw) == `"string"`
	})
	var s string
	load(t, e, "", "() => window.alertBetween + ' / ' + String(alert)", &s)
	if !strings.Contains(s, "[native code]") || !strings.HasSuffix(s, "/ function alert() {}") {
		t.Errorf("alert between calls / during a call = %q, want the page's own / the stand-in", s)
	}
}

func TestWebDriverTimeout(t *testing.T) {
	e := webkit(t)
	// A promise that never settles: WebDriver's script timeout, set from ctx, ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Load(ctx, "<p>x</p>", "() => new Promise(() => {})")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("never-settling case: err = %v, want a timeout", err)
	}
	t.Logf("never-settling: %v after %v", err, time.Since(start))
	var s string
	load(t, e, "<p>next</p>", "() => document.body.textContent", &s)
	if s != "next" {
		t.Errorf("after a timeout: %q", s)
	}

	// A busy loop wedges the web process; past the deadline the engine restarts.
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	start = time.Now()
	_, err = e.Load(ctx2, "<p>x</p>", "() => { for (;;) {} }")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("busy loop: err = %v, want a timeout", err)
	}
	t.Logf("busy loop: %v after %v (including the restart)", err, time.Since(start))
	var v []float64
	load(t, e, "", "() => [innerWidth, innerHeight]", &v)
	if fmt.Sprint(v) != "[800 600]" {
		t.Errorf("after restart: viewport %v", v)
	}

	// An already-expired ctx fails fast.
	ctx3, cancel3 := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel3()
	<-ctx3.Done()
	if _, err := e.Load(ctx3, "", "() => 1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired ctx: err = %v", err)
	}
	load(t, e, "<p>next</p>", "() => document.body.textContent", &s)
}

func TestWebDriverClose(t *testing.T) {
	skipWithoutWebKit(t)
	webkit(t) // the shared engine stays up: its processes must be untouched
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	eng, err := Launch(ctx, Options{StartXvfb: true}, testutil.Logger(t))
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	e := eng.(*webDriverEngine)
	var s string
	load(t, e, "<p>x</p>", "() => document.body.textContent", &s)
	driverPid := e.proc.group.PID()
	procs := routetest.GroupProcs(driverPid)
	xvfbPid := e.xvfb.Pid()
	display := e.xvfb.Display
	var names []string
	for _, c := range procs {
		names = append(names, c)
	}
	t.Logf("driver group %d: %v; Xvfb %d on %s", driverPid, names, xvfbPid, display)
	if !strings.Contains(strings.Join(names, " "), "MiniBrowser") {
		t.Errorf("MiniBrowser not in the driver's process group: %v", procs)
	}
	if !routetest.Alive(xvfbPid) {
		t.Errorf("Xvfb %d not running", xvfbPid)
	}
	sharedProcs := routetest.GroupProcs(wdShared.proc.group.PID())

	start := time.Now()
	if err := e.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(start))
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// SIGKILL is sent to the whole group before Close returns, but a process that is
	// the init of a PID namespace (WebKitGTK's bwrap) only finishes exiting once the
	// kernel has torn its namespace down: poll for that, briefly.
	deadline := time.Now().Add(5 * time.Second)
	for pid, comm := range procs {
		for routetest.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if routetest.Alive(pid) {
			t.Errorf("%s (pid %d) outlived Close by 5s", comm, pid)
		}
	}
	t.Logf("the group's processes were gone %v after Close began", time.Since(start))
	if routetest.Alive(xvfbPid) {
		t.Errorf("Xvfb (pid %d) outlived Close", xvfbPid)
	}
	n := strings.TrimPrefix(display, ":")
	for _, p := range []string{"/tmp/.X11-unix/X" + n, "/tmp/.X" + n + "-lock"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	if _, err := e.Load(caseCtx(t), "", "() => 1"); err == nil {
		t.Error("Load after Close succeeded")
	}
	for pid, comm := range sharedProcs {
		if !routetest.Alive(pid) {
			t.Errorf("closing one engine killed the other's %s (pid %d)", comm, pid)
		}
	}
}

func BenchmarkWebDriverLoad(b *testing.B) {
	e := webkit(b)
	html := `<!doctype html><div style="display:flex;width:300px"><p style="flex:1">a b c</p><span>x</span></div>`
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		raw, err := e.Load(ctx, html, browser.WithCaseScript(dump.WalkJS), "", dump.StyleProperties)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 && !strings.Contains(string(raw), `"SPAN"`) {
			b.Fatalf("walk result %.200s", raw)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/load")
}

// pollUntil calls ok every few milliseconds until it holds, failing the test after
// 10 s: what a test waits for in the page, instead of sleeping a guess.
func pollUntil(t *testing.T, what string, ok func(ctx context.Context) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		done := ok(ctx)
		cancel()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

// A restart sets the version while ping and the store read it: under
// -race (make test) this reported a data race on webDriverEngine.version before it
// was guarded by mu. Without -race it checks the version survives a restart.
func TestWebDriverVersionReadDuringRestart(t *testing.T) {
	e := webkit(t)
	want := e.Version()
	stop, done := make(chan struct{}), make(chan struct{})
	reads := 0
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if v := e.Version(); v != want {
				t.Errorf("Version() = %q during a restart, want %q", v, want)
			}
			reads++
			time.Sleep(time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := e.restartWith(ctx)
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if reads == 0 {
		t.Fatal("no Version() call ran during the restart")
	}
	if e.Version() != want {
		t.Errorf("after restart: Version() = %q, want %q", e.Version(), want)
	}
}

// A unit test of the restart's error (no browser: the driver's binary is not there):
// it names the engine once.
func TestWebDriverRestartErrorNamesTheEngineOnce(t *testing.T) {
	e := &webDriverEngine{opts: Options{DriverPath: filepath.Join(t.TempDir(), "no-such-driver")}, log: testutil.Logger(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := e.ready(ctx)
	if err == nil {
		t.Fatal("a restart with no driver succeeded")
	}
	if !strings.HasPrefix(err.Error(), "webkit: restart: start ") || strings.Count(err.Error(), "webkit:") != 1 {
		t.Errorf("the engine is not named once, at the start: %s", err)
	}
}
