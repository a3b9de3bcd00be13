package oracle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/layout-oracle/oracle/oracle/remote"
	"github.com/rs/zerolog"
)

// Remote endpoints (docs/remote.md): browsers on other hosts, reached
// through Playwright's browser server (--connect) or a W3C WebDriver endpoint
// (--webdriver). Each endpoint's pages join its engine's pool beside any local pages,
// under the same guarantees: the same context options, reset, deadline and startup
// self-check (the environment probe among them), the version from that endpoint's
// browser, and reconnection with backoff. An endpoint that fails the self-check, whose
// browser is another build than the engine's, or whose build changed on reconnect is
// out of service: its pages leave the pool and ping names it with the reason.

// endpointsFor is engine's configured endpoints, in flag order.
func (c Config) endpointsFor(engine string) []remote.Endpoint {
	var out []remote.Endpoint
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
func (c Config) endpointPages(ep remote.Endpoint) int {
	switch {
	case ep.Pages > 0:
		return ep.Pages
	case ep.Protocol == remote.WebDriver:
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

// endpointHealth is one endpoint (or an engine's local pages) as ping reports it.
type endpointHealth struct {
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
	ep    remote.Endpoint // URL "" for local pages
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

// Refuse takes the endpoint out of service, once (the first reason stays).
func (s *endpointState) Refuse(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	if s.refused == "" {
		s.refused = reason
	}
}

// Refused is why the endpoint is out of service, "" while it may serve.
func (s *endpointState) Refused() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

func (s *endpointState) isRefused() bool { return s.Refused() != "" }

func (s *endpointState) health() endpointHealth {
	s.mu.Lock()
	pages, refused, started := s.pages, s.refused, s.started
	h := endpointHealth{Engine: s.ep.Engine, Endpoint: s.label(), Route: s.route, Version: s.version}
	s.mu.Unlock()
	switch {
	case refused != "":
		h.State, h.Reason = remote.StateOutOfService, refused
		return h
	case !started:
		h.State = browser.StateStarting
		return h
	}
	ph := pool.HealthOf(pages)
	h.State, h.Pages, h.Restarts, h.Reason = ph.State, ph.Pages, ph.Restarts, ph.Reason
	return h
}

// startWithEndpoints is startEngine for an engine with remote endpoints: its local
// pages (if any) and every endpoint's pages launch at once; each group (the local
// pages, one endpoint) is launched and checked on its own, so the one that fails is
// taken out of service alone. The engine serves as soon as its reference group is
// up: the local pages when it has any, else the first endpoint to come up; every
// other group joins the serving pool when it is up, so a slow endpoint holds no other
// page, and only when it runs the reference's build.
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
	var p *pool.Pool
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
		if extra := p.Add(g.pages); len(extra) > 0 { // cannot happen: the pool has room for every page
			closeAll(extra)
		}
		if g != ref {
			log.Info().Str("engine", name).Str("endpoint", g.label()).Int("pages", len(g.pages)).
				Dur("after", time.Since(t0)).Msg("endpoint joined the serving engine")
		}
	}
	serve := func(g *endpointState, rest []*endpointState) {
		ref = g
		p = pool.NewWithRoom(name, nil, cfg.totalPages(name))
		join(g)
		for _, h := range rest {
			join(h)
		}
		held = nil
		o.logSandbox(name, p)
		o.decide(name, p, "")
		log.Info().Str("engine", name).Int("pages", len(p.All())).Str("version", p.Version()).Str("route", p.Route()).
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
				if g.ep.Protocol == remote.WebDriver {
					g.launchMu.Lock()
				}
				e, err = launchRemote(ctx, g.ep, cfg, log)
				if g.ep.Protocol == remote.WebDriver {
					g.launchMu.Unlock()
				}
				if err == nil {
					e = remote.NewPage(e, g)
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
		g.Refuse("no page came up: " + browser.FirstLine(firstErr))
		return
	}
	if err := sameBuild(pages); err != nil {
		closeAll(pages)
		g.Refuse(err.Error())
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
	p := pool.New(name, pages)
	if reasons := o.checkEngine(ctx, p, checks); reasons != "" {
		log.Error().Str("engine", name).Str("endpoint", g.label()).Str("reason", reasons).Msg("self-check failed; endpoint out of service")
		o.closePool(name, p)
		g.Refuse("failed self-check: " + reasons)
		return
	}
	// The pages move to the engine's pool: the reset after the last check must be
	// over first, or the first request meets a page in the middle of it (Firefox's
	// remote page closed under a trace case).
	back := p.Drain(recoveryAllowance)
	for _, e := range pages {
		if !slices.Contains(back, e) {
			e.Close()
		}
	}
	g.mu.Lock()
	g.pages = back
	g.mu.Unlock()
	if len(back) == 0 {
		g.Refuse("no page came back from the self-check")
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
		out = append(out, &endpointState{ep: remote.Endpoint{Engine: engine}, local: true})
	}
	for _, ep := range eps {
		out = append(out, &endpointState{ep: ep})
	}
	return out
}

// endpointHealth lists every endpoint of every engine, in AllEngines and flag order,
// for ping; nil when there are none.
func (o *Oracle) endpointHealth() []endpointHealth {
	var out []endpointHealth
	for _, name := range browser.AllEngines {
		for _, g := range o.endpoints[name] {
			out = append(out, g.health())
		}
	}
	return out
}

// launchRemote opens one page on ep with this process's launch settings.
func launchRemote(ctx context.Context, ep remote.Endpoint, cfg Config, log zerolog.Logger) (browser.Engine, error) {
	l, err := cfg.remoteLaunch(ep.Engine)
	if err != nil {
		return nil, err
	}
	return remote.Open(ctx, cfg.Routes, ep, l, log)
}

// remoteLaunch is what a page on an endpoint of engine is opened with, the proxy
// included: the origin's listening address, else its port on 127.0.0.1.
func (c Config) remoteLaunch(engine string) (browser.RemoteLaunch, error) {
	s, err := settingsFor(c)
	if err != nil {
		return browser.RemoteLaunch{}, err
	}
	proxy := c.originProxy()
	if proxy == "" && c.originPort != 0 {
		proxy = net.JoinHostPort("127.0.0.1", strconv.Itoa(c.originPort))
	}
	return browser.RemoteLaunch{Settings: s, Browsers: c.Browsers, Exe: c.executablePath(engine), Proxy: proxy}, nil
}

// originProxy is the host:port every browser gets as its proxy: the origin's own
// listening address.
func (c Config) originProxy() string {
	if c.originHost == "" {
		return ""
	}
	return net.JoinHostPort(c.originHost, strconv.Itoa(c.originPort))
}
