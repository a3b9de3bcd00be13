package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Debian's WebKitGTK route (../shared/ENGINES.md): WebKitWebDriver from
// webkit2gtk-driver, driving the MiniBrowser of libwebkit2gtk-4.1-0.
const (
	DefaultWebKitWebDriver = "/usr/bin/WebKitWebDriver"
	DefaultMiniBrowser     = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
)

// WebDriverOptions chooses the WebKitGTK build, its launch profile and its display.
type WebDriverOptions struct {
	// DriverPath is the WebDriver server; default DefaultWebKitWebDriver.
	DriverPath string
	// BrowserPath is the browser the driver starts; default DefaultMiniBrowser.
	BrowserPath string
	// BrowserArgs are the launch profile's extra browser arguments, after --automation.
	BrowserArgs []string
	// Display is the X display for the browser. Empty means $DISPLAY, and when that
	// is unset too, an Xvfb the engine starts and owns.
	Display string
	// StartXvfb makes the engine start and own an Xvfb even when a display is set.
	StartXvfb bool
	// XvfbPath is the Xvfb binary; default DefaultXvfb.
	XvfbPath string
	// Capabilities are extra W3C capabilities of every session (alwaysMatch).
	Capabilities map[string]any
	// Env is KEY=VALUE added to the driver's and browser's environment.
	Env []string
	// RemoteURL, when not "", is a running W3C WebDriver endpoint (a driver on another
	// host, a Grid) to open sessions on, instead of starting a driver here
	// (remote_webdriver.go); DriverPath, Display and Env are then unused.
	RemoteURL string
}

// webDriverEngine is WebKitGTK over W3C WebDriver classic (HTTP JSON): one driver
// process, one session, one window, reused for the process lifetime.
//
// Load writes each case into the same about:blank document (document.open/write/close,
// Playwright's setContent semantics) and evaluates the function in the same Execute
// Script call, one HTTP round trip per case. A case that outlives its deadline
// (while(true){} wedges the web process, which no WebDriver command can interrupt)
// costs a restart of the driver and browser, about as long as the launch.
type webDriverEngine struct {
	opts    WebDriverOptions
	route   string
	version string
	log     zerolog.Logger
	client  *http.Client

	callMu sync.Mutex // one Load/Visit at a time

	// mu guards proc (and its session), closed, xvfb and display: a restart replaces
	// them while Close and Health run beside it.
	mu      sync.Mutex
	proc    *wdProc
	closed  bool
	xvfb    *Xvfb // nil when the display is not ours
	display string

	health Health // guarded by mu

	scriptTimeout time.Duration // as last set on the session
	chrome        [2]int        // window size minus viewport size, as measured at launch
	callSeq       uint64
	closeOnce     sync.Once
}

// wdProc is one driver process and its session.
type wdProc struct {
	cmd      *exec.Cmd
	exited   chan struct{}
	watchdog *exec.Cmd
	watchW   *os.File // the watchdog kills the driver's group when this closes
	base     string   // http://127.0.0.1:port
	session  string   // guarded by the engine's mu
	out      *tailLog
	// endRemote, for a remote endpoint (cmd nil), deletes the session (kill).
	endRemote func()
}

// LaunchWebDriver starts WebKitWebDriver (and an Xvfb when there is no display), opens
// one session whose window's viewport is verified to be exactly the spec's 800x600,
// and leaves it on about:blank.
func LaunchWebDriver(ctx context.Context, opts WebDriverOptions, log zerolog.Logger) (Engine, error) {
	start := time.Now()
	if opts.DriverPath == "" {
		opts.DriverPath = DefaultWebKitWebDriver
	}
	if opts.BrowserPath == "" {
		opts.BrowserPath = DefaultMiniBrowser
	}
	for _, p := range []string{opts.DriverPath, opts.BrowserPath} {
		if _, err := os.Stat(p); err != nil && opts.RemoteURL == "" {
			return nil, fmt.Errorf("webkit: %w (install webkit2gtk-driver)", err)
		}
	}
	log = log.With().Str("engine", WebKit).Logger()
	e := &webDriverEngine{
		opts:  opts,
		route: fmt.Sprintf("webdriver %s + %s (WebKitGTK)", opts.DriverPath, filepath.Base(opts.BrowserPath)),
		log:   log,
		client: &http.Client{Transport: &http.Transport{
			Proxy:               nil, // the driver is on loopback; never through a proxy
			MaxIdleConnsPerHost: 4,
			DisableCompression:  true,
			IdleConnTimeout:     5 * time.Minute,
		}},
	}
	e.display = opts.Display
	if e.display == "" {
		e.display = os.Getenv("DISPLAY")
	}
	if opts.RemoteURL != "" { // remote_webdriver.go
		e.route, e.display = remoteWebDriverRoute(opts), "remote"
	} else if e.display == "" || opts.StartXvfb {
		x, err := StartXvfb(ctx, opts.XvfbPath, log)
		if err != nil {
			return nil, fmt.Errorf("webkit: no DISPLAY and %w", err)
		}
		e.xvfb, e.display = x, x.Display
	}
	if err := e.start(ctx); err != nil {
		e.Close()
		return nil, err
	}
	log.Info().Str("version", e.version).Str("route", e.route).Str("display", e.display).
		Int("chrome_w", e.chrome[0]).Int("chrome_h", e.chrome[1]).
		Dur("launch", time.Since(start)).Msg("engine launched")
	return e, nil
}

func (e *webDriverEngine) Name() string    { return WebKit }
func (e *webDriverEngine) Version() string { return e.version }
func (e *webDriverEngine) Route() string   { return e.route }

// start launches a driver and session and fixes the viewport; the engine's version is
// the session's browserVersion. Used at launch and to recover a wedged browser.
func (e *webDriverEngine) start(ctx context.Context) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		p, err := e.startDriver(ctx)
		if err != nil {
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			e.log.Debug().Err(err).Msg("driver did not come up; retrying on another port")
			continue
		}
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			p.kill()
			return errors.New("webkit: engine closed")
		}
		e.proc = p
		e.mu.Unlock()
		version, err := e.newSession(ctx, p)
		if err != nil {
			return fmt.Errorf("webkit: new session: %w (driver output: %s)", err, p.out.tail())
		}
		if e.version != "" && version != e.version {
			return fmt.Errorf("webkit: %w from %s to %s on restart", ErrVersionChanged, e.version, version)
		}
		e.version = version
		e.scriptTimeout = 30 * time.Second // WebDriver's default
		if err := e.navigateBlank(ctx); err != nil {
			return fmt.Errorf("webkit: navigate to about:blank: %w", err)
		}
		if err := e.fixViewport(ctx); err != nil {
			return err
		}
		return nil
	}
	return fmt.Errorf("webkit: start %s: %w", e.opts.DriverPath, lastErr)
}

// startDriver runs the driver on a free loopback port, in its own process group, and
// waits until /status says ready.
func (e *webDriverEngine) startDriver(ctx context.Context) (*wdProc, error) {
	if e.opts.RemoteURL != "" {
		return e.remoteDriver(ctx) // remote_webdriver.go
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	out := newTailLog(e.log.With().Str("proc", "webkitwebdriver").Logger())
	cmd := exec.Command(e.opts.DriverPath, "--port="+strconv.Itoa(port), "--host=127.0.0.1")
	cmd.Env = e.driverEnv()
	cmd.Stdout = out // never the oracle's stdout: that is the protocol channel
	cmd.Stderr = out
	// The driver, MiniBrowser and its web and network processes run as the browser
	// user (sandbox.go); WebKitGTK's bubblewrap sandbox then confines the web process.
	cmd.SysProcAttr = browserUser().sysProcAttr(&syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL})
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &wdProc{cmd: cmd, exited: make(chan struct{}), base: "http://127.0.0.1:" + strconv.Itoa(port), out: out}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	if err := p.startWatchdog(); err != nil {
		p.kill()
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ready, err := p.status(ctx, e.client)
		if ready {
			e.log.Debug().Int("pid", cmd.Process.Pid).Int("port", port).Msg("driver ready")
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited: %s", e.opts.DriverPath, out.tail())
		case <-ctx.Done():
			p.kill()
			return nil, ctx.Err()
		case <-time.After(15 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("driver not ready within 20s (last: %v): %s", err, out.tail())
		}
	}
}

// driverEnv is the process environment with the browser's display; the oracle's own
// environment is never changed.
func (e *webDriverEngine) driverEnv() []string {
	e.mu.Lock()
	ownX, display, authority := e.xvfb != nil, e.display, ""
	if ownX {
		authority = e.xvfb.Authority
	}
	e.mu.Unlock()
	env := make([]string, 0, len(os.Environ())+3)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY":
			continue
		case "WAYLAND_DISPLAY", "GDK_BACKEND":
			if ownX {
				continue // our Xvfb, not a compositor GTK would otherwise prefer
			}
		}
		env = append(env, kv)
	}
	env = withEnv(env, e.opts.Env)
	env = withEnv(env, browserUser().env())
	env = append(env, "DISPLAY="+display)
	if ownX {
		env = withEnv(env, []string{"GDK_BACKEND=x11", "XAUTHORITY=" + authority})
	}
	if os.Getenv("NO_AT_BRIDGE") == "" {
		env = append(env, "NO_AT_BRIDGE=1") // no accessibility bus to wait for
	}
	return env
}

// startWatchdog puts a shell into the driver's process group that kills the group
// when its stdin (a pipe only this process holds) reaches EOF, that is when the oracle
// dies by any means. Pdeathsig alone ends only the driver: MiniBrowser, its child,
// would be reparented and live on.
func (p *wdProc) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	wd := exec.Command("/bin/sh", "-c", "read x; kill -KILL 0")
	wd.Stdin = r
	// As the browser user, like the group it kills: no root process in that group.
	wd.SysProcAttr = browserUser().sysProcAttr(&syscall.SysProcAttr{Setpgid: true, Pgid: p.cmd.Process.Pid})
	err = wd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return err
	}
	go func() { _ = wd.Wait() }()
	p.watchdog, p.watchW = wd, w
	return nil
}

// kill ends the driver's whole process group (driver, MiniBrowser, its web and
// network processes, the watchdog) and waits for the driver to be reaped.
func (p *wdProc) kill() {
	if p.cmd == nil { // a remote endpoint: end the session, nothing to kill here
		if p.endRemote != nil {
			p.endRemote()
		}
		return
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
	if p.watchW != nil {
		p.watchW.Close()
	}
}

func (p *wdProc) status(ctx context.Context, c *http.Client) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/status", nil)
	if err != nil {
		return false, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var s struct {
		Value struct {
			Ready bool `json:"ready"`
		} `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return false, err
	}
	return s.Value.Ready, nil
}

// newSession opens the session and returns its browserVersion.
func (e *webDriverEngine) newSession(ctx context.Context, p *wdProc) (string, error) {
	// --enable-sandbox: WebKitGTK's bubblewrap sandbox for the web process, which
	// MiniBrowser leaves off unless asked (docs/sandbox.md).
	args := append([]string{"--automation", "--enable-sandbox"}, e.opts.BrowserArgs...)
	caps := map[string]any{
		"webkitgtk:browserOptions": map[string]any{"binary": e.opts.BrowserPath, "args": args},
		"unhandledPromptBehavior":  "dismiss",
		"pageLoadStrategy":         "normal",
	}
	maps.Copy(caps, e.opts.Capabilities)
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": caps}}
	raw, err := e.do(ctx, p, http.MethodPost, "/session", body)
	var wdErr *webDriverError
	if errors.As(err, &wdErr) && wdErr.Code == "invalid argument" {
		// A driver that rejects the prompt capability: dialogs are then handled by
		// dismissing on "unexpected alert open".
		e.log.Warn().Err(err).Msg("driver rejected unhandledPromptBehavior; retrying without it")
		delete(caps, "unhandledPromptBehavior")
		raw, err = e.do(ctx, p, http.MethodPost, "/session", body)
	}
	if err != nil {
		return "", err
	}
	var s struct {
		SessionID    string `json:"sessionId"`
		Capabilities struct {
			BrowserName    string `json:"browserName"`
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("malformed new-session response: %v", err)
	}
	if s.SessionID == "" {
		return "", fmt.Errorf("new-session response has no sessionId: %s", raw)
	}
	e.mu.Lock()
	p.session = s.SessionID
	e.mu.Unlock()
	if s.Capabilities.BrowserVersion == "" {
		return "", fmt.Errorf("session capabilities carry no browserVersion: %s", raw)
	}
	e.log.Debug().Str("session", s.SessionID).Str("browser", s.Capabilities.BrowserName).
		Str("version", s.Capabilities.BrowserVersion).Msg("session created")
	return s.Capabilities.BrowserVersion, nil
}

// fixViewport sets the window so the viewport is exactly the spec's, correcting by the
// measured difference (MiniBrowser's window chrome, 38 px of height in ENGINES.md),
// and fails when it cannot verify innerWidth/innerHeight.
func (e *webDriverEngine) fixViewport(ctx context.Context) error {
	want := [2]int{int(viewportWidth), int(viewportHeight)}
	win := want
	var inner [2]int
	for i := 0; i < 5; i++ {
		if _, err := e.session(ctx, http.MethodPost, "/window/rect", map[string]int{"width": win[0], "height": win[1]}); err != nil {
			return fmt.Errorf("webkit: set window rect %dx%d: %w", win[0], win[1], err)
		}
		var err error
		for try := 0; try < 10; try++ { // a resize may land after the command returns
			if inner, err = e.innerSize(ctx); err != nil {
				return fmt.Errorf("webkit: measure viewport: %w", err)
			}
			if inner == want || try == 9 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		e.log.Debug().Int("window_w", win[0]).Int("window_h", win[1]).
			Int("inner_w", inner[0]).Int("inner_h", inner[1]).Msg("viewport measured")
		if inner == want {
			e.chrome = [2]int{win[0] - want[0], win[1] - want[1]}
			return nil
		}
		win[0] += want[0] - inner[0]
		win[1] += want[1] - inner[1]
		if win[0] < want[0] || win[1] < want[1] || win[0] > 4*want[0] || win[1] > 4*want[1] {
			break
		}
	}
	return fmt.Errorf("webkit: cannot reach a %dx%d viewport: window %dx%d gives innerWidth/innerHeight %dx%d",
		want[0], want[1], win[0], win[1], inner[0], inner[1])
}

func (e *webDriverEngine) innerSize(ctx context.Context) ([2]int, error) {
	raw, err := e.session(ctx, http.MethodPost, "/execute/sync",
		map[string]any{"script": "return [window.innerWidth, window.innerHeight];", "args": []any{}})
	if err != nil {
		return [2]int{}, err
	}
	var v [2]int
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("innerWidth/innerHeight: %v (%s)", err, raw)
	}
	return v, nil
}

func (e *webDriverEngine) navigateBlank(ctx context.Context) error {
	_, err := e.session(ctx, http.MethodPost, "/url", map[string]string{"url": "about:blank"})
	return err
}

// oracleCallProp is the window property holding the pending call, so that a call whose
// command a dialog cut short (WebKitWebDriver dismisses it and answers null while the
// script goes on) can be collected by a second command. Non-enumerable, and replaced by
// each call rather than removed, so no property appears or vanishes mid-case.
// oracleNativesProp keeps the page's own dialog functions (see dialogPrelude).
const (
	oracleCallProp    = "__layoutOracleCall"
	oracleNativesProp = "__layoutOracleNatives"
)

// dialogPrelude replaces alert, confirm and prompt, for the duration of the call, with
// functions that answer as a dismissed dialog does (undefined, false, null): what
// Playwright does with no dialog handler, and what WebDriver's "dismiss" prompt
// behavior answers too. Real dialogs are not used during a call because WebKitWebDriver
// answers the pending command with null when one opens, and a dialog opening while a
// second command awaits the same call was seen to hang that command until its
// deadline. A dialog from a timer between calls is still a real one, which the
// session's unhandledPromptBehavior "dismiss" takes care of.
const dialogPrelude = `const natives = Object.getOwnPropertyDescriptor(window, '` + oracleNativesProp + `') ? window.` + oracleNativesProp + ` : {};
if (!Object.getOwnPropertyDescriptor(window, '` + oracleNativesProp + `')) {
  for (const n of ['alert', 'confirm', 'prompt']) natives[n] = Object.getOwnPropertyDescriptor(window, n) || null;
  Object.defineProperty(window, '` + oracleNativesProp + `', {value: natives, configurable: true, writable: true, enumerable: false});
}
const dismissed = {alert: function alert() {}, confirm: function confirm() { return false; }, prompt: function prompt() { return null; }};
for (const n in dismissed) {
  Object.defineProperty(window, n, {value: dismissed[n], configurable: true, writable: true, enumerable: natives[n] ? natives[n].enumerable : true});
}
const restore = () => {
  for (const n in dismissed) {
    if (natives[n]) Object.defineProperty(window, n, natives[n]); else delete window[n];
  }
};
`

// repairPrelude captures, before any of the case's script runs, what WebKitWebDriver's
// own in-page code (WebAutomationSessionProxy.js, in the page's world) uses to send the
// answer back after the call's promise settles: JSON.stringify, which it looks up at
// that moment, and the Promise machinery of its race/finally chain. repair() puts them
// back and says whether that worked: a case that replaced them beyond repair (a
// non-configurable window.JSON) gets a clear error, never the page's serialization of
// the answer. The walk's own answer does not depend on this: it is JSON text made by
// the case program with built-ins captured before the case ran.
const repairPrelude = `const pristine = {O: Object, dp: Object.defineProperty, gopd: Object.getOwnPropertyDescriptor, create: Object.create,
  J: JSON, stringify: JSON.stringify, P: Promise, PP: Promise.prototype};
pristine.then = pristine.PP.then; pristine.fin = pristine.PP.finally;
pristine.species = pristine.gopd(Promise, Symbol.species);
const unrepairable = 'layout oracle: the case replaced JSON.stringify or Promise beyond repair; WebDriver cannot return the answer';
const repair = () => {
  const desc = (v) => { const d = pristine.create(null); d.value = v; d.writable = true; d.configurable = true; d.enumerable = false; return d; };
  const fix = (o, k, d) => { try { pristine.dp(o, k, d); } catch (e) {} };
  fix(window, 'JSON', desc(pristine.J));
  fix(window, 'Promise', desc(pristine.P));
  fix(pristine.J, 'stringify', desc(pristine.stringify));
  fix(pristine.PP, 'then', desc(pristine.then));
  fix(pristine.PP, 'finally', desc(pristine.fin));
  fix(pristine.PP, 'constructor', desc(pristine.P));
  if (pristine.species) fix(pristine.P, Symbol.species, pristine.species);
  const g = pristine.gopd;
  const same = (o, k, v) => { const d = g(o, k); return !!d && d.value === v; };
  return same(window, 'JSON', pristine.J) && same(pristine.J, 'stringify', pristine.stringify) &&
    same(pristine.PP, 'then', pristine.then) && same(pristine.PP, 'finally', pristine.fin) &&
    same(pristine.PP, 'constructor', pristine.P);
};
`

// callScript is the Execute Script body for one call, whose JSON text result
// WebDriver awaits. For a Visit it is CallExpression(fn) on arguments[1]; for a Load
// it is the case program (case.js) on arguments[1], CaseArg's value, which writes and
// settles the document itself. arguments[0] is the call's token. Everything here runs
// before any of the case's script (the program writes the document from a later
// task), so the callbacks below are attached through the page's pristine built-ins.
// On a page that has navigated away from about:blank, a Load returns a marker object
// instead of writing, and the Go side navigates back and retries.
//
// A LoadURL (caseURL) runs the case program too, on the page it navigated to, with no
// about:blank check: the program then settles the navigated document, not a written one.
func callScript(fn string, load bool) string { return callScriptFor(fn, load, false) }

func callScriptFor(fn string, load, caseURL bool) string {
	var b strings.Builder
	b.WriteString("const token = arguments[0], arg = arguments[1];\n")
	if load && !caseURL {
		b.WriteString("if (location.href !== 'about:blank') return {oracleNavigated: String(location.href)};\n")
	}
	b.WriteString("let settle;\nconst p = new Promise((res, rej) => { settle = [res, rej]; });\n")
	b.WriteString("Object.defineProperty(window, '" + oracleCallProp + "', {value: {token: token, p: p}, configurable: true, writable: true, enumerable: false});\n")
	b.WriteString(dialogPrelude)
	b.WriteString(repairPrelude)
	// restore runs after the case's script, which may have broken what it uses; the
	// page is reset after every case anyway, so a failed restore must not lose the answer.
	b.WriteString("const finish = (i, v) => { try { restore(); } catch (e) {} if (!repair()) { i = 1; v = new Error(unrepairable); } settle[i](v); };\n")
	if load || caseURL {
		b.WriteString("(" + caseJS + ")(arg)")
	} else {
		b.WriteString("(" + CallExpression(fn) + ")(arg)")
	}
	b.WriteString(".then(v => finish(0, v), e => finish(1, e));\nreturn p;")
	return b.String()
}

// collectScript awaits the pending call token after a dialog cut its command short.
const collectScript = `const token = arguments[0];
return new Promise((res, rej) => {
  const t0 = Date.now();
  const look = () => {
    const s = window.` + oracleCallProp + `;
    if (s && s.token === token) s.p.then(res, rej);
    else if (Date.now() - t0 > 2000) rej(new Error('layout oracle: the call was lost after a dialog'));
    else setTimeout(look, 5);
  };
  look();
});`

func (e *webDriverEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	return e.call(ctx, "", html, fn, args)
}

func (e *webDriverEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if url == "" {
		return nil, errors.New("webkit: visit: empty url")
	}
	return e.call(ctx, url, "", fn, args)
}

// LoadURL navigates to url (Navigate To waits for the load event, bounded by the
// session's page-load timeout), then evaluates the case program on that document.
func (e *webDriverEngine) LoadURL(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if url == "" {
		return nil, errors.New("webkit: load url: empty url")
	}
	return e.call(ctx, caseURLPrefix+url, "", fn, args)
}

// caseURLPrefix marks, inside call and callOnce, a url that LoadURL navigates to:
// the case program runs there instead of Visit's CallExpression.
const caseURLPrefix = "\x00case:"

// call runs one Load (url == "") or Visit under ctx, recovering the engine when the
// case wedged it.
func (e *webDriverEngine) call(ctx context.Context, url, html, fn string, args []any) (json.RawMessage, error) {
	if ctx.Err() != nil {
		return nil, &timeoutError{msg: "webkit: case timed out before it started: " + ctx.Err().Error()}
	}
	if err := e.ready(ctx); err != nil {
		return nil, err
	}
	raw, err := e.callOnce(ctx, url, html, fn, args)
	if err == nil {
		return raw, nil
	}
	if e.isClosed() {
		return nil, errors.New("webkit: engine closed")
	}
	var wdErr *webDriverError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// Whatever timed out (the script, a navigation into a page that never yields),
		// the web process may still be busy with it, and nothing can interrupt it.
		e.restart("the case timed out")
	case errors.As(err, &wdErr) && !wdErr.sessionLost():
		// The page's own failure (javascript error, script timeout, a navigation
		// during the call): the driver answered, the session is fine.
	case ctx.Err() != nil:
		// The command may still be running in the driver (a busy loop in the page)
		// and nothing can interrupt it: replace driver and browser.
		e.restart("the case outlived its deadline")
	default:
		e.restart(err.Error())
		// A session that was already gone never ran the command (a crashed or closed
		// window since the last case): after the restart, the case runs once more.
		if errors.As(err, &wdErr) && wdErr.Code == "invalid session id" && ctx.Err() == nil {
			if raw, rerr := e.callOnce(ctx, url, html, fn, args); rerr == nil {
				return raw, nil
			}
		}
	}
	return nil, err
}

func (e *webDriverEngine) callOnce(ctx context.Context, url, html, fn string, args []any) (json.RawMessage, error) {
	if args == nil {
		args = []any{}
	}
	if err := e.setTimeouts(ctx); err != nil {
		return nil, e.wrap(ctx, "set timeouts", err)
	}
	url, caseURL := strings.CutPrefix(url, caseURLPrefix)
	if url != "" {
		if err := e.replaceTo(ctx, url); err != nil {
			return nil, e.wrap(ctx, "navigate to "+url, err)
		}
	}
	e.callSeq++
	token := strconv.FormatUint(e.callSeq, 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var arg any = args
	if url == "" {
		arg = CaseArg(html, fn, args, settleBudget(ctx))
	} else if caseURL {
		arg = CaseURLArg(fn, args, settleBudget(ctx))
	}
	body := map[string]any{"script": callScriptFor(fn, url == "", caseURL), "args": []any{token, arg}}
	for attempt := 0; ; attempt++ {
		raw, err := e.execute(ctx, body)
		if err != nil {
			return nil, e.wrap(ctx, "execute script", err)
		}
		var navigated struct {
			Href *string `json:"oracleNavigated"`
		}
		switch {
		case len(raw) > 0 && raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, fmt.Errorf("webkit: malformed script result: %v", err)
			}
			return json.RawMessage(s), nil
		case string(raw) == "null":
			// A dialog opened during the call: the driver dismissed it and answered
			// null, while the script went on. Collect its result.
			e.log.Debug().Msg("a dialog interrupted the call; collecting its result")
			for i := 0; string(raw) == "null" && i < 50; i++ {
				t0 := time.Now()
				raw, err = e.execute(ctx, map[string]any{"script": collectScript, "args": []any{token}})
				e.log.Debug().Int("i", i).Str("raw", string(raw)).Err(err).Dur("took", time.Since(t0)).Msg("collect")
				if err != nil {
					return nil, e.wrap(ctx, "collect the result after a dialog", err)
				}
			}
			if len(raw) > 0 && raw[0] == '"' {
				var s string
				if err := json.Unmarshal(raw, &s); err == nil {
					return json.RawMessage(s), nil
				}
			}
			return nil, fmt.Errorf("webkit: dialogs kept interrupting the call (last result %s)", raw)
		case url == "" && attempt == 0 && json.Unmarshal(raw, &navigated) == nil && navigated.Href != nil:
			e.log.Debug().Str("href", *navigated.Href).Msg("page navigated away; back to about:blank")
			if err := e.navigateBlank(ctx); err != nil {
				return nil, e.wrap(ctx, "navigate back to about:blank", err)
			}
			continue
		default:
			return nil, fmt.Errorf("webkit: unexpected script result %.200s", raw)
		}
	}
}

// execute is Execute Script, dismissing a dialog that is somehow still open once.
func (e *webDriverEngine) execute(ctx context.Context, body any) (json.RawMessage, error) {
	raw, err := e.session(ctx, http.MethodPost, "/execute/sync", body)
	var wdErr *webDriverError
	if errors.As(err, &wdErr) && wdErr.Code == "unexpected alert open" {
		e.log.Debug().Err(err).Msg("dismissing a dialog")
		if _, derr := e.session(ctx, http.MethodPost, "/alert/dismiss", map[string]any{}); derr != nil {
			e.log.Warn().Err(derr).Msg("dismiss alert")
		}
		raw, err = e.session(ctx, http.MethodPost, "/execute/sync", body)
	}
	return raw, err
}

// setTimeouts keeps the session's script timeout just inside ctx's deadline, so that
// a never-settling case ends as WebDriver's "script timeout" (cheap) rather than as
// ctx's deadline (a restart). It is set only when the deadline moved a lot, not per call.
func (e *webDriverEngine) setTimeouts(ctx context.Context) error {
	remaining := DefaultDeadline
	if dl, ok := ctx.Deadline(); ok {
		remaining = time.Until(dl)
	}
	if remaining <= 0 {
		return context.DeadlineExceeded
	}
	margin := 50 * time.Millisecond
	if remaining/10 < margin {
		margin = remaining / 10
	}
	if e.scriptTimeout <= remaining-margin && e.scriptTimeout >= remaining*7/10 {
		return nil
	}
	want := (remaining - margin) * 9 / 10
	if want < time.Millisecond {
		want = time.Millisecond
	}
	ms := want.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if _, err := e.session(ctx, http.MethodPost, "/timeouts", map[string]int64{"script": ms, "pageLoad": ms}); err != nil {
		return err
	}
	e.scriptTimeout = time.Duration(ms) * time.Millisecond
	return nil
}

// wrap names what failed; a deadline reads as a timeout and matches
// context.DeadlineExceeded.
func (e *webDriverEngine) wrap(ctx context.Context, what string, err error) error {
	var wdErr *webDriverError
	if errors.As(err, &wdErr) {
		if wdErr.Code == "script timeout" || wdErr.Code == "timeout" {
			return &timeoutError{msg: fmt.Sprintf("webkit: %s: case timed out: %s", what, wdErr), cause: wdErr}
		}
		if wdErr.Code == "no such frame" {
			return fmt.Errorf("webkit: %s: the page navigated away during the call: %w", what, err)
		}
		return fmt.Errorf("webkit: %s: %w", what, err)
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return &timeoutError{msg: fmt.Sprintf("webkit: %s: case timed out (context deadline)", what)}
	}
	return fmt.Errorf("webkit: %s: %w", what, err)
}

// timeoutError is a case's timeout; errors.Is(err, context.DeadlineExceeded) holds.
// cause is WebDriver's "script timeout" error, nil when ctx's deadline hit first.
type timeoutError struct {
	msg   string
	cause error
}

func (t *timeoutError) Error() string        { return t.msg }
func (t *timeoutError) Unwrap() error        { return t.cause }
func (t *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// ready makes sure there is a live session, restarting after an earlier failure.
func (e *webDriverEngine) ready(ctx context.Context) error {
	e.mu.Lock()
	closed, p := e.closed, e.proc
	live := p != nil && p.session != ""
	e.mu.Unlock()
	if closed {
		return errors.New("webkit: engine closed")
	}
	if live {
		select {
		case <-p.exited:
		default:
			return nil
		}
	}
	e.log.Warn().Msg("no live webkit session; restarting the driver")
	if err := e.restartWith(ctx); err != nil {
		return fmt.Errorf("webkit: restart: %w", err)
	}
	return nil
}

// restart replaces driver and browser after a wedged or lost session. On failure the
// next call tries again.
func (e *webDriverEngine) restart(reason string) {
	if e.isClosed() {
		return
	}
	e.log.Warn().Str("reason", reason).Msg("restarting WebKitWebDriver and MiniBrowser")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.restartWith(ctx); err != nil {
		e.log.Error().Err(err).Msg("webkit restart failed; the next call retries")
	}
}

func (e *webDriverEngine) restartWith(ctx context.Context) (err error) {
	start := time.Now()
	e.mu.Lock()
	p := e.proc
	e.proc = nil
	e.health.State = StateRestarting
	e.health.Restarts++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.health.State = StateReady
		if err != nil {
			e.health.State, e.health.Reason = StateFailed, err.Error()
		}
		e.mu.Unlock()
	}()
	if p != nil {
		p.kill()
	}
	e.mu.Lock()
	oldX := e.xvfb
	e.mu.Unlock()
	if oldX != nil && oldX.exitedEarly() {
		e.log.Warn().Str("display", oldX.Display).Msg("our Xvfb died; starting another")
		oldX.Close()
		x, err := StartXvfb(ctx, e.opts.XvfbPath, e.log)
		if err != nil {
			return err
		}
		e.mu.Lock()
		if e.closed { // Close has run and ended the old one; it will not see this one
			e.mu.Unlock()
			x.Close()
			return errors.New("webkit: engine closed")
		}
		e.xvfb, e.display = x, x.Display
		e.mu.Unlock()
	}
	if err := e.start(ctx); err != nil {
		e.mu.Lock()
		p := e.proc
		e.proc = nil
		e.mu.Unlock()
		if p != nil {
			p.kill()
		}
		return err
	}
	e.log.Info().Dur("took", time.Since(start)).Msg("webkit restarted")
	return nil
}

// Reset navigates to a fresh about:blank: a new document and a new global object.
func (e *webDriverEngine) Reset(ctx context.Context) error {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if err := e.ready(ctx); err != nil {
		return err
	}
	if err := e.resetToBlank(ctx); err != nil {
		// A page that cannot even leave (its web process busy) is replaced whole.
		e.restart("reset to about:blank failed: " + err.Error())
		return e.wrap(ctx, "reset to about:blank", err)
	}
	if err := e.closeOtherWindows(ctx); err != nil {
		e.restart("could not close the windows a case opened: " + err.Error())
		return e.wrap(ctx, "close the case's windows", err)
	}
	raw, err := e.session(ctx, http.MethodPost, "/execute/sync", map[string]any{"script": "return " + freshCheckJS + ";", "args": []any{}})
	if err != nil {
		e.restart("the fresh page failed its check: " + err.Error())
		return e.wrap(ctx, "check the fresh page", err)
	}
	if string(raw) != `"`+firstHistoryLength+`"` {
		// The case added session-history entries; WebDriver classic cannot clear
		// them, and a new session has the first case's history.
		e.restart("the case left session history (history.length " + string(raw) + ")")
	}
	return nil
}

// Sandbox is WebKitGTK's sandbox as /proc shows it now: the processes under the
// driver (MiniBrowser, bubblewrap, the web and network processes).
func (e *webDriverEngine) Sandbox() SandboxState {
	e.mu.Lock()
	p := e.proc
	e.mu.Unlock()
	if p == nil || p.cmd == nil {
		return SandboxState{User: browserUser().Name, Reason: "no browser process to inspect (being restarted, or remote)"}
	}
	return inspectSandbox(WebKit, []int{p.cmd.Process.Pid})
}

// resetToBlank goes back to about:blank without adding a history entry: from
// about:blank by navigation (same URL: no new entry), from anywhere else by
// location.replace.
func (e *webDriverEngine) resetToBlank(ctx context.Context) error {
	raw, err := e.session(ctx, http.MethodGet, "/url", nil)
	if err == nil && string(raw) == `"about:blank"` {
		return e.navigateBlank(ctx)
	}
	if err := e.replaceTo(ctx, "about:blank"); err != nil {
		return e.navigateBlank(ctx) // adds an entry, which Reset's check catches
	}
	return nil
}

// replaceTo navigates to url replacing the current session-history entry
// (location.replace), and waits until the document at url has loaded: WebDriver's
// navigation adds an entry, and history.length would grow with every trace case.
func (e *webDriverEngine) replaceTo(ctx context.Context, url string) error {
	if _, err := e.execute(ctx, map[string]any{"script": "window.location.replace(arguments[0]);", "args": []any{url}}); err != nil {
		var wdErr *webDriverError
		if errors.As(err, &wdErr) && wdErr.sessionLost() || ctx.Err() != nil {
			return err
		}
		e.log.Debug().Err(err).Msg("replace navigation: the command was cut short; polling for the page")
	}
	for {
		raw, err := e.session(ctx, http.MethodPost, "/execute/sync",
			map[string]any{"script": "return [location.href, document.readyState];", "args": []any{}})
		var v [2]string
		if err == nil && json.Unmarshal(raw, &v) == nil && v[0] == url && v[1] == "complete" {
			return nil
		}
		var wdErr *webDriverError
		if errors.As(err, &wdErr) && wdErr.sessionLost() {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Prepare checks the session before a case (pool.go): a web process that died while
// idle ("session deleted because of page crash or hang") or a page that does not
// answer within probeTimeout costs a restart here, outside the case's deadline.
func (e *webDriverEngine) Prepare(ctx context.Context) error {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if err := e.ready(ctx); err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	_, err := e.session(pctx, http.MethodPost, "/execute/sync", map[string]any{"script": "return 1;", "args": []any{}})
	cancel()
	var wdErr *webDriverError
	if err == nil || (errors.As(err, &wdErr) && wdErr.Code == "unexpected alert open") {
		return nil
	}
	e.restart("idle page failed a check: " + err.Error())
	return nil
}

// windowHandles lists the session's windows.
func (e *webDriverEngine) windowHandles(ctx context.Context) ([]string, error) {
	raw, err := e.session(ctx, http.MethodGet, "/window/handles", nil)
	if err != nil {
		return nil, err
	}
	var hs []string
	if err := json.Unmarshal(raw, &hs); err != nil {
		return nil, fmt.Errorf("window handles: %v (%s)", err, raw)
	}
	return hs, nil
}

// closeOtherWindows closes every window but the session's current one: the popups
// and target=_blank windows a case opened (MiniBrowser blocks window.open without a
// user gesture by default; a launch profile or a future build may not).
func (e *webDriverEngine) closeOtherWindows(ctx context.Context) error {
	hs, err := e.windowHandles(ctx)
	if err != nil || len(hs) <= 1 {
		return err
	}
	raw, err := e.session(ctx, http.MethodGet, "/window", nil)
	if err != nil {
		return err
	}
	var main string
	if err := json.Unmarshal(raw, &main); err != nil {
		return fmt.Errorf("current window: %v (%s)", err, raw)
	}
	for _, h := range hs {
		if h == main {
			continue
		}
		if _, err := e.session(ctx, http.MethodPost, "/window", map[string]string{"handle": h}); err != nil {
			return err
		}
		if _, err := e.session(ctx, http.MethodDelete, "/window", nil); err != nil {
			return err
		}
	}
	_, err = e.session(ctx, http.MethodPost, "/window", map[string]string{"handle": main})
	return err
}

func (e *webDriverEngine) Health() Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.health.reported()
}

func (e *webDriverEngine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// Close deletes the session (MiniBrowser closes its window and exits), then kills the
// driver's process group and ends the owned Xvfb. Safe to call twice, and while a call
// is in flight (the call then fails).
func (e *webDriverEngine) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		p, x := e.proc, e.xvfb
		e.proc = nil
		session := ""
		if p != nil {
			session = p.session
		}
		e.mu.Unlock()
		if p != nil {
			if session != "" {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				if _, err := e.do(ctx, p, http.MethodDelete, "/session/"+session, nil); err != nil {
					e.log.Debug().Err(err).Msg("delete session")
				}
				cancel()
			}
			p.kill()
		}
		if x != nil {
			x.Close()
		}
		e.client.CloseIdleConnections()
		e.log.Debug().Msg("engine closed")
	})
	return nil
}

// session sends a command to the current session.
func (e *webDriverEngine) session(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	e.mu.Lock()
	p := e.proc
	session := ""
	if p != nil {
		session = p.session
	}
	e.mu.Unlock()
	if session == "" {
		return nil, errors.New("no live session")
	}
	return e.do(ctx, p, method, "/session/"+session+path, body)
}

// webDriverError is an error response: WebDriver's error code and message.
type webDriverError struct {
	Status  int
	Code    string // e.g. "javascript error"
	Message string
}

func (w *webDriverError) Error() string { return w.Code + ": " + w.Message }

// sessionLost says the error means the session or its window is gone.
func (w *webDriverError) sessionLost() bool {
	switch w.Code {
	case "invalid session id", "no such window", "session not created":
		return true
	}
	return false
}

// do is one WebDriver HTTP command; it returns the response's value.
func (e *webDriverEngine) do(ctx context.Context, p *wdProc, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%s %s: HTTP %d, malformed body: %.200s", method, path, resp.StatusCode, data)
	}
	if resp.StatusCode >= 400 {
		var we struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(env.Value, &we)
		if we.Error == "" {
			we.Error = "unknown error"
			we.Message = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, data)
		}
		return nil, &webDriverError{Status: resp.StatusCode, Code: we.Error, Message: we.Message}
	}
	return env.Value, nil
}

// freeLoopbackPort asks the kernel for a free TCP port on 127.0.0.1. The driver binds
// it a moment later; a lost race shows as the driver exiting, and start retries.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailLog sends a child's output, line by line, to the debug log and keeps the last
// lines for error messages.
type tailLog struct {
	log     zerolog.Logger
	mu      sync.Mutex
	partial []byte
	lines   []string
}

const tailLines = 12

func newTailLog(log zerolog.Logger) *tailLog { return &tailLog{log: log} }

func (t *tailLog) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(t.partial[:i]), "\r")
		t.partial = t.partial[i+1:]
		if line == "" {
			continue
		}
		t.log.Debug().Msg(line)
		t.lines = append(t.lines, line)
		if len(t.lines) > tailLines {
			t.lines = t.lines[len(t.lines)-tailLines:]
		}
	}
	if len(t.partial) > 64<<10 {
		t.partial = t.partial[:0]
	}
	return len(b), nil
}

func (t *tailLog) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(no output)"
	}
	return strings.Join(t.lines, " | ")
}
