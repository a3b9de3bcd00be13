package webdriver

// WebKitGTK over W3C WebDriver classic, in four files: the engine (this file: launch,
// Load/Visit/LoadURL, Reset, Prepare, restart, Close), the driver process
// (webdriver/process.go), the wire client (webdriver/wire.go: session, commands,
// errors) and the in-page scripts every call sends (webdriver/scripts.go and its
// webdriver_*.js).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// Options chooses the WebKitGTK build, its launch profile and its display.
type Options struct {
	// DriverPath is the WebDriver server; default browser.SystemWebKitWebDriver.
	DriverPath string
	// BrowserPath is the browser the driver starts; default browser.SystemMiniBrowser.
	BrowserPath string
	// BrowserArgs are the launch profile's extra browser arguments, after --automation.
	BrowserArgs []string
	// Display is the X display for the browser. Empty means $DISPLAY, and when that
	// is unset too, an Xvfb the engine starts and owns.
	Display string
	// StartXvfb makes the engine start and own an Xvfb even when a display is set.
	StartXvfb bool
	// XvfbPath is the Xvfb binary; default host.DefaultXvfb.
	XvfbPath string
	// Capabilities are extra W3C capabilities of every session (alwaysMatch).
	Capabilities map[string]any
	// Env is KEY=VALUE added to the driver's and browser's environment.
	Env []string
	// RemoteURL, when not "", is a running W3C WebDriver endpoint (a driver on another
	// host, a Grid) to open sessions on, instead of starting a driver here
	// (webdriver/remote.go); DriverPath, Display and Env are then unused.
	RemoteURL string
	// MaxReply bounds an Execute Script reply in bytes (a remote endpoint's too); 0:
	// browser.DefaultMaxReply. Other commands' replies are bounded at 1 MiB.
	MaxReply int64
	// BundledAbsent: see browser.BundledAbsent.
	BundledAbsent string
	// MemoryCgroup is the cgroup.procs file the driver goes in before it starts
	// MiniBrowser, so every WebKit process is born there (host/memlimit.go); "": none.
	MemoryCgroup string
	// AnyEngine, with RemoteURL, drives whatever engine the endpoint serves (a
	// triage candidate, internal/candidate/webdriver.go): the session is opened with
	// Capabilities alone (no webkitgtk:browserOptions), and the engine is named by
	// the session's browserName.
	AnyEngine bool
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
	opts    Options
	route   string
	version string // guarded by mu: a restart sets it while ping and the store read it
	name    string // the session's browserName (AnyEngine); guarded by mu
	log     zerolog.Logger
	client  *http.Client

	callMu sync.Mutex // one Load/Visit at a time

	// mu guards proc (and its session), closed, xvfb and display: a restart replaces
	// them while Close and Health run beside it.
	mu      sync.Mutex
	proc    *wdProc
	closed  bool
	xvfb    *host.Xvfb // nil when the display is not ours
	display string

	health browser.Health // guarded by mu

	scriptTimeout time.Duration // as last set on the session
	chrome        [2]int        // window size minus viewport size, as measured at launch
	window        windowState   // the window as the first case saw it, measured at launch
	firstHistory  string        // history.length of the session's first about:blank
	callSeq       uint64
	closeOnce     sync.Once
	// kept: the session's document holds an inert case (Keep), which the next Load
	// writes over; a Reset or a restart clears it.
	kept atomic.Bool
}

// Launch starts WebKitWebDriver (and an Xvfb when there is no display), opens
// one session whose window's viewport is verified to be exactly the spec's 800x600,
// and leaves it on about:blank.
func Launch(ctx context.Context, opts Options, log zerolog.Logger) (browser.Engine, error) {
	start := time.Now()
	if opts.DriverPath == "" {
		opts.DriverPath = browser.SystemWebKitWebDriver
	}
	if opts.BrowserPath == "" {
		opts.BrowserPath = browser.SystemMiniBrowser
	}
	for _, p := range []string{opts.DriverPath, opts.BrowserPath} {
		if _, err := os.Stat(p); err != nil && opts.RemoteURL == "" {
			return nil, browser.EngineErrorf(browser.WebKit, "%w (install webkit2gtk-driver)", err)
		}
	}
	logName := browser.WebKit
	if opts.AnyEngine {
		logName = "webdriver-candidate"
	}
	log = log.With().Str("engine", logName).Logger()
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
	if opts.RemoteURL != "" { // webdriver/remote.go
		e.route, e.display = remoteWebDriverRoute(opts), "remote"
	} else if e.display == "" || opts.StartXvfb {
		x, err := host.StartXvfb(ctx, opts.XvfbPath, log)
		if err != nil {
			return nil, browser.EngineErrorf(browser.WebKit, "no DISPLAY and %w", err)
		}
		e.xvfb, e.display = x, x.Display
	}
	if err := e.start(ctx); err != nil {
		e.Close()
		return nil, err
	}
	log.Info().Str("version", e.Version()).Str("route", e.route).Str("display", e.display).
		Int("chrome_w", e.chrome[0]).Int("chrome_h", e.chrome[1]).
		Dur("launch", time.Since(start)).Msg("engine launched")
	return e, nil
}

func (e *webDriverEngine) Name() string {
	if e.opts.AnyEngine {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.name
	}
	return browser.WebKit
}
func (e *webDriverEngine) Version() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.version
}

func (e *webDriverEngine) Route() string { return e.route }

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
			return browser.EngineErrorf(browser.WebKit, "engine closed")
		}
		e.proc = p
		e.mu.Unlock()
		version, err := e.newSession(ctx, p)
		if err != nil {
			return browser.EngineErrorf(browser.WebKit, "new session: %w (driver output: %s)", err, p.out.Tail())
		}
		e.mu.Lock()
		was := e.version
		if was == "" {
			e.version = version
		}
		e.mu.Unlock()
		if was != "" && version != was {
			return browser.EngineErrorf(browser.WebKit, "%w from %s to %s on restart", browser.ErrVersionChanged, was, version)
		}
		e.scriptTimeout = 30 * time.Second // WebDriver's default
		if err := e.navigateBlank(ctx); err != nil {
			return browser.EngineErrorf(browser.WebKit, "navigate to about:blank: %w", err)
		}
		if err := e.fixViewport(ctx); err != nil {
			return err
		}
		w, err := e.windowNow(ctx)
		if err != nil {
			return browser.EngineErrorf(browser.WebKit, "measure the window: %w", err)
		}
		e.window = w
		e.firstHistory = browser.FirstHistoryLength
		if e.opts.AnyEngine {
			// Another engine's first about:blank may count the page its session
			// started on (ChromeDriver's data:,): the reset compares with this one.
			st, err := e.blankState(ctx)
			if err != nil {
				return browser.EngineErrorf(browser.WebKit, "read the first page's state: %w", err)
			}
			e.firstHistory = st.History
		}
		return nil
	}
	return browser.EngineErrorf(browser.WebKit, "start %s: %w", e.opts.DriverPath, lastErr)
}

func (e *webDriverEngine) navigateBlank(ctx context.Context) error {
	_, err := e.session(ctx, http.MethodPost, "/url", map[string]string{"url": "about:blank"})
	return err
}

func (e *webDriverEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	return e.call(ctx, "", html, fn, args)
}

func (e *webDriverEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if url == "" {
		return nil, browser.EngineErrorf(browser.WebKit, "visit: empty url")
	}
	return e.call(ctx, url, "", fn, args)
}

// LoadURL navigates to url (Navigate To waits for the load event, bounded by the
// session's page-load timeout), then evaluates the case program on that document.
func (e *webDriverEngine) LoadURL(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if url == "" {
		return nil, browser.EngineErrorf(browser.WebKit, "load url: empty url")
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
	if errors.Is(err, errViewportChanged) && url == "" && ctx.Err() == nil {
		// The browser's own UI took part of the viewport during the case (a download
		// bar that came late): the window is put back, and an html case runs once
		// more. Not a trace or url case: its page is served once.
		e.log.Warn().Err(err).Msg("the viewport changed during the case; resetting the window and running it again")
		if rerr := e.resetLocked(ctx); rerr == nil {
			raw, err = e.callOnce(ctx, url, html, fn, args)
		}
	}
	if err == nil {
		return raw, nil
	}
	if e.isClosed() {
		return nil, browser.EngineErrorf(browser.WebKit, "engine closed")
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
	kept := url == "" && e.kept.Swap(false)
	if kept {
		arg = browser.KeptCaseArg(html, fn, args, browser.SettleBudget(ctx))
	} else if url == "" {
		arg = browser.CaseArg(html, fn, args, browser.SettleBudget(ctx))
	} else if caseURL {
		arg = browser.CaseURLArg(fn, args, browser.SettleBudget(ctx))
	}
	body := map[string]any{"script": callScriptFor(fn, url == "", caseURL, kept), "args": []any{token, arg, e.window.Inner}}
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
				return nil, browser.EngineErrorf(browser.WebKit, "malformed script result: %v", err)
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
			return nil, browser.EngineErrorf(browser.WebKit, "dialogs kept interrupting the call (last result %s)", raw)
		case url == "" && attempt == 0 && json.Unmarshal(raw, &navigated) == nil && navigated.Href != nil:
			e.log.Debug().Str("href", *navigated.Href).Msg("page navigated away; back to about:blank")
			if err := e.navigateBlank(ctx); err != nil {
				return nil, e.wrap(ctx, "navigate back to about:blank", err)
			}
			continue
		default:
			return nil, browser.EngineErrorf(browser.WebKit, "unexpected script result %.200s", raw)
		}
	}
}

// ready makes sure there is a live session, restarting after an earlier failure.
func (e *webDriverEngine) ready(ctx context.Context) error {
	e.mu.Lock()
	closed, p := e.closed, e.proc
	live := p != nil && p.session != ""
	e.mu.Unlock()
	if closed {
		return browser.EngineErrorf(browser.WebKit, "engine closed")
	}
	if live {
		select {
		case <-p.exited():
		default:
			return nil
		}
	}
	e.log.Warn().Msg("no live webkit session; restarting the driver")
	if err := e.restartWith(ctx); err != nil {
		return browser.EngineErrorf(browser.WebKit, "restart: %w", err)
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
	e.kept.Store(false)
	e.mu.Lock()
	p := e.proc
	e.proc = nil
	e.health.State = browser.StateRestarting
	e.health.Restarts++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.health.State = browser.StateReady
		if err != nil {
			e.health.State, e.health.Reason = browser.StateFailed, err.Error()
		}
		e.mu.Unlock()
	}()
	if p != nil {
		p.kill()
	}
	e.mu.Lock()
	oldX := e.xvfb
	e.mu.Unlock()
	if oldX != nil && oldX.ExitedEarly() {
		e.log.Warn().Str("display", oldX.Display).Msg("our Xvfb died; starting another")
		oldX.Close()
		x, err := host.StartXvfb(ctx, e.opts.XvfbPath, e.log)
		if err != nil {
			return err
		}
		e.mu.Lock()
		if e.closed { // Close has run and ended the old one; it will not see this one
			e.mu.Unlock()
			x.Close()
			return browser.EngineErrorf(browser.WebKit, "engine closed")
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

// Sandbox is WebKitGTK's sandbox as /proc shows it now: the processes under the
// driver (MiniBrowser, bubblewrap, the web and network processes).
func (e *webDriverEngine) Sandbox() browser.SandboxState {
	e.mu.Lock()
	p := e.proc
	e.mu.Unlock()
	if p == nil || p.group == nil {
		return browser.SandboxState{User: host.BrowserUser().Name, Reason: "no browser process to inspect (being restarted, or remote)"}
	}
	return browser.InspectSandbox(browser.WebKit, []int{p.group.PID()})
}

func (e *webDriverEngine) Health() browser.Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.health.Reported()
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

// BundledAbsent: see browser.BundledAbsent.
func (e *webDriverEngine) BundledAbsent() string { return e.opts.BundledAbsent }
