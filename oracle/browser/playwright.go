package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"
)

// Debian's system browsers, the route that works on machines without Playwright's
// browser downloads (../shared/ENGINES.md).
const (
	SystemChromium = "/usr/bin/chromium"
	SystemFirefox  = "/usr/bin/firefox-esr"
)

// ChromiumArgs are needed on a closed network: without the networking flags
// Chromium floods refused connections (ENGINES.md). --no-sandbox is not among them:
// the browsers run as an unprivileged user with Chromium's sandbox on (sandbox.go),
// and only a Chromium left to run as root gets it (chromiumArgs).
var ChromiumArgs = []string{
	"--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
}

// chromiumArgs is ChromiumArgs plus extra, with --no-sandbox only where the browser
// runs as root (the browser user is missing), where Chromium refuses to start otherwise.
func chromiumArgs(extra []string) []string {
	args := append([]string{}, ChromiumArgs...)
	if browserUser().root() {
		args = append(args, "--no-sandbox")
	}
	return append(args, extra...)
}

// PlaywrightDriver is the one Playwright driver process the oracle's Playwright
// engines share.
type PlaywrightDriver struct {
	pw *playwright.Playwright
	// gone is set once a call failed because the driver's connection broke (the
	// process may linger a moment after its pipe closed).
	gone atomic.Bool
	// launchMu makes a launch's new child processes its browser's alone: two
	// launches at once on one driver would each count the other's browser as theirs.
	launchMu sync.Mutex
}

// StartPlaywright starts the driver installed by InstallDriver. Its output goes to
// stderr: playwright-go's default is stdout, which belongs to the protocol.
func StartPlaywright(log zerolog.Logger) (*PlaywrightDriver, error) {
	pw, err := playwright.Run(driverOptions(log))
	if err != nil {
		return nil, fmt.Errorf("start playwright driver: %w (run `make setup`)", err)
	}
	return &PlaywrightDriver{pw: pw}, nil
}

// InstallDriver fetches the playwright-core driver matching go.mod's playwright-go,
// without browsers (none can be downloaded on a closed network). playwright-go
// downloads its own Node.js unless PLAYWRIGHT_NODEJS_PATH names one (it reads that
// variable only from the environment; the caller sets it, this package never does).
// The driver directory then gets a "node" link to that Node.js (or the machine's
// node), which is where playwright-go looks when the variable is unset: the driver
// runs on it later without anything set in the environment.
func InstallDriver(log zerolog.Logger) error {
	opts := driverOptions(log)
	opts.SkipInstallBrowsers = true
	if err := playwright.Install(opts); err != nil { // fills in opts.DriverDirectory
		return err
	}
	link := filepath.Join(opts.DriverDirectory, "node")
	if _, err := os.Stat(link); err == nil {
		return nil // playwright-go's own download, or a link made earlier
	}
	node := os.Getenv("PLAYWRIGHT_NODEJS_PATH")
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			return fmt.Errorf("no node to run the driver on: %w", err)
		}
	}
	os.Remove(link) // a dangling link
	if err := os.Symlink(node, link); err != nil {
		return fmt.Errorf("link the driver's node: %w", err)
	}
	log.Info().Str("node", node).Str("link", link).Msg("the Playwright driver runs on this node")
	return nil
}

// driverOptions sends the driver's output to stderr. The driver runs on
// PLAYWRIGHT_NODEJS_PATH when the caller set it, else on the driver directory's
// node, which InstallDriver links to the machine's: the oracle's environment is
// never changed.
//
// playwright-go keeps its logger in a package variable that every Run with a Logger
// writes, while drivers already running read it: with one driver per page started
// in parallel, that raced (go test -race, cmd/probe). It is set once, before any
// Run, and no Run passes a Logger after that.
func driverOptions(log zerolog.Logger) *playwright.RunOptions {
	setDriverLogger.Do(func() {
		playwright.NewDriver(&playwright.RunOptions{Stdout: os.Stderr, Stderr: os.Stderr, Verbose: false,
			Logger: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	})
	return &playwright.RunOptions{
		Stdout:  os.Stderr,
		Stderr:  os.Stderr,
		Verbose: false,
	}
}

var setDriverLogger sync.Once

// Stop ends the driver process; call after closing its engines.
func (d *PlaywrightDriver) Stop() error { return d.pw.Stop() }

// alive says whether the driver process still runs and its connection holds: a
// killed driver (kill -9 of node ... run-driver) fails every later call on its
// pages with "could not read protocol padding: EOF", and nothing in playwright-go
// reports it (the browser still says it is connected).
func (d *PlaywrightDriver) alive() bool {
	if d.gone.Load() {
		return false
	}
	pid := d.pw.Pid()
	if pid == 0 {
		return true // not a pipe transport: only errors tell
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // exited and reaped
	}
	// pid (comm) state ppid ...: a zombie has exited; another parent is a reused pid.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 1 && fields[0] != "Z" && fields[0] != "X" && fields[1] == strconv.Itoa(os.Getpid())
}

// driverGone says whether err is playwright-go's report of a broken driver
// connection rather than of a browser or page.
func driverGone(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	for _, m := range []string{"could not read protocol", "transport closed", "connection closed", "could not send message"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// BundledPath is where Playwright's own build of engine would be, and whether it is
// installed (`playwright install` on a machine with internet).
func (d *PlaywrightDriver) BundledPath(engine string) (string, bool) {
	bt := d.browserType(engine)
	if bt == nil {
		return "", false
	}
	p := bt.ExecutablePath()
	if p == "" {
		return "", false
	}
	_, err := os.Stat(p)
	return p, err == nil
}

func (d *PlaywrightDriver) browserType(engine string) playwright.BrowserType {
	switch engine {
	case Chromium:
		return d.pw.Chromium
	case Firefox:
		return d.pw.Firefox
	case WebKit:
		return d.pw.WebKit
	}
	return nil
}

// PlaywrightOptions chooses one engine's build and launch profile.
type PlaywrightOptions struct {
	Engine string // chromium, firefox or webkit
	// Bundled launches Playwright's own build; otherwise the Debian system build
	// (Chromium from SystemChromium, Firefox ESR over WebDriver BiDi, channel moz-firefox).
	Bundled      bool
	Args         []string       // launch profile's extra arguments
	FirefoxPrefs map[string]any // launch profile's Firefox prefs
	Permissions  []string       // launch profile's permission grants
	InitScripts  []string       // run before any page script, in every page
	Env          []string       // KEY=VALUE added to the browser's environment
	// ExecutablePath replaces the system build's binary (SystemChromium,
	// SystemFirefox); not used with Bundled.
	ExecutablePath string
	// MemoryCgroup is the cgroup.procs file the browser's processes go in
	// (memlimit.go); "": none.
	MemoryCgroup string
	// MaxMessage bounds one message from a remote server (remote_relay.go); 0:
	// relayMaxMessage.
	MaxMessage int64
}

type playwrightEngine struct {
	name, version, route string
	remote               bool // connected to a Playwright browser server (remote_playwright.go)
	initScripts          bool // the context installs init scripts (the trace recorder)
	// relaunch launches the same browser again on a driver (the same one, or a new
	// one when the old driver died).
	relaunch func(*PlaywrightDriver) (*playwrightEngine, error)
	driver   *PlaywrightDriver // stopped by Close when the engine owns it
	log      zerolog.Logger

	// mu guards the fields below: calls (one at a time) read and replace browser,
	// context and page, while Health, Close and a relaunch run beside them.
	mu      sync.Mutex
	browser playwright.Browser
	context playwright.BrowserContext
	page    playwright.Page
	// blank is the page whose document is the about:blank the reset's own
	// navigation made, not used by a case yet (nil: none). Every html case runs in
	// such a document (Load): a new page's initial about:blank differs from it in
	// what a page can observe (Firefox's navigation.activation is null there,
	// "push" here), and a case's answer must not depend on the case before it.
	blank playwright.Page
	// kept is the page whose document an inert case was kept in (Keep), for the next
	// Load to write into with no navigation (nil: none).
	kept   playwright.Page
	health Health
	closed bool
	pids   []int             // the browser's main processes (each leads its process group)
	pw     *PlaywrightDriver // the driver the browser runs on
	opts   PlaywrightOptions // what a new context needs
	// bundledAbsent: see BundledAbsent (launch.go).
	bundledAbsent string
}

// relaunchBackoff is the wait before each relaunch attempt of a crashed browser.
var relaunchBackoff = []time.Duration{0, 500 * time.Millisecond, 2 * time.Second}

// LaunchPlaywright opens one browser with one 800x600 page, kept for the process
// lifetime, and relaunched the same way if the browser dies.
func (d *PlaywrightDriver) LaunchPlaywright(opts PlaywrightOptions, log zerolog.Logger) (Engine, error) {
	e, err := d.launchPlaywright(opts, log)
	if err != nil {
		return nil, err
	}
	e.relaunch = func(on *PlaywrightDriver) (*playwrightEngine, error) { return on.launchPlaywright(opts, log) }
	return e, nil
}

func (d *PlaywrightDriver) launchPlaywright(opts PlaywrightOptions, log zerolog.Logger) (*playwrightEngine, error) {
	bt := d.browserType(opts.Engine)
	if bt == nil {
		return nil, fmt.Errorf("unknown engine %q", opts.Engine)
	}
	launch := playwright.BrowserTypeLaunchOptions{
		Headless: playwright.Bool(true),
		Args:     opts.Args,
		Timeout:  playwright.Float(60_000),
	}
	var route, exe string
	switch {
	case opts.Bundled:
		path, ok := d.BundledPath(opts.Engine)
		if !ok {
			return nil, fmt.Errorf("%s: Playwright's bundled build is not installed (%s)", opts.Engine, path)
		}
		route, exe = "playwright-go bundled "+path, path
	case opts.Engine == Chromium:
		exe = orDefault(opts.ExecutablePath, SystemChromium)
		route = "playwright-go system " + exe
	case opts.Engine == Firefox:
		exe = orDefault(opts.ExecutablePath, SystemFirefox)
		launch.Channel = playwright.String("moz-firefox")
		route = "playwright-go system " + exe + " (WebDriver BiDi, channel moz-firefox)"
	default:
		return nil, fmt.Errorf("%s: no system route through Playwright (stock WebKitGTK is driven over WebDriver)", opts.Engine)
	}
	if opts.Engine == Chromium {
		launch.Args = chromiumArgs(opts.Args)
		// Playwright adds --no-sandbox unless told the sandbox is wanted.
		launch.ChromiumSandbox = playwright.Bool(!browserUser().root())
	}
	// The driver starts the browser through a wrapper that drops to the browser
	// user (sandbox.go); as an unprivileged oracle, the binary itself.
	wrapper, err := browserWrapper(exe)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Engine, err)
	}
	if wrapper != exe || !opts.Bundled {
		launch.ExecutablePath = playwright.String(wrapper)
	}
	if len(opts.FirefoxPrefs) > 0 {
		launch.FirefoxUserPrefs = opts.FirefoxPrefs
	}
	env := append(append([]string{}, opts.Env...), browserUser().env()...)
	if opts.MemoryCgroup != "" {
		env = append(env, CgroupProcsEnv+"="+opts.MemoryCgroup) // the wrapper joins it
	}
	if len(env) > 0 {
		// Playwright's env replaces the browser's whole environment: start from ours.
		launch.Env = map[string]string{}
		for _, kv := range WithEnv(os.Environ(), env) {
			k, v, _ := strings.Cut(kv, "=")
			launch.Env[k] = v
		}
	}
	start := time.Now()
	d.launchMu.Lock()
	before := d.children()
	browser, err := bt.Launch(launch)
	pids := newPIDs(before, d.children())
	d.launchMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: launch: %w", opts.Engine, err)
	}
	e := &playwrightEngine{name: opts.Engine, version: browser.Version(), route: route, browser: browser, log: log,
		initScripts: len(opts.InitScripts) > 0, pids: pids, pw: d, opts: opts}
	if e.context, e.page, err = e.openContext(browser); err != nil {
		e.Close()
		return nil, err
	}
	// With the wrapper the browser was born in its cgroup; without one (an
	// unprivileged oracle) its processes are moved there now.
	if err := PlaceTree(opts.MemoryCgroup, pids); err != nil {
		log.Warn().Str("engine", e.name).Err(err).Msg("browser processes left outside the engine's memory cgroup")
	}
	noDelayBrowser(opts.Engine, pids, log) // nodelay.go: about 40 ms off every Firefox call
	log.Info().Str("engine", e.name).Str("version", e.version).Str("route", route).
		Dur("launch", time.Since(start)).Msg("engine launched")
	return e, nil
}

// openContext opens the engine's browser context (viewport, permissions, media
// features, init scripts) in browser, and its one page.
func (e *playwrightEngine) openContext(browser playwright.Browser) (playwright.BrowserContext, playwright.Page, error) {
	bctx, err := browser.NewContext(playwright.BrowserNewContextOptions{
		Viewport:    &playwright.Size{Width: int(viewportWidth), Height: int(viewportHeight)},
		Permissions: e.opts.Permissions,
		// A case's download is refused (docs/untrusted.md): in Firefox one took the
		// focus from the page for every later case (issue 26), and an accepted one is
		// a file of the case's size.
		AcceptDownloads: playwright.Bool(false),
		// The pinned environment's media features (environment.go), explicit rather
		// than Playwright's defaults.
		ColorScheme:   playwright.ColorSchemeLight,
		ReducedMotion: playwright.ReducedMotionNoPreference,
		ForcedColors:  playwright.ForcedColorsNone,
		Contrast:      playwright.ContrastNoPreference,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: new context: %w", e.name, err)
	}
	closed := new(atomic.Bool)
	contexts.Store(bctx, closed)
	bctx.OnClose(func(playwright.BrowserContext) { closed.Store(true) })
	for _, s := range e.opts.InitScripts {
		if err := bctx.AddInitScript(playwright.Script{Content: playwright.String(s)}); err != nil {
			bctx.Close()
			forgetContext(bctx)
			return nil, nil, fmt.Errorf("%s: init script: %w", e.name, err)
		}
	}
	page, err := bctx.NewPage()
	if err != nil {
		bctx.Close()
		forgetContext(bctx)
		return nil, nil, fmt.Errorf("%s: new page: %w", e.name, err)
	}
	e.trackPage(page)
	return bctx, page, nil
}

// RunsInitScripts says the recorder arrives by init script, not inline.
func (e *playwrightEngine) RunsInitScripts() bool { return e.initScripts }

func (e *playwrightEngine) Name() string    { return e.name }
func (e *playwrightEngine) Version() string { return e.version }
func (e *playwrightEngine) Route() string   { return e.route }

// Health says what the next call meets: a crashed page, a dead driver or a
// disconnected browser is "restarting" (the next call replaces it) even before any
// call found out.
func (e *playwrightEngine) Health() Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.health.reported()
	if h.State != StateReady || e.closed {
		return h
	}
	switch {
	case e.pw != nil && !e.pw.alive():
		h.State, h.Reason = StateRestarting, "playwright driver exited; driver and browser relaunch on the next call"
	case e.browser != nil && !e.browser.IsConnected():
		h.State, h.Reason = StateRestarting, "browser disconnected; it relaunches on the next call"
	case e.page != nil && pageIsCrashed(e.page):
		h.State, h.Reason = StateRestarting, "page crashed; the browser relaunches on the next call"
	case e.context != nil && contextClosed(e.context):
		h.State, h.Reason = StateRestarting, "browser context closed (a content process died?); the browser relaunches on the next call"
	}
	return h
}

// Sandbox is the browser's sandbox as /proc shows it now.
func (e *playwrightEngine) Sandbox() SandboxState {
	e.mu.Lock()
	pids := append([]int{}, e.pids...)
	e.mu.Unlock()
	return inspectSandbox(e.name, pids)
}

// Reset navigates to a fresh about:blank: a new document and a new global object.
// A page that cannot even do that in time (its renderer is still busy with a case
// that outlived its deadline, and new pages queue behind it) costs a relaunch of the
// browser, which bounds how long one hostile case can keep an engine away.
func (e *playwrightEngine) Reset(ctx context.Context) error {
	// A crashed page, a dead driver or a lost browser is replaced here, right after
	// the case that met it, outside the reset's deadline (a relaunch takes seconds):
	// the relaunched page is a fresh about:blank already.
	if relaunched, err := e.ensureBrowser(); err != nil || relaunched {
		return err
	}
	e.mu.Lock()
	e.kept = nil
	e.mu.Unlock()
	ctx = context.WithValue(ctx, opKey{}, "reset to about:blank")
	leftBlank := false
	var made playwright.Page
	raw, err := e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		if page.URL() != "about:blank" {
			// A trace or url case. An about:blank the page navigates to itself
			// inherits the page's origin (a trace case's http://c….localhost, its
			// cookies and storage), and the next case must run in an opaque one, as
			// the first case did. First back by the page's own location.replace,
			// which adds no history entry (Goto from elsewhere would) and ends the
			// case's timers; a failed replace falls back to the Goto below, whose
			// entry the check after it catches.
			_ = replaceTo(page, "about:blank", timeout)
			if e.name == Firefox {
				// Gecko adds a history entry for the driver's navigation, and its load
				// was not always reported (resets timed out on WPT url cases): a new
				// page, which the next case navigates to about:blank (Load). The replace
				// above still matters: a trace page left running a 1 ms timer that
				// calls history.replaceState flooded the driver with events, and the
				// new page did not open within 15 s.
				leftBlank = true
				return closeOtherPages(page)
			}
		}
		// The driver's own navigation comes last: an opaque origin, and about:blank
		// to about:blank adds no history entry (Chromium, Firefox, measured).
		if _, err := page.Goto("about:blank", playwright.PageGotoOptions{Timeout: &timeout}); err != nil {
			return err
		}
		made = page
		return closeOtherPages(page)
	}, resetCheckJS, nil)
	if err == nil {
		var st [2]any // history.length, document.hasFocus()
		_ = json.Unmarshal(raw, &st)
		if st[0] == firstHistoryLength && !leftBlank {
			if st[1] == true || e.refocus(ctx, made, false) {
				e.mu.Lock()
				e.blank = made
				e.mu.Unlock()
				return nil
			}
		}
		// The case added session-history entries (pushState, hash changes, its own
		// navigations, an iframe's), or left Firefox's page elsewhere, or took the
		// focus for good: only a new page has the first case's history, an opaque
		// about:blank and the focus.
		e.log.Debug().Str("engine", e.name).Str("history", string(raw)).Bool("left_blank", leftBlank).Msg("a new page replaces this one")
		if err = e.freshPage(); err == nil {
			if err = e.checkFocus(ctx); err == nil {
				return nil
			}
		}
	}
	reason := "page did not reset in time"
	if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		// A page that cannot even reach about:blank is broken (its content process
		// died, its context closed): the next case would fail the same way.
		reason = "page could not reset: " + firstLine(err)
	}
	e.log.Warn().Str("engine", e.name).Err(err).Msg(reason + "; relaunching the browser")
	_, err = e.relaunchBrowser(reason, true)
	return err
}

// Prepare checks the page before a case (pool.go): a crashed page, a dead driver
// or a lost browser is replaced, and a page that does not answer a trivial
// evaluation within probeTimeout (Firefox's, after its content process was killed
// while idle, hangs every call) costs a relaunch, here rather than in the case.
func (e *playwrightEngine) Prepare(ctx context.Context) error {
	if relaunched, err := e.ensureBrowser(); err != nil || relaunched {
		return err
	}
	e.mu.Lock()
	page := e.page
	e.mu.Unlock()
	if page == nil || !pageOpen(page) {
		return nil // the case opens a new one
	}
	// The check reads the focus: a page that lost it would answer every focus-
	// dependent case wrong, silently (issue 26).
	done := make(chan error, 1)
	var focused any
	go func() {
		var err error
		focused, err = page.Evaluate("document.hasFocus()")
		done <- err
	}()
	var reason string
	select {
	case err := <-done:
		if err == nil && (focused == true || e.refocus(ctx, page, false)) {
			return nil
		}
		reason = "idle page lost the focus, and it could not be given back"
		if err != nil {
			reason = "idle page failed a check: " + firstLine(err)
		}
	case <-time.After(probeTimeout):
		reason = "idle page did not answer a check within " + probeTimeout.String() + " (its content process died?)"
	case <-ctx.Done():
		return ctx.Err()
	}
	e.log.Warn().Str("engine", e.name).Msg(reason + "; relaunching the browser")
	_, err := e.relaunchBrowser(reason, true)
	return err
}

// closeOtherPages closes every page of keep's context but keep: the popups and
// target=_blank windows a case opened (issue 18: busy popups kept Firefox burning
// half a core while idle), and pages abandoned earlier. keep has left the case's
// document already, so it opens no more; a popup that opens another while it is
// being closed is caught by the next round.
func closeOtherPages(keep playwright.Page) error {
	for round := 0; round < 5; round++ {
		var others []playwright.Page
		for _, p := range keep.Context().Pages() {
			if p != keep {
				others = append(others, p)
			}
		}
		if len(others) == 0 {
			return nil
		}
		for _, p := range others {
			if err := p.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)}); err != nil && pageOpen(p) {
				return fmt.Errorf("close a page the case opened: %w", err)
			}
		}
	}
	return errors.New("the case's popups kept opening more")
}

// windowCount is how many pages the browser has open, in all its contexts, and how
// many contexts: what the oracle owns is one page in one context.
func (e *playwrightEngine) windowCount() (pages, contexts int) {
	e.mu.Lock()
	b := e.browser
	e.mu.Unlock()
	for _, c := range b.Contexts() {
		contexts++
		pages += len(c.Pages())
	}
	return pages, contexts
}

// opKey carries what withPage is doing, for its log lines: a case unless the
// context says otherwise.
type opKey struct{}

func opOf(ctx context.Context) string {
	if op, ok := ctx.Value(opKey{}).(string); ok {
		return op
	}
	return "case"
}

// Load is one Evaluate of the case program, which writes the document itself
// (Playwright's setContent is document.open/write/close too) and settles it. A page
// left elsewhere (a Visit without a Reset after it) goes back to about:blank first,
// as on the WebDriver route; the URL is the client's cached one, no round trip.
func (e *playwrightEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	plain, err := plainJSON(args)
	if err != nil {
		return nil, err
	}
	kept := false
	return e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		e.mu.Lock()
		ready := e.blank == page
		kept = e.kept == page && page != nil
		e.blank, e.kept = nil, nil
		e.mu.Unlock()
		if ready || kept {
			return nil // the reset's about:blank (the common case), or a kept inert case's
		}
		// A new page (the first, a relaunched browser's, Firefox's after a trace,
		// one opened after the case before closed its window), or a reset that did
		// not finish: the same kind of document the reset makes.
		_, err := page.Goto("about:blank", playwright.PageGotoOptions{Timeout: &timeout})
		return err
	}, caseJS, func() any {
		if kept {
			return keptCaseArg(html, fn, plain, settleBudget(ctx))
		}
		return CaseArg(html, fn, plain, settleBudget(ctx))
	})
}

// Keep keeps the page as the inert case that just ran on it left it (Keeper): still
// open, not crashed, on about:blank (the client's cached URL, no round trip), the
// only page of its context. The reset's other checks (history, window.name, other
// windows) guard against what only script can do.
func (e *playwrightEngine) Keep() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	page := e.page
	if page == nil || e.closed || !pageOpen(page) || pageIsCrashed(page) || page.URL() != "about:blank" ||
		len(page.Context().Pages()) != 1 {
		e.kept = nil
		return false
	}
	e.kept = page
	return true
}

func (e *playwrightEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	plain, err := plainJSON(args)
	if err != nil {
		return nil, err
	}
	return e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		if strings.HasPrefix(url, "file:") {
			// No page may navigate to file: (the allowlist's rule, and the engines'),
			// so location.replace cannot; the driver's own navigation can. Only the
			// oracle's callers choose a Visit's url (tests open reports from disk),
			// never a case; the history entry it adds costs a fresh page at the reset.
			_, err := page.Goto(url, playwright.PageGotoOptions{Timeout: &timeout})
			return err
		}
		return replaceTo(page, url, timeout)
	}, CallExpression(fn), plain)
}

// LoadURL navigates to url, then evaluates the case program there, which settles the
// navigated document (no write). The navigation waits for the commit only: the
// program's own settle waits for load, fonts and images under its budget, and names
// what did not settle, as for html cases. The budget is taken after the navigation.
func (e *playwrightEngine) LoadURL(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	plain, err := plainJSON(args)
	if err != nil {
		return nil, err
	}
	return e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		return replaceUntil(page, url, timeout, playwright.WaitUntilStateCommit)
	}, caseJS, func() any { return CaseURLArg(fn, plain, settleBudget(ctx)) })
}

// resetCheckJS is the Playwright reset's check of its about:blank: freshCheckJS's
// history.length and document.hasFocus(), as a JSON array.
var resetCheckJS = inpage.Fill(inpage.PlaywrightResetCheck, "FRESH_CHECK", freshCheckJS)

// refocus gives page back the focus a case took (a download took it from Firefox's
// page for good, issue 26: every later case ran with document.hasFocus() false, and
// an input:focus rule stopped matching), and says whether the page has it now. With
// check, a page that has the focus is left alone.
func (e *playwrightEngine) refocus(ctx context.Context, page playwright.Page, check bool) bool {
	if page == nil {
		return false
	}
	done := make(chan bool, 1)
	go func() {
		if check {
			if v, err := page.Evaluate("document.hasFocus()"); err == nil && v == true {
				done <- true
				return
			}
		}
		if err := page.BringToFront(); err != nil {
			done <- false
			return
		}
		v, err := page.Evaluate("document.hasFocus()")
		done <- err == nil && v == true
	}()
	select {
	case ok := <-done:
		return ok
	case <-time.After(probeTimeout):
	case <-ctx.Done():
	}
	return false
}

// checkFocus says whether the engine's page has the focus, or could be given it back.
func (e *playwrightEngine) checkFocus(ctx context.Context) error {
	e.mu.Lock()
	page := e.page
	e.mu.Unlock()
	if e.refocus(ctx, page, true) {
		return nil
	}
	return errors.New("the new page has no focus")
}

// freshCheckJS runs on the page reset to about:blank: it clears window.name (which
// outlives navigations in the same window) and returns history.length as JSON text.
var freshCheckJS = inpage.FreshCheck

// firstHistoryLength is history.length on a fresh page's about:blank, in every engine
// (measured): what the first case the oracle ran saw, and every case must see.
const firstHistoryLength = "1"

// replaceTo navigates page to url replacing its current session-history entry, as
// location.replace does, and waits for the load event: Goto would add an entry, and
// history.length would grow with every trace case.
func replaceTo(page playwright.Page, url string, timeout float64) error {
	return replaceUntil(page, url, timeout, playwright.WaitUntilStateLoad)
}

// replaceUntil is replaceTo waiting for until instead of load (a url case waits for
// the commit only: the case program's settle waits for the rest and names what did
// not settle).
func replaceUntil(page playwright.Page, url string, timeout float64, until *playwright.WaitUntilState) error {
	if _, err := page.Evaluate("u => { location.replace(u); }", url); err != nil &&
		!strings.Contains(err.Error(), "context was destroyed") && !strings.Contains(err.Error(), "navigat") {
		return err
	}
	return page.WaitForURL(url, playwright.PageWaitForURLOptions{Timeout: &timeout, WaitUntil: until})
}

// freshPage replaces the engine's page by a new one in the same context (a new
// tab: an empty session history), on its own bound: opening a page took 0.3-3 s on a
// loaded machine, longer than a reset's. Only cases that left history entries pay it.
func (e *playwrightEngine) freshPage() error {
	e.mu.Lock()
	old, bctx, browser := e.page, e.context, e.browser
	e.mu.Unlock()
	done := make(chan error, 1)
	var page playwright.Page
	closeOld := func() {
		if old != nil {
			old.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)})
		}
	}
	go func() {
		if e.remote {
			// Through Playwright's browser server, closing the old page once the new
			// one was open left the new one closed too ("target closed" on the next
			// case, Firefox; TestOriginListenServesRemoteBrowsers): close it first. Not
			// locally, where Firefox would then start a new content process each time.
			closeOld()
		}
		p, err := bctx.NewPage()
		if err == nil {
			e.trackPage(p)
			page = p
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: new page: %w", e.name, err)
		}
	case <-time.After(15 * time.Second):
		return fmt.Errorf("%s: no new page within 15s", e.name)
	}
	e.setPage(browser, page, false)
	if !e.remote {
		go closeOld()
	}
	return nil
}

// withPage runs load then evaluates expr with arg on the page under
// ctx's deadline; expr's result must be JSON text. Playwright's Evaluate has no
// timeout of its own, so a case that never yields (while(true){}) would hold the
// engine forever: past the deadline the page is abandoned and replaced.
func (e *playwrightEngine) withPage(ctx context.Context, load func(playwright.Page, float64) error, expr string, arg any) (json.RawMessage, error) {
	if _, err := e.ensureBrowser(); err != nil {
		return nil, err
	}
	timeout := 30_000.0
	if dl, ok := ctx.Deadline(); ok {
		timeout = float64(time.Until(dl).Milliseconds())
		if timeout < 1 {
			return nil, context.DeadlineExceeded
		}
	}
	type result struct {
		page playwright.Page
		raw  json.RawMessage
		err  error
	}
	// Everything that talks to the browser runs here, under the deadline: even opening
	// a page can queue behind a stuck case (a renderer busy with 50 MB of markup).
	e.mu.Lock()
	page, browserCtx, browser, driver := e.page, e.context, e.browser, e.pw
	e.mu.Unlock()
	done := make(chan result, 1)
	go func() {
		r := result{page: page}
		if r.page == nil || !pageOpen(r.page) { // a case may have called window.close()
			if r.page, r.err = browserCtx.NewPage(); r.err != nil {
				r.err = fmt.Errorf("%s: new page: %w", e.name, r.err)
				done <- r
				return
			}
			e.trackPage(r.page)
		}
		if r.err = load(r.page, timeout); r.err != nil || expr == "" {
			done <- r
			return
		}
		var v any
		if f, ok := arg.(func() any); ok { // an argument that depends on what load took
			arg = f()
		}
		if v, r.err = r.page.Evaluate(expr, arg); r.err == nil {
			if s, ok := v.(string); ok {
				r.raw = json.RawMessage(s)
			} else {
				r.err = fmt.Errorf("evaluate returned %T, want a JSON string", v)
			}
		}
		done <- r
	}()
	select {
	case r := <-done:
		timedOut := errors.Is(r.err, playwright.ErrTimeout) // Playwright's own clock ran out first
		if r.err != nil && driverGone(r.err) {
			driver.gone.Store(true)
			e.log.Warn().Str("engine", e.name).Err(r.err).Msg("playwright driver gone; relaunching it on the next call")
			return nil, fmt.Errorf("%s: playwright driver died: %w", e.name, r.err)
		}
		if r.err != nil && r.page != nil && pageCrashed(r.page, r.err) {
			e.setPage(browser, r.page, false) // kept, marked crashed: the next call replaces it
			return nil, fmt.Errorf("%s: page crashed (its renderer or content process died): %v", e.name, firstLine(r.err))
		}
		e.setPage(browser, r.page, timedOut)
		if timedOut {
			// The page is still busy with the case; the reset opens another.
			go r.page.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)})
			return nil, fmt.Errorf("%w (%v)", context.DeadlineExceeded, firstLine(r.err))
		}
		if r.err != nil && contextLost(browser, browserCtx, r.page, r.err) && browser.IsConnected() {
			return nil, fmt.Errorf("%s: page crashed or closed with its context (its content process died?): %v", e.name, firstLine(r.err))
		}
		if r.err != nil && !browser.IsConnected() {
			e.log.Warn().Str("engine", e.name).Err(r.err).Msg("browser disconnected; relaunching on the next call")
			return nil, fmt.Errorf("%s: browser crashed or disconnected: %w", e.name, r.err)
		}
		return r.raw, r.err
	case <-ctx.Done():
		// Answer now and leave the page behind: the next call (the pool's reset)
		// opens another, or relaunches the browser if even that cannot happen in time.
		e.log.Warn().Str("engine", e.name).Str("op", opOf(ctx)).Err(ctx.Err()).
			Msg(opOf(ctx) + " did not finish in time; abandoning the page")
		e.setPage(browser, nil, true)
		go func() {
			if r := <-done; r.page != nil {
				r.page.Close(playwright.PageCloseOptions{RunBeforeUnload: playwright.Bool(false)})
			}
		}()
		return nil, ctx.Err()
	}
}

// openPages holds the pages not closed yet. playwright-go's Page.IsClosed reads a
// field its connection goroutine writes without a lock (a data race under -race);
// its close event is delivered on that goroutine, so the map is kept from there.
var openPages sync.Map

// crashedPages holds the open pages whose renderer (Chromium) or content process
// (Firefox) crashed, from Playwright's crash event, delivered at once on the
// connection's goroutine. Such a page fails every later call, so the next call
// replaces it. Kept per page, not per engine: a relaunch adopts the pages of the
// engine value that launched them.
var crashedPages sync.Map

// contexts holds, per browser context an engine uses, whether it closed under the
// oracle: Firefox closes the page's context when its content process is killed, and
// no new page can open in it. An engine forgets its context when it replaces or
// closes it, so the map holds only contexts in use (it only grew before, issue 27).
var contexts sync.Map // playwright.BrowserContext -> *atomic.Bool

// contextClosed says whether c closed; a context no engine uses any more counts as closed.
func contextClosed(c playwright.BrowserContext) bool {
	v, ok := contexts.Load(c)
	return !ok || v.(*atomic.Bool).Load()
}

func forgetContext(c playwright.BrowserContext) {
	if c != nil {
		contexts.Delete(c)
	}
}

// contextLost says whether the call that failed with err on p failed because p's
// context (or browser) went away under it. Firefox's error ("Execution context was
// destroyed") arrives before the close and disconnect events, up to a second before
// them under a race-built oracle: such an error waits a moment for them. A case that
// merely navigated away gets the same error, and pays that wait.
func contextLost(b playwright.Browser, c playwright.BrowserContext, p playwright.Page, err error) bool {
	gone := func() bool { return contextClosed(c) || !b.IsConnected() || (p != nil && !pageOpen(p)) }
	if contextClosed(c) {
		return true
	}
	if s := err.Error(); !strings.Contains(s, "context was destroyed") && !strings.Contains(s, "has been closed") {
		return false
	}
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if gone() {
			return true
		}
	}
	return false
}

// trackPage follows p's close and crash events.
func (e *playwrightEngine) trackPage(p playwright.Page) {
	openPages.Store(p, struct{}{})
	p.OnClose(func(playwright.Page) { openPages.Delete(p); crashedPages.Delete(p) })
	p.OnCrash(func(playwright.Page) {
		crashedPages.Store(p, struct{}{})
		e.log.Warn().Str("engine", e.name).Msg("page crashed; a new page opens for the next call")
	})
}

func pageIsCrashed(p playwright.Page) bool {
	_, ok := crashedPages.Load(p)
	return ok
}

// pageCrashed says whether the call that failed with err on p failed on a crash. The
// call's error can arrive just before the crash event: an error that names a crash
// waits a moment for it.
func pageCrashed(p playwright.Page, err error) bool {
	if pageIsCrashed(p) {
		return true
	}
	if !strings.Contains(strings.ToLower(err.Error()), "crash") {
		return false
	}
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pageIsCrashed(p) {
			return true
		}
	}
	return false
}

func pageOpen(p playwright.Page) bool {
	_, ok := openPages.Load(p)
	return ok
}

// setPage records the page a call ended with (nil: abandoned, open a new one next
// time), unless a relaunch replaced the browser meanwhile.
func (e *playwrightEngine) setPage(browser playwright.Browser, page playwright.Page, abandon bool) {
	if abandon {
		page = nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.browser == browser {
		e.page = page
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// plainJSON turns args into maps, slices and scalars by way of encoding/json:
// Playwright's argument serializer does not know Go structs or their JSON tags.
// Strings and string lists, the common arguments, pass through untouched: a case's
// script or markup can be megabytes.
func plainJSON(args []any) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		switch a.(type) {
		case nil, string, []string, bool, float64, int:
			out[i] = a
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode argument %d: %w", i, err)
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ensureBrowser relaunches a browser that crashed or whose connection died, with
// backoff; the engine keeps its version check, so a relaunch cannot silently change
// the build that answers.
//
// A crashed page costs a relaunch too: Chromium was seen to hang opening a new page
// after its renderers were killed, and Firefox to drop the whole browser connection
// when its content process died. A relaunch took 1.5-3.5 s for Chromium and 9-18 s
// for Firefox on a loaded 2-core machine.
func (e *playwrightEngine) ensureBrowser() (relaunched bool, err error) {
	e.mu.Lock()
	crashed := e.page != nil && pageIsCrashed(e.page)
	lost := e.context != nil && contextClosed(e.context)
	e.mu.Unlock()
	if crashed {
		return e.relaunchBrowser("page crashed", true)
	}
	if lost {
		return e.relaunchBrowser("browser context closed", true)
	}
	return e.relaunchBrowser("browser disconnected", false)
}

// relaunchBrowser relaunches when the browser or its driver is gone, or always when
// force is set; it says whether it relaunched.
func (e *playwrightEngine) relaunchBrowser(reason string, force bool) (bool, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return false, fmt.Errorf("%s: engine closed", e.name)
	}
	// A dead driver takes its browser's connection with it: both are replaced, when
	// the engine owns the driver (a shared one is its owner's to replace).
	deadDriver := e.driver != nil && !e.driver.alive()
	if (!force && !deadDriver && e.browser.IsConnected()) || e.relaunch == nil {
		e.mu.Unlock()
		return false, nil
	}
	if deadDriver {
		reason = "playwright driver exited"
	}
	e.health.State = StateRestarting
	e.health.Restarts++
	e.health.Reason = reason
	old, oldPIDs, oldDriver := e.browser, e.pids, e.driver
	e.page = nil
	e.mu.Unlock()
	// The browser being replaced is broken (crashed, disconnected, stuck, or its
	// driver died): it is killed at once rather than asked to close, which a broken
	// Firefox was seen to take the whole 5 s of closeBrowser over.
	killPIDs(oldPIDs)
	go old.Close()
	if deadDriver {
		if err := oldDriver.Stop(); err != nil {
			e.log.Debug().Str("engine", e.name).Err(err).Msg("stop the dead playwright driver")
		}
		e.log.Warn().Str("engine", e.name).Msg("playwright driver exited; relaunching it and its browser")
	}

	var err error
	start := time.Now()
	for i, wait := range relaunchBackoff {
		time.Sleep(wait)
		e.mu.Lock()
		closed := e.closed
		e.mu.Unlock()
		if closed { // no browser is launched for a closed engine
			return false, fmt.Errorf("%s: engine closed", e.name)
		}
		on, newDriver := e.pw, (*PlaywrightDriver)(nil)
		if deadDriver {
			if newDriver, err = StartPlaywright(e.log); err != nil {
				e.log.Warn().Str("engine", e.name).Int("attempt", i+1).Err(err).Msg("relaunch failed")
				continue
			}
			on = newDriver
		}
		stopNew := func() {
			if newDriver != nil {
				newDriver.Stop()
			}
		}
		var fresh *playwrightEngine
		if fresh, err = e.relaunch(on); err == nil && fresh.version != e.version {
			fresh.Close()
			err = fmt.Errorf("relaunched build is %s, not %s", fresh.version, e.version)
		}
		if err != nil {
			stopNew()
		} else {
			e.mu.Lock()
			if e.closed {
				// Close ran while this browser started: it closed the old one and
				// will never see this one, so it is closed here.
				e.mu.Unlock()
				fresh.Close()
				stopNew()
				return false, fmt.Errorf("%s: engine closed", e.name)
			}
			forgetContext(e.context) // the old browser's, closed with it
			e.browser, e.context, e.page, e.pids, e.pw = fresh.browser, fresh.context, fresh.page, fresh.pids, on
			if newDriver != nil {
				e.driver = newDriver // Close stops it from now on
			}
			e.health.State = StateReady
			e.mu.Unlock()
			e.log.Info().Str("engine", e.name).Int("attempt", i+1).Str("reason", reason).
				Dur("took", time.Since(start)).Msg("browser relaunched")
			return true, nil
		}
		e.log.Warn().Str("engine", e.name).Int("attempt", i+1).Err(err).Msg("relaunch failed")
	}
	e.mu.Lock()
	e.health.State, e.health.Reason = StateFailed, err.Error()
	e.mu.Unlock()
	return false, fmt.Errorf("%s: relaunch failed: %w", e.name, err)
}

func (e *playwrightEngine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	b, pids, driver := e.browser, e.pids, e.driver
	forgetContext(e.context)
	e.mu.Unlock()
	if b != nil {
		e.closeBrowser(b, pids)
	}
	if driver != nil {
		return driver.Stop()
	}
	return nil
}

// closeBrowser asks the browser to close, waits at most 5 s, and then kills its
// process groups whatever happened: a wedged Firefox (a content process in a busy
// loop) was seen to ignore Close and to outlive both its driver and the oracle.
func (e *playwrightEngine) closeBrowser(b playwright.Browser, pids []int) {
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		e.log.Warn().Str("engine", e.name).Ints("pids", pids).Msg("browser did not close in 5s; killing it")
	}
	killPIDs(pids)
}

// killPIDs kills each browser main process and its process group.
func killPIDs(pids []int) {
	for _, pid := range pids {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// children lists the driver's child processes: the browsers it launched.
func (d *PlaywrightDriver) children() map[int]bool {
	out := map[int]bool{}
	driver := d.pw.Pid()
	if driver == 0 {
		return out
	}
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err == nil && proctree.ParsePPid(b) == driver {
			out[pid] = true
		}
	}
	return out
}

func newPIDs(before, after map[int]bool) []int {
	var out []int
	for pid := range after {
		if !before[pid] {
			out = append(out, pid)
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
