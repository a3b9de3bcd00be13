package oracle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/layout-oracle/oracle/oracle/pagecount"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/layout-oracle/oracle/trace"
	"github.com/rs/zerolog"
)

// Launch starts every configured engine at once and returns the oracle once every
// engine has come up or failed (no self-check: Start runs one). An engine that fails
// to launch is logged and left out (requests naming it get "engine not launched");
// Launch fails only when none came up.
func Launch(ctx context.Context, cfg Config, log zerolog.Logger) (*Oracle, error) {
	o, err := start(ctx, cfg, nil, log)
	if err != nil {
		return nil, err
	}
	o.WaitStarted()
	return o.serveOne(cfg.RequireSandbox)
}

// Start launches every configured engine and all its pages in parallel, runs checks
// on each engine as soon as its own pages are up (engines in parallel, an engine's
// checks in order), and returns at once, before any engine serves: ping is answered
// from the first moment, and a case whose answers are all stored under builds known
// from their fingerprints (warmstart.go) needs no engine. The engines keep starting:
// ping reports them as "starting", a request that needs one waits for it within its
// deadline, and one that fails to launch or fails a check is taken out of service
// ("engine not launched", ping's "failed"). Whether any engine came up is known once
// WaitStarted returns (Serving). With cfg.RequireSandbox Start waits for every
// engine and fails when none came up, since the refusal must come before anything is
// served.
func Start(ctx context.Context, cfg Config, checks []SelfCheck, log zerolog.Logger) (*Oracle, error) {
	o, err := start(ctx, cfg, checks, log)
	if err != nil {
		return nil, err
	}
	if !cfg.RequireSandbox {
		return o, nil
	}
	o.WaitStarted()
	return o.serveOne(true)
}

// ErrNoEngine is Launch's error when no engine came up.
var ErrNoEngine = errors.New("no engine launched")

// serveOne returns o when an engine serves (after the sandbox check, when required),
// else closes it with an error.
func (o *Oracle) serveOne(requireSandbox bool) (*Oracle, error) {
	if len(o.Serving()) == 0 {
		return nil, errors.Join(ErrNoEngine, o.Close())
	}
	if requireSandbox {
		if err := o.checkSandboxes(true); err != nil {
			return nil, errors.Join(err, o.Close())
		}
	}
	return o, nil
}

// start validates cfg, starts the origin and one goroutine per engine, and returns
// at once.
func start(ctx context.Context, cfg Config, checks []SelfCheck, log zerolog.Logger) (*Oracle, error) {
	if cfg.Browsers == "" {
		cfg.Browsers = browser.RouteAuto
	}
	switch cfg.Browsers {
	case browser.RouteSystem, browser.RoutePlaywright, browser.RouteAuto:
	default:
		return nil, fmt.Errorf("unknown --browsers %q (known: system, playwright, auto)", cfg.Browsers)
	}
	if len(cfg.Routes) == 0 {
		return nil, errors.New("no route table (Config.Routes)")
	}
	names := cfg.Engines
	if len(names) == 0 {
		names = browser.AllEngines
	}
	names = withEndpointEngines(names, cfg)
	for _, n := range names {
		if !isKnownEngine(n) {
			return nil, fmt.Errorf("unknown engine %q (known: %s)", n, strings.Join(browser.AllEngines, ", "))
		}
	}
	for n := range cfg.EnginePages {
		if !isKnownEngine(n) {
			return nil, fmt.Errorf("unknown engine %q in pages (known: %s)", n, strings.Join(browser.AllEngines, ", "))
		}
	}
	for n := range cfg.EngineRoutes {
		if _, err := cfg.routeOf(n); err != nil {
			return nil, err
		}
	}
	defaultEnginePages(&cfg) // pages.go
	if cfg.Pages <= 0 {
		cfg.Pages = pagecount.Default
	}
	if cfg.Inflight <= 0 {
		cfg.Inflight = defaultInflight(cfg, names)
	}
	o := &Oracle{engines: map[string]*pool.Pool{}, failed: map[string]string{}, profile: cfg.Profile.Name,
		deadline: cfg.Deadline, maxLine: cfg.MaxLine, inflight: cfg.Inflight, log: log,
		starting: map[string]chan struct{}{}, pages: map[string]int{}, endpoints: map[string][]*endpointState{},
		predicted: map[string]engineBuild{}, prints: map[string]string{}, need: map[string]chan struct{}{},
		walk: walkKey(cfg.Routes)}
	if o.deadline <= 0 {
		o.deadline = defaultDeadline
	}
	o.traceLimits = cfg.TraceLimits
	o.artifacts = cfg.Artifacts
	o.progressEvery = cfg.ProgressEvery
	if o.progressEvery == 0 {
		o.progressEvery = DefaultProgressEvery
	}
	o.store = cfg.Store
	o.dumpMaxNodes = cfg.DumpMaxNodes
	o.inertReuse = !cfg.FreshAlways
	o.verify = cfg.Verify
	o.storeMinRuns = cfg.StoreMinRuns
	if o.dumpMaxNodes <= 0 {
		o.dumpMaxNodes = DefaultDumpMaxNodes
	}
	if o.traceLimits.Records <= 0 {
		o.traceLimits.Records = trace.DefaultLimits.Records
	}
	if o.traceLimits.Bytes <= 0 {
		o.traceLimits.Bytes = trace.DefaultLimits.Bytes
	}

	var err error
	if o.origin, err = origin.Start(cfg.OriginListen, log); err != nil {
		return nil, err
	}
	o.closers = append(o.closers, o.origin.Close)
	if cfg.DocRoot != "" {
		d, err := origin.OpenDocRoot(cfg.DocRoot)
		if err != nil {
			o.origin.Close()
			return nil, err
		}
		o.origin.SetDocRoot(d)
		o.closers = append(o.closers, d.Close)
		log.Info().Str("docroot", cfg.DocRoot).Msg("serving the docroot read-only on case origins")
	}
	cfg.originPort = o.origin.Port()
	// Closed after the engines (closers run last first), when their processes are gone.
	o.mem = host.NewMemoryBounds(cfg.EngineMemory, names)
	cfg.mem = o.mem
	o.closers = append(o.closers, o.mem.Close)
	if o.mem.Problem != "" {
		lvl := log.Warn()
		if cfg.EngineMemory <= 0 {
			lvl = log.Info()
		}
		lvl.Str("problem", o.mem.Problem).Msg("engine memory unbounded")
	} else {
		log.Info().Int64("limit", o.mem.Limit).Str("kind", o.mem.Kind).Str("dir", o.mem.Dir).Msg("engine memory bounded: one cgroup per engine")
	}
	if cfg.OriginListen != "" {
		cfg.originHost, _, _ = net.SplitHostPort(cfg.OriginListen)
	}

	// Close cancels startCtx, so launches and checks still under way end early.
	startCtx, cancel := context.WithCancel(ctx)
	o.startCtx, o.startCancel = startCtx, cancel
	o.started = make(chan struct{})
	o.startAt = time.Now()
	for _, name := range names {
		o.starting[name] = make(chan struct{})
		o.need[name] = make(chan struct{})
		o.pages[name] = cfg.totalPages(name)
		o.endpoints[name] = newEndpointStates(cfg, name)
	}
	o.predictBuilds(ctx, cfg, names) // before the first request can be read
	for _, name := range names {
		o.startWG.Add(1)
		go func() {
			defer o.startWG.Done()
			o.startEngine(startCtx, name, cfg, checks)
		}()
	}
	go func() {
		o.startWG.Wait()
		serving := o.Serving()
		ev := o.log.Info()
		if len(serving) == 0 && !o.isClosed() {
			ev = o.log.Error()
		}
		ev.Strs("engines", serving).Str("profile", o.profile).Dur("startup", time.Since(o.startAt)).Msg("startup complete: every engine serving or failed")
		if len(checks) > 0 {
			o.logCheckSummary(serving, len(checks))
		}
		close(o.started)
	}()
	return o, nil
}

// startEngine launches name's pages in parallel, then runs checks on them, then
// publishes the engine, or records why it cannot serve.
func (o *Oracle) startEngine(ctx context.Context, name string, cfg Config, checks []SelfCheck) {
	if len(cfg.endpointsFor(name)) > 0 {
		o.startWithEndpoints(ctx, name, cfg, checks) // remote.go
		return
	}
	if !o.awaitLaunch(ctx, name, cfg) {
		o.decide(name, nil, "not launched: the oracle closed first")
		return
	}
	log := o.log
	t0 := time.Now()
	want := cfg.pagesFor(name)
	asked := cfg // the configuration the build fingerprint was made of
	absent := ""
	if name == browser.WebKit && cfg.Browsers == browser.RouteAuto && cfg.executablePath(name) == "" && want > 1 {
		// Whether a bundled WebKit is installed takes a Playwright driver (a node
		// process) to ask: ask once for the engine, not once per page.
		if b := cfg.Routes.Bundler(); b != nil {
			cfg.Browsers, absent = b.AutoRoute(name, log)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var pages []browser.Engine
	var firstErr error
	for i := 0; i < want; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := launchEngine(ctx, name, cfg, log)
			if err == nil && !o.addCloser(e.Close) {
				err = errors.New("the oracle closed while the engine launched")
			} else if err == nil {
				err = verifyViewport(ctx, e)
				if err == nil {
					// The check ran in the page: the first case gets a fresh global too.
					err = e.Reset(ctx)
				}
				if err != nil {
					if cerr := e.Close(); cerr != nil {
						err = fmt.Errorf("%w (closing it failed too: %v)", err, cerr)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				ev := log.Error()
				if o.isClosed() {
					ev = log.Info() // not a failure: the oracle ended its startup
				}
				ev.Str("engine", name).Int("page", i).Err(err).Msg("engine failed to launch")
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			pages = append(pages, e)
		}()
	}
	wg.Wait()
	launched := time.Since(t0)
	if len(pages) == 0 {
		o.decide(name, nil, firstErr.Error())
		return
	}
	if err := sameBuild(pages); err != nil {
		for _, e := range pages {
			e.Close()
		}
		o.decide(name, nil, err.Error())
		return
	}
	if len(pages) < want {
		log.Warn().Str("engine", name).Int("pages", len(pages)).Int("wanted", want).Msg("serving with fewer pages")
	}
	p := pool.New(name, pages)
	o.noteBuild(name, buildOf(p))
	if absent == "" {
		absent = browser.BundledAbsent(pages[0])
	}
	o.settleBuild(ctx, name, asked, buildOf(p), absent) // warmstart.go
	var checked time.Duration
	if len(checks) > 0 {
		c0 := time.Now()
		reasons := o.checkEngine(ctx, p, checks)
		checked = time.Since(c0)
		if reasons != "" {
			reason := "failed self-check: " + reasons
			ev := log.Error()
			if o.isClosed() {
				ev = log.Info() // cut short by Close, not the engine's fault
			}
			ev.Str("engine", name).Str("reason", reason).Dur("self_check", checked).Msg("self-check failed")
			o.closePool(name, p)
			o.decide(name, nil, reason)
			return
		}
		log.Info().Str("engine", name).Int("checks", len(checks)).Dur("took", checked).Msg("self-check passed")
	}
	o.logSandbox(name, p)
	o.decide(name, p, "")
	log.Info().Str("engine", name).Int("pages", len(pages)).Str("version", p.Version()).Str("route", p.Route()).
		Dur("launch", launched).Dur("self_check", checked).Dur("ready_after", time.Since(o.startAt)).Msg("engine serving")
}

// warmLaunchDelay is how long an engine whose build is known from its fingerprint
// waits before launching, unless a case needs it live first: a warm rerun answered
// wholly from the store ends before any browser starts, and so exits at once instead
// of waiting for launches under way (Close cannot interrupt a Playwright launch).
const warmLaunchDelay = 2 * time.Second

// awaitLaunch returns when name's launch should begin: at once, unless its build is
// known from its fingerprint; then after warmLaunchDelay or when a case needs the
// live engine (needLive). false: the oracle closed first.
func (o *Oracle) awaitLaunch(ctx context.Context, name string, cfg Config) bool {
	o.stateMu.RLock()
	_, predicted := o.predicted[name]
	need := o.need[name]
	o.stateMu.RUnlock()
	if !predicted || cfg.RequireSandbox || need == nil {
		return true
	}
	t := time.NewTimer(warmLaunchDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-need:
		o.log.Debug().Str("engine", name).Msg("a case needs the live engine: launching it now")
	case <-ctx.Done():
		return false
	}
	return true
}

// addCloser registers close for Close, or, when Close already ran, runs it now and
// reports false: a browser whose launch ended after Close must not outlive the oracle.
func (o *Oracle) addCloser(close func() error) bool {
	o.closeMu.Lock()
	if !o.closed {
		o.closers = append(o.closers, close)
		o.closeMu.Unlock()
		return true
	}
	o.closeMu.Unlock()
	close()
	return false
}

// logCheckSummary logs the self-check's outcome over every engine, as one line
// ("self-check", passed, each failed engine's reason), once every engine is decided.
func (o *Oracle) logCheckSummary(passed []string, checks int) {
	o.stateMu.RLock()
	failed := map[string]string{}
	for name, why := range o.failed {
		if strings.HasPrefix(why, "failed self-check: ") {
			failed[name] = why
		}
	}
	o.stateMu.RUnlock()
	ev := o.log.Info()
	if len(failed) > 0 && !o.isClosed() {
		ev = o.log.Error()
		for _, name := range sortedKeys(failed) {
			ev = ev.Str(name, failed[name])
		}
	}
	ev.Strs("passed", passed).Int("checks", checks).Dur("took", time.Since(o.startAt)).Msg("self-check")
}

// isClosed says whether Close ran or the start's context ended (a signal during
// startup): launches and checks then fail on purpose, which is logged as info.
func (o *Oracle) isClosed() bool {
	if o.startCtx != nil && o.startCtx.Err() != nil {
		return true
	}
	o.closeMu.Lock()
	defer o.closeMu.Unlock()
	return o.closed
}

// checkEngine runs checks, in order, on p alone, before it serves; it returns what
// failed, or "". The checks run live: a stored answer (same build, same route) would
// pass a broken engine, and is the engine's answer of another day.
func (o *Oracle) checkEngine(ctx context.Context, p *pool.Pool, checks []SelfCheck) string {
	ctx = withoutStore(context.WithValue(ctx, checkPoolKey{}, p))
	var reasons []string
	for i, c := range checks {
		if ctx.Err() != nil { // the oracle is closing
			reasons = append(reasons, "not run: "+ctx.Err().Error())
			break
		}
		resp := o.Handle(ctx, c.NewRequest(fmt.Sprintf("self-check-%d-%s-%s", i, c.Name, p.Name()), []string{p.Name()}))
		if msg := checkFailures(c, resp, []string{p.Name()})[p.Name()]; msg != "" {
			reasons = append(reasons, c.Name+": "+msg)
		}
	}
	return strings.Join(reasons, "; ")
}

// logSandbox logs engine's sandbox as /proc shows it once its pages are open.
func (o *Oracle) logSandbox(name string, p *pool.Pool) {
	st, ok := p.ScanSandbox()
	if !ok {
		return
	}
	if st.On {
		o.log.Info().Str("engine", name).Str("user", st.User).Str("sandbox", st.Sandbox).Msg("sandbox on")
	} else {
		o.log.Warn().Str("engine", name).Str("user", st.User).Str("reason", st.Reason).Msg("sandbox unavailable")
	}
}

// checkSandboxes, with require, refuses to go on when a serving engine's sandbox is off.
func (o *Oracle) checkSandboxes(require bool) error {
	if !require {
		return nil
	}
	states := map[string]browser.SandboxState{}
	for _, name := range o.Serving() {
		o.stateMu.RLock()
		p := o.engines[name]
		o.stateMu.RUnlock()
		if st, ok := p.ScanSandbox(); ok {
			states[name] = st
		}
	}
	return browser.RequireSandboxes(states)
}

// sameBuild refuses a pool whose pages would answer from different builds.
func sameBuild(pages []browser.Engine) error {
	for _, e := range pages[1:] {
		if e.Version() != pages[0].Version() || e.Route() != pages[0].Route() {
			return fmt.Errorf("%s: pages launched different builds: %s (%s) and %s (%s)",
				e.Name(), pages[0].Version(), pages[0].Route(), e.Version(), e.Route())
		}
	}
	return nil
}

// launchEngine launches one page of engine with this process's launch settings
// over the route table.
func launchEngine(ctx context.Context, name string, cfg Config, log zerolog.Logger) (browser.Engine, error) {
	s, err := settingsFor(cfg)
	if err != nil {
		return nil, err
	}
	s.MemoryCgroup = cfg.mem.Procs(name)
	route, err := cfg.routeOf(name)
	if err != nil {
		return nil, err
	}
	return cfg.Routes.Launch(ctx, name, cfg.Browsers, route, browser.RouteLaunch{Exe: cfg.executablePath(name), Settings: s}, log)
}

// verifyViewport checks the page really is the spec's 800x600 before it serves a case.
func verifyViewport(ctx context.Context, e browser.Engine) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	raw, err := e.Load(ctx, "", inpage.ViewportCheck)
	if err != nil {
		return fmt.Errorf("viewport check: %w", err)
	}
	want := fmt.Sprintf("[%g,%g]", dump.Viewport.Width, dump.Viewport.Height)
	if string(raw) != want {
		return fmt.Errorf("viewport is %s, want %s", raw, want)
	}
	return nil
}
