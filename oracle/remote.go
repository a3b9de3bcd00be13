package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// Remote endpoints (issue 13, docs/remote.md): browsers on other hosts, reached
// through Playwright's browser server (--connect) or a W3C WebDriver endpoint
// (--webdriver). Each endpoint's pages join its engine's pool beside any local pages,
// under the same guarantees: the same context options, reset, deadline and startup
// self-check (the environment probe among them), the version from that endpoint's
// browser, and reconnection with backoff. An endpoint that fails the self-check, whose
// browser is another build than the engine's, or whose build changed on reconnect is
// out of service: its pages leave the pool and ping names it with the reason.

// Endpoint protocols.
const (
	EndpointPlaywright = "playwright" // Playwright's browser server (run-server, launchServer), BrowserType.Connect
	EndpointWebDriver  = "webdriver"  // a W3C WebDriver endpoint: a bare driver or a Grid, one session per page
)

// stateOutOfService is an endpoint's state once it was taken out of service (ping's
// "endpoints"); its reason says why.
const stateOutOfService = "out-of-service"

// Endpoint is one remote browser endpoint.
type Endpoint struct {
	Engine   string
	URL      string
	Protocol string // EndpointPlaywright or EndpointWebDriver
	Pages    int    // pages (connections, sessions) on it; 0: endpointPages's default
}

// ParseEndpoint parses one --connect (protocol EndpointPlaywright) or --webdriver
// (EndpointWebDriver) value: ENGINE=URL, or ENGINE:PAGES=URL.
func ParseEndpoint(protocol, s string) (Endpoint, error) {
	flag := map[string]string{EndpointPlaywright: "--connect", EndpointWebDriver: "--webdriver"}[protocol]
	if flag == "" {
		return Endpoint{}, fmt.Errorf("unknown endpoint protocol %q", protocol)
	}
	key, raw, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || raw == "" {
		return Endpoint{}, fmt.Errorf("%s %q: want ENGINE=URL or ENGINE:PAGES=URL", flag, s)
	}
	ep := Endpoint{Protocol: protocol, URL: raw}
	name, pages, hasPages := strings.Cut(key, ":")
	ep.Engine = strings.TrimSpace(name)
	if hasPages {
		n, err := strconv.Atoi(strings.TrimSpace(pages))
		if err != nil || n <= 0 {
			return Endpoint{}, fmt.Errorf("%s %q: the page count must be a number of at least 1", flag, s)
		}
		ep.Pages = n
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Endpoint{}, fmt.Errorf("%s %q: not a URL with a host", flag, s)
	}
	switch protocol {
	case EndpointPlaywright:
		if ep.Engine != browser.Chromium && ep.Engine != browser.Firefox {
			return Endpoint{}, fmt.Errorf("%s %q: Playwright's server serves chromium or firefox here (stock WebKitGTK is reached over --webdriver)", flag, s)
		}
		if u.Scheme != "ws" && u.Scheme != "wss" {
			return Endpoint{}, fmt.Errorf("%s %q: want a ws:// or wss:// URL", flag, s)
		}
	case EndpointWebDriver:
		if ep.Engine != browser.WebKit {
			return Endpoint{}, fmt.Errorf("%s %q: the WebDriver route serves webkit", flag, s)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return Endpoint{}, fmt.Errorf("%s %q: want an http:// or https:// URL", flag, s)
		}
	}
	return ep, nil
}

// endpointsFor is engine's configured endpoints, in flag order.
func (c Config) endpointsFor(engine string) []Endpoint {
	var out []Endpoint
	for _, ep := range c.Endpoints {
		if ep.Engine == engine {
			out = append(out, ep)
		}
	}
	return out
}

// localPages is how many local pages engine gets: an engine with endpoints gets
// local pages only when --pages names it (engine=count), so that remote endpoints
// alone are the default for it.
func (c Config) localPages(engine string) int {
	if len(c.endpointsFor(engine)) == 0 {
		return c.pagesFor(engine)
	}
	return c.EnginePages[engine]
}

// endpointPages is ep's page count: its own, else --pages for a Playwright server
// (one browser per connection), else 1 for a WebDriver endpoint: a bare
// WebKitWebDriver holds one session at a time ("Maximum number of active
// sessions"); a Grid with more nodes is given webkit:N=URL.
func (c Config) endpointPages(ep Endpoint) int {
	switch {
	case ep.Pages > 0:
		return ep.Pages
	case ep.Protocol == EndpointWebDriver:
		return 1
	}
	return c.Pages
}

// totalPages is engine's local pages plus its endpoints' pages.
func (c Config) totalPages(engine string) int {
	n := c.localPages(engine)
	for _, ep := range c.endpointsFor(engine) {
		n += c.endpointPages(ep)
	}
	return n
}

// withEndpointEngines adds the engines that have endpoints to names.
func withEndpointEngines(names []string, cfg Config) []string {
	for _, ep := range cfg.Endpoints {
		names = append(names, ep.Engine)
	}
	return uniq(names)
}

// EndpointHealth is one endpoint (or an engine's local pages) as ping reports it.
type EndpointHealth struct {
	Engine   string `json:"engine"`
	Endpoint string `json:"endpoint"` // the URL, or "local"
	Route    string `json:"route,omitempty"`
	Version  string `json:"version,omitempty"`
	State    string `json:"state"` // starting, ready, restarting, failed, out-of-service
	Pages    int    `json:"pages"` // pages up on it
	Restarts int    `json:"restarts"`
	Reason   string `json:"reason,omitempty"`
}

// endpointState is one endpoint's (or one engine's local pages') standing.
type endpointState struct {
	ep    Endpoint // URL "" for local pages
	local bool
	// launchMu opens a WebDriver endpoint's sessions one at a time: a bare
	// WebKitWebDriver asked for two at once was seen to break both (one "invalid
	// session id", the other hanging), where one at a time the second is refused
	// at once ("Maximum number of active sessions").
	launchMu sync.Mutex

	mu      sync.Mutex
	pages   []browser.Engine
	version string
	route   string
	started bool   // launched and checked: serving or refused
	refused string // why it is out of service; "" while it may serve
}

func (s *endpointState) label() string {
	if s.local {
		return "local"
	}
	return s.ep.URL
}

// refuse takes the endpoint out of service, once (the first reason stays).
func (s *endpointState) refuse(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	if s.refused == "" {
		s.refused = reason
	}
}

func (s *endpointState) isRefused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused != ""
}

func (s *endpointState) health() EndpointHealth {
	s.mu.Lock()
	pages, refused, started := s.pages, s.refused, s.started
	h := EndpointHealth{Engine: s.ep.Engine, Endpoint: s.label(), Route: s.route, Version: s.version}
	s.mu.Unlock()
	switch {
	case refused != "":
		h.State, h.Reason = stateOutOfService, refused
		return h
	case !started:
		h.State = browser.StateStarting
		return h
	}
	ph := newPoolHealth(pages)
	h.State, h.Pages, h.Restarts, h.Reason = ph.State, ph.Pages, ph.Restarts, ph.Reason
	return h
}

// endpointPage is a page on a remote endpoint: the backend's Engine, plus the
// endpoint it belongs to, which a version change on reconnection takes out of
// service. It has no Sandbox: a remote host's processes are not in this /proc.
type endpointPage struct {
	browser.Engine
	ep *endpointState
}

// note refuses the endpoint when err says its build changed.
func (p *endpointPage) note(err error) error {
	if err != nil && errors.Is(err, browser.ErrVersionChanged) {
		p.ep.refuse("refused on reconnection: " + browser.FirstLine(err))
	}
	return err
}

func (p *endpointPage) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	r, err := p.Engine.Load(ctx, html, fn, args...)
	return r, p.note(err)
}

func (p *endpointPage) LoadURL(ctx context.Context, u, fn string, args ...any) (json.RawMessage, error) {
	r, err := p.Engine.LoadURL(ctx, u, fn, args...)
	return r, p.note(err)
}

func (p *endpointPage) Visit(ctx context.Context, u, fn string, args ...any) (json.RawMessage, error) {
	r, err := p.Engine.Visit(ctx, u, fn, args...)
	return r, p.note(err)
}

func (p *endpointPage) Reset(ctx context.Context) error { return p.note(p.Engine.Reset(ctx)) }

func (p *endpointPage) Health() browser.Health {
	p.ep.mu.Lock()
	refused := p.ep.refused
	p.ep.mu.Unlock()
	if refused != "" {
		h := p.Engine.Health()
		h.State, h.Reason = stateOutOfService, refused
		return h
	}
	return p.Engine.Health()
}

// Prepare checks the page before a case as the backend does.
func (p *endpointPage) Prepare(ctx context.Context) error {
	if pr, ok := p.Engine.(preparer); ok {
		return p.note(pr.Prepare(ctx))
	}
	return nil
}

// RunsInitScripts is the backend's: Playwright's pages get the recorder by init script.
func (p *endpointPage) RunsInitScripts() bool { return hasRecorderInitScript(p.Engine) }

// Screenshot is the backend's.
func (p *endpointPage) Screenshot(ctx context.Context) ([]byte, error) {
	if s, ok := p.Engine.(screenshotter); ok {
		return s.Screenshot(ctx)
	}
	return nil, fmt.Errorf("%s: this route takes no screenshots", p.Name())
}

// outOfService says whether a page left service for good (its endpoint was refused):
// the pool then drops it instead of handing it out again.
func outOfService(e browser.Engine) bool {
	p, ok := e.(*endpointPage)
	return ok && p.ep.isRefused()
}

// remoteLaunchWithin bounds opening one page on a remote WebDriver endpoint.
const remoteLaunchWithin = 2 * time.Minute

// launchRemote opens one page on ep.
func launchRemote(ctx context.Context, ep Endpoint, cfg Config, log zerolog.Logger) (browser.Engine, error) {
	s, err := settingsFor(cfg)
	if err != nil {
		return nil, err
	}
	switch ep.Protocol {
	case EndpointWebDriver:
		// A remote driver may never answer (a bare WebKitWebDriver asked for a second
		// session was seen to leave the request hanging): the launch has a bound.
		lctx, cancel := context.WithTimeout(ctx, remoteLaunchWithin)
		defer cancel()
		return browser.LaunchWebDriver(lctx, browser.WebDriverOptions{RemoteURL: ep.URL, BrowserArgs: s.WebKitArgs,
			Capabilities: s.WebDriverCaps, MaxReply: s.MaxReply}, log)
	case EndpointPlaywright:
		pw, err := browser.StartPlaywright(log)
		if err != nil {
			return nil, err
		}
		opts, proxy := remotePlaywrightOptions(cfg, ep.Engine, s)
		e, err := pw.ConnectPlaywright(ep.URL, remoteRoute(cfg.Browsers), proxy, opts, log)
		if err != nil {
			return nil, errors.Join(err, pw.Stop())
		}
		browser.OwnDriver(e, pw)
		return e, nil
	}
	return nil, fmt.Errorf("unknown endpoint protocol %q", ep.Protocol)
}

// remotePlaywrightOptions is what a Playwright server endpoint of engine is asked
// for, and the proxy it is told to use.
func remotePlaywrightOptions(cfg Config, engine string, s browser.LaunchSettings) (browser.PlaywrightOptions, string) {
	opts := browser.PlaywrightOptions{Engine: engine, Permissions: s.Permissions, InitScripts: s.InitScripts,
		ExecutablePath: cfg.executablePath(engine), MaxMessage: s.MaxReply, Emulation: s.Emulation}
	switch engine {
	case browser.Chromium:
		opts.Args = s.ChromiumArgs
	case browser.Firefox:
		opts.FirefoxPrefs = s.FirefoxPrefs
		opts.Permissions = nil
	}
	proxy := cfg.originProxy()
	if proxy == "" && cfg.originPort != 0 {
		proxy = net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.originPort))
	}
	return opts, proxy
}

// remoteRoute is the build a Playwright server is asked to launch under --browsers:
// the system builds (Debian's Chromium, Firefox ESR over BiDi) unless --browsers
// says playwright; a server's host cannot be asked which are installed, and an
// endpoint URL's own launch-options override either (docs/remote.md).
func remoteRoute(browsers string) string {
	if browsers == browser.RoutePlaywright {
		return browser.RoutePlaywright
	}
	return browser.RouteSystem
}

// startWithEndpoints is startEngine for an engine with remote endpoints: its local
// pages (if any) and every endpoint's pages launch at once; each group (the local
// pages, one endpoint) is launched and checked on its own, so the one that fails is
// taken out of service alone. The engine serves as soon as its reference group is
// up: the local pages when it has any, else the first endpoint to come up; every
// other group joins the serving pool when it is up, so a slow endpoint holds no other
// page (issue 26 item 8), and only when it runs the reference's build.
func (o *Oracle) startWithEndpoints(ctx context.Context, name string, cfg Config, checks []SelfCheck) {
	log := o.log
	t0 := time.Now()
	o.stateMu.RLock()
	groups := o.endpoints[name]
	o.stateMu.RUnlock()
	hasLocal := len(groups) > 0 && groups[0].local
	arrived := make(chan *endpointState, len(groups))
	for _, g := range groups {
		go func() {
			o.startGroup(ctx, name, cfg, checks, g, g.local || !hasLocal)
			arrived <- g
		}()
	}
	var p *pool
	var ref *endpointState
	var held []*endpointState // up before the reference: they join once it serves
	var reasons []string
	join := func(g *endpointState) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.started = true
		if g.refused == "" && g.version != ref.version {
			g.refused = fmt.Sprintf("runs %s %s, not the engine's %s (from %s)", name, g.version, ref.version, ref.label())
			closeAll(g.pages)
		}
		if g.refused != "" {
			reasons = append(reasons, g.label()+": "+g.refused)
			log.Error().Str("engine", name).Str("endpoint", g.label()).Str("reason", g.refused).Msg("endpoint out of service")
			return
		}
		if extra := p.add(g.pages); len(extra) > 0 { // cannot happen: the pool has room for every page
			closeAll(extra)
		}
		if g != ref {
			log.Info().Str("engine", name).Str("endpoint", g.label()).Int("pages", len(g.pages)).
				Dur("after", time.Since(t0)).Msg("endpoint joined the serving engine")
		}
	}
	serve := func(g *endpointState, rest []*endpointState) {
		ref = g
		p = newPoolFor(name, nil, cfg.totalPages(name))
		join(g)
		for _, h := range rest {
			join(h)
		}
		held = nil
		o.logSandbox(name, p)
		o.decide(name, p, "")
		log.Info().Str("engine", name).Int("pages", len(p.all())).Str("version", p.version()).Str("route", p.route()).
			Dur("launch", time.Since(t0)).Dur("ready_after", time.Since(o.startAt)).Msg("engine serving")
	}
	for range groups {
		g := <-arrived
		switch {
		case p != nil:
			join(g)
		case g.isRefused():
			join0(g, &reasons, log, name)
			if g.local && len(held) > 0 { // the local pages failed: the first endpoint up serves
				serve(held[0], held[1:])
			}
		case hasLocal && !g.local && !groups[0].isStarted():
			held = append(held, g) // the local pages are still on their way
		default:
			serve(g, held)
		}
	}
	if p == nil {
		o.decide(name, nil, "no endpoint serves: "+strings.Join(reasons, "; "))
	}
}

// join0 records a group refused before any group served.
func join0(g *endpointState, reasons *[]string, log zerolog.Logger, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started = true
	*reasons = append(*reasons, g.label()+": "+g.refused)
	log.Error().Str("engine", name).Str("endpoint", g.label()).Str("reason", g.refused).Msg("endpoint out of service")
}

func (s *endpointState) isStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// startGroup launches g's pages in parallel and runs checks on them; it returns with
// g.pages up and checked, or g refused. note says whether ping may give g's build as
// the engine's while it starts.
func (o *Oracle) startGroup(ctx context.Context, name string, cfg Config, checks []SelfCheck, g *endpointState, note bool) {
	log := o.log
	want := cfg.localPages(name)
	if !g.local {
		want = cfg.endpointPages(g.ep)
	}
	var wg sync.WaitGroup
	var firstErr error
	for i := 0; i < want; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var e browser.Engine
			var err error
			if g.local {
				e, err = launchEngine(ctx, name, cfg, log)
			} else {
				if g.ep.Protocol == EndpointWebDriver {
					g.launchMu.Lock()
				}
				e, err = launchRemote(ctx, g.ep, cfg, log)
				if g.ep.Protocol == EndpointWebDriver {
					g.launchMu.Unlock()
				}
				if err == nil {
					e = &endpointPage{Engine: e, ep: g}
				}
			}
			if err == nil && !o.addCloser(e.Close) {
				err = errors.New("the oracle closed while the engine launched")
			} else if err == nil {
				if err = verifyViewport(ctx, e); err == nil {
					err = e.Reset(ctx)
				}
				if err != nil {
					e.Close()
				}
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if err != nil {
				log.Error().Str("engine", name).Str("endpoint", g.label()).Int("page", i).Err(err).Msg("page failed to launch")
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			g.pages = append(g.pages, e)
		}()
	}
	wg.Wait()

	g.mu.Lock()
	pages := g.pages
	g.mu.Unlock()
	if len(pages) == 0 {
		g.refuse("no page came up: " + browser.FirstLine(firstErr))
		return
	}
	if err := sameBuild(pages); err != nil {
		closeAll(pages)
		g.refuse(err.Error())
		return
	}
	g.mu.Lock()
	g.version, g.route = pages[0].Version(), pages[0].Route()
	g.mu.Unlock()
	if note {
		o.noteBuild(name, engineBuild{version: g.version})
	}
	if len(checks) == 0 {
		return
	}
	p := newPool(name, pages)
	if reasons := o.checkEngine(ctx, p, checks); reasons != "" {
		log.Error().Str("engine", name).Str("endpoint", g.label()).Str("reason", reasons).Msg("self-check failed; endpoint out of service")
		o.closePool(name, p)
		g.refuse("failed self-check: " + reasons)
		return
	}
	// The pages move to the engine's pool: the reset after the last check must be
	// over first, or the first request meets a page in the middle of it (Firefox's
	// remote page closed under a trace case).
	back := p.drain(recoveryAllowance)
	for _, e := range pages {
		if !slices.Contains(back, e) {
			e.Close()
		}
	}
	g.mu.Lock()
	g.pages = back
	g.mu.Unlock()
	if len(back) == 0 {
		g.refuse("no page came back from the self-check")
	}
}

func closeAll(pages []browser.Engine) {
	for _, e := range pages {
		e.Close()
	}
}

// newEndpointStates is the standing of every group of engine's pages: its local
// pages (when it has any), then each endpoint in flag order.
func newEndpointStates(cfg Config, engine string) []*endpointState {
	eps := cfg.endpointsFor(engine)
	if len(eps) == 0 {
		return nil
	}
	var out []*endpointState
	if cfg.localPages(engine) > 0 {
		out = append(out, &endpointState{ep: Endpoint{Engine: engine}, local: true})
	}
	for _, ep := range eps {
		out = append(out, &endpointState{ep: ep})
	}
	return out
}

// endpointHealth lists every endpoint of every engine, in AllEngines and flag order,
// for ping; nil when there are none.
func (o *Oracle) endpointHealth() []EndpointHealth {
	var out []EndpointHealth
	for _, name := range browser.AllEngines {
		for _, g := range o.endpoints[name] {
			out = append(out, g.health())
		}
	}
	return out
}

// OriginProxy is the host:port every browser gets as its proxy: the origin's own
// listening address.
func (c Config) originProxy() string {
	if c.originHost == "" {
		return ""
	}
	return net.JoinHostPort(c.originHost, strconv.Itoa(c.originPort))
}

// BrowserHostEnv is the environment (KEY=VALUE) a browser host's server must give
// the browsers of engine for the pinned environment: what a local launch puts in the
// browser's environment, which neither Playwright's server protocol nor WebDriver
// carries. It writes the pinned environment's files on this machine (`oracle
// browser-env` run on the browser host; docs/remote.md).
func BrowserHostEnv(engine string) ([]string, error) {
	s, err := browser.EnvironmentSettings()
	if err != nil {
		return nil, err
	}
	env := host.WithEnv(nil, s.Env)
	if engine == browser.WebKit {
		env = host.WithEnv(env, s.WebKitEnv)
	}
	return env, nil
}
