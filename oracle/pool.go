package oracle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/remote"
)

// pool is one engine's pages: each an Engine serving one call at a time. A request
// takes a free page, uses it, and gives it back after a reset to a fresh about:blank.
type pool struct {
	name string
	// pages grows when a slow remote endpoint joins a serving pool (remote.go, add);
	// pagesMu guards it, and free has room for every page the engine may have.
	pagesMu sync.Mutex
	pages   []browser.Engine
	free    chan browser.Engine

	// dropped counts pages taken out of service for good (a remote endpoint whose
	// build changed, remote.go); gone closes when every page is.
	dropMu  sync.Mutex
	dropped map[browser.Engine]bool
	gone    chan struct{}

	// kept counts, per page, the inert cases its current document has held since
	// the page last had a new one (keep); a page not in it has a new document.
	keptMu sync.Mutex
	kept   map[browser.Engine]int

	// The sandbox as ping reports it: the last /proc scan's, which can retry for 2 s,
	// so ping never runs one (issue 27); each read starts the next scan in the
	// background, at most one at a time. Scanned first at startup (logSandbox).
	sbMu       sync.Mutex
	sbState    browser.SandboxState
	sbOK       bool // sbState holds a page's state
	sbScanning bool
}

// maxKept bounds how many inert cases one document holds in turn before the page
// gets a new one anyway, so nothing a document accumulates grows without bound.
const maxKept = 200

// keep says whether e may skip its reset after the inert case it just answered: the
// engine kept its page as the case left it (browser.Keeper), for the next case that
// is inert too. It counts the case on e's document.
func (p *pool) keep(e browser.Engine) bool {
	k, ok := e.(browser.Keeper)
	if !ok {
		return false
	}
	p.keptMu.Lock()
	defer p.keptMu.Unlock()
	if p.kept[e] >= maxKept || !k.Keep() {
		delete(p.kept, e)
		return false
	}
	if p.kept == nil {
		p.kept = map[browser.Engine]int{}
	}
	p.kept[e]++
	return true
}

// fresh records that e has a new document (it was reset).
func (p *pool) fresh(e browser.Engine) {
	p.keptMu.Lock()
	defer p.keptMu.Unlock()
	delete(p.kept, e)
}

// holdsKept says whether e's document holds an inert case it kept.
func (p *pool) holdsKept(e browser.Engine) bool {
	p.keptMu.Lock()
	defer p.keptMu.Unlock()
	return p.kept[e] > 0
}

// inertKey marks a request context whose case is inert (oracle/inert): its page may
// be kept for the next inert case instead of reset.
type inertKey struct{}

func withInert(ctx context.Context) context.Context { return context.WithValue(ctx, inertKey{}, true) }

func isInert(ctx context.Context) bool { return ctx.Value(inertKey{}) != nil }

// keepVetoKey holds a *keepVeto in a case's context: an inert case whose answer
// stands but whose window may not hold the next inert case says why in it (unkeep).
type keepVetoKey struct{}

type keepVeto struct {
	mu  sync.Mutex
	why string
}

// unkeep records that the page ctx's case ran on may not be kept, and why.
func unkeep(ctx context.Context, why string) {
	if v, ok := ctx.Value(keepVetoKey{}).(*keepVeto); ok {
		v.mu.Lock()
		v.why = why
		v.mu.Unlock()
	}
}

func (v *keepVeto) reason() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.why
}

// withoutInert is ctx with its case no longer marked inert.
func withoutInert(ctx context.Context) context.Context {
	return context.WithValue(ctx, inertKey{}, nil)
}

func newPool(name string, pages []browser.Engine) *pool {
	return newPoolFor(name, pages, len(pages))
}

// newPoolFor is a pool with room for up to capacity pages, pages among them.
func newPoolFor(name string, pages []browser.Engine, capacity int) *pool {
	p := &pool{name: name, pages: pages, free: make(chan browser.Engine, max(capacity, len(pages))), gone: make(chan struct{})}
	for _, e := range pages {
		p.free <- e
	}
	return p
}

// add puts more pages into a serving pool (an endpoint that came up after the pool
// began to serve); it refuses those past the pool's room, which it returns.
func (p *pool) add(pages []browser.Engine) (refused []browser.Engine) {
	p.pagesMu.Lock()
	defer p.pagesMu.Unlock()
	for _, e := range pages {
		if len(p.pages) >= cap(p.free) {
			refused = append(refused, e)
			continue
		}
		p.pages = append(p.pages, e)
		p.free <- e // room: cap(free) bounds len(pages)
	}
	return refused
}

// all is the pool's pages now.
func (p *pool) all() []browser.Engine {
	p.pagesMu.Lock()
	defer p.pagesMu.Unlock()
	return append([]browser.Engine(nil), p.pages...)
}

// drop takes e out of the pool for good and closes it.
func (p *pool) drop(e browser.Engine) {
	p.dropMu.Lock()
	if p.dropped == nil {
		p.dropped = map[browser.Engine]bool{}
	}
	if !p.dropped[e] {
		p.dropped[e] = true
		if len(p.dropped) == len(p.all()) {
			close(p.gone)
		}
	}
	p.dropMu.Unlock()
	go e.Close()
}

// drain takes every page back out of the pool, waiting up to d for the ones still
// in a call or in the reset after it (which runs after the answer, pool.go's fanOut),
// and returns those that came back; dropped pages never do. The pool serves no more.
func (p *pool) drain(d time.Duration) []browser.Engine {
	var back []browser.Engine
	wait := time.After(d)
	for range p.all() {
		select {
		case e := <-p.free:
			back = append(back, e)
		case <-p.gone:
			return back
		case <-wait:
			return back
		}
	}
	return back
}

// version is the same for every page of a pool (Launch checks); the route may differ
// between local pages and remote endpoints' (remote.go): route names each once.
func (p *pool) version() string { return p.all()[0].Version() }
func (p *pool) route() string {
	var routes []string
	seen := map[string]bool{}
	for _, e := range p.all() {
		if r := e.Route(); !seen[r] {
			seen[r] = true
			routes = append(routes, r)
		}
	}
	return strings.Join(routes, "; ")
}

// build is the pool's build as the store keys it.
func (p *pool) build() engineBuild { return engineBuild{p.version(), p.route()} }

// PoolHealth is one engine's pages' state, as ping reports it.
type PoolHealth struct {
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
	Pages    int    `json:"pages"`
	Reason   string `json:"reason,omitempty"`
}

// health is the worst page state and the sum of restarts.
func (p *pool) health() PoolHealth { return newPoolHealth(p.all()) }

// newPoolHealth is the worst state of pages and the sum of their restarts. A page
// out of service counts as failed.
func newPoolHealth(pages []browser.Engine) PoolHealth {
	h := PoolHealth{State: browser.StateReady, Pages: len(pages)}
	rank := map[string]int{browser.StateReady: 0, browser.StateRestarting: 1, browser.StateFailed: 2, remote.StateOutOfService: 2}
	for _, e := range pages {
		ph := e.Health()
		h.Restarts += ph.Restarts
		if rank[ph.State] > rank[h.State] {
			h.State, h.Reason = ph.State, ph.Reason
		}
	}
	return h
}

// sandbox is the pages' sandbox state as the last scan found it, at once; it starts
// the next scan. ok is false when no page can report one (or none was scanned yet).
func (p *pool) sandbox() (browser.SandboxState, bool) {
	p.sbMu.Lock()
	defer p.sbMu.Unlock()
	if !p.sbScanning {
		p.sbScanning = true
		go func() {
			p.scanSandbox()
			p.sbMu.Lock()
			p.sbScanning = false
			p.sbMu.Unlock()
		}()
	}
	return p.sbState, p.sbOK
}

// scanSandbox reads the pages' sandbox state from /proc now (up to 2 s) and keeps it
// for sandbox: the first page's, or the first page whose sandbox is off.
func (p *pool) scanSandbox() (st browser.SandboxState, ok bool) {
	defer func() {
		p.sbMu.Lock()
		p.sbState, p.sbOK = st, ok
		p.sbMu.Unlock()
	}()
	for _, e := range p.all() {
		r, is := e.(browser.SandboxReporter)
		if !is {
			continue
		}
		s := r.Sandbox()
		if !ok || (st.On && !s.On) {
			st, ok = s, true
		}
	}
	return st, ok
}

// resetTimeout bounds the reset between cases, normally 20 to 150 ms; a page that
// cannot reset in this time is replaced by a relaunched browser.
const resetTimeout = 3 * time.Second

// recoveryAllowance is how long a page may take to come back after a case that
// broke it: the reset's own bound, then a relaunch of up to three attempts with
// backoff (Firefox took 9-18 s each on a loaded 2-core machine), or a WebKitGTK
// restart.
var recoveryAllowance = 90 * time.Second // a variable for the tests

// pageWait bounds a case's wait for a free page: one deadline (the case ahead of it
// on that page) plus that page's recovery.
func pageWait(deadline time.Duration) time.Duration { return deadline + recoveryAllowance }

// preparer is an engine that checks its page before a case: a page whose renderer or
// content process died while idle is replaced then, outside the case's deadline.
type preparer interface {
	Prepare(ctx context.Context) error
}

// caseError is a failure the case itself caused (its script threw, a probe matched
// nothing): the page is fine and needs no recovery.
type caseError struct{ msg string }

func (e *caseError) Error() string { return e.msg }

func caseErrorf(format string, args ...any) error {
	return &caseError{msg: fmt.Sprintf(format, args...)}
}

// fanOut runs do on every engine the request names (all launched ones when it names
// none), in parallel, each on a free page under the oracle's deadline, and collects
// each engine's result or error. Every page is reset to a fresh about:blank document
// and global after every case, after the result is in, so no case sees what an earlier
// one left (timers, globals, listeners, caches of the document). The one exception is
// an inert case (withInert: markup an HTML parser found unable to run script or reach
// past its document, oracle/inert): its page keeps its window for the next inert
// case, and a case that is not inert resets such a page before it starts. An inert
// case is checked in the engine (inpage/case.js): one that fails the check is
// measured again on a new document and keeps no window, and one that leaves its
// window scrolled keeps its answer but not its window.
func fanOut[T any](ctx context.Context, o *Oracle, names []string, do func(context.Context, browser.Engine) (T, error)) (map[string]T, map[string]string) {
	named := len(names) > 0
	if !named {
		names = o.requestEngines()
		if p, ok := ctx.Value(checkPoolKey{}).(*pool); ok {
			names = []string{p.name}
		}
	}
	results := map[string]T{}
	errs := map[string]string{}
	inert := isInert(ctx) // geometry marks a case inert only with --inert-reuse on
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range uniq(names) {
		wg.Add(1)
		go func() {
			// The wait for a page is not the case's time: the engine may still be
			// starting, or a page may still be recovering from an earlier case that ran
			// past its deadline (a relaunch, Firefox 9-18 s), and that cost stays with
			// that case. The case's deadline starts when it has a page; the wait has a
			// bound of its own, and so has the wait for a startup (enginePool).
			p, err := o.enginePool(ctx, name)
			wctx, wcancel := context.WithTimeout(ctx, pageWait(o.deadline))
			if err != nil {
				wcancel()
				// Not named: the request asked for the engines that serve, and this
				// one turned out not to.
				if named || !errors.Is(err, browser.ErrNotLaunched) {
					mu.Lock()
					errs[name] = err.Error()
					mu.Unlock()
				}
				wg.Done()
				return
			}
			var e browser.Engine
		take:
			select {
			case e = <-p.free:
				if remote.OutOfService(e) {
					p.drop(e)
					goto take
				}
				// A page may have broken while idle (its content process killed):
				// it is checked, and replaced, before the case's clock starts.
				if pr, ok := e.(preparer); ok {
					if err := pr.Prepare(wctx); err != nil {
						o.log.Warn().Str("engine", name).Err(err).Msg("the page could not be made ready; the case tries anyway")
					}
				}
				// A page that kept an inert case's window gets its new document now,
				// before a case that is not inert, also outside the case's clock.
				if !inert && p.holdsKept(e) {
					o.resetPage(name, e)
					p.fresh(e)
				}
				wcancel()
			case <-p.gone:
				wcancel()
				mu.Lock()
				errs[name] = fmt.Sprintf("every %s page is out of service (ping names why)", name)
				mu.Unlock()
				wg.Done()
				return
			case <-wctx.Done():
				wcancel()
				mu.Lock()
				errs[name] = fmt.Sprintf("no free %s page within %s", name, pageWait(o.deadline))
				mu.Unlock()
				wg.Done()
				return
			}
			veto := &keepVeto{}
			cctx, cancel := context.WithTimeout(context.WithValue(ctx, keepVetoKey{}, veto), o.deadline)
			defer cancel()
			kills := o.mem.OOMKills(name)
			v, err := callSafely(cctx, e, do)
			keepable := inert
			if why := veto.reason(); why != "" {
				o.log.Debug().Str("engine", name).Str("why", why).Msg("the inert case's window is not kept")
				keepable = false
			}
			if failed := (*inertCheckFailed)(nil); inert && errors.As(err, &failed) {
				// The engine built or ran what the classifier did not allow, or the kept
				// window was not at the origin: the answer is discarded, the page gets a
				// new document, and the case is measured on it as a case that is not
				// inert is, under a deadline of its own; the page is not kept after it.
				o.log.Info().Str("engine", name).Str("why", failed.why).Bool("kept", p.holdsKept(e)).Msg("an inert case failed its check in the engine: measured again on a new document")
				keepable = false
				o.resetPage(name, e)
				p.fresh(e)
				rctx, rcancel := context.WithTimeout(withoutInert(ctx), o.deadline)
				defer rcancel()
				v, err = callSafely(rctx, e, do)
			}
			o.log.Debug().Str("engine", name).Bool("inert", inert).Msg("case served")
			mu.Lock()
			if err != nil {
				switch {
				case err == context.DeadlineExceeded:
					err = fmt.Errorf("timed out after %s", o.deadline)
				case errors.Is(err, context.DeadlineExceeded):
					err = fmt.Errorf("timed out after %s: %w", o.deadline, err)
				}
				// The engine's own message (a crash, a lost script result) does not
				// say why its process died: the cgroup's OOM count does.
				if o.mem.OOMKills(name) > kills {
					err = fmt.Errorf("%w (the engine hit its memory bound, --engine-memory=%dM: the kernel killed one of its processes)", err, o.mem.Limit>>20)
				}
				errs[name] = err.Error()
				o.log.Debug().Str("engine", name).Err(err).Msg("engine error")
			} else {
				results[name] = v
			}
			mu.Unlock()

			// Every case is followed by a reset. It is registered before the answer is
			// complete: once fanOut returns, Close may Wait on resets, and an Add from
			// zero must happen before that Wait.
			o.resets.Add(1)
			defer o.resets.Done()
			wg.Done() // the answer is complete; the reset below is off its path

			if keepable && err == nil && p.keep(e) {
				p.free <- e // its window holds only inert cases: the next inert case writes into it
				return
			}
			o.resetPage(name, e)
			p.fresh(e)
			if remote.OutOfService(e) {
				p.drop(e)
				return
			}
			p.free <- e
		}()
	}
	wg.Wait()
	if len(errs) == 0 {
		errs = nil
	}
	return results, errs
}

// resetPage gives e a new about:blank document and global (Engine.Reset), within
// resetTimeout.
func (o *Oracle) resetPage(name string, e browser.Engine) {
	rctx, rcancel := context.WithTimeout(context.Background(), resetTimeout)
	defer rcancel()
	t0 := time.Now()
	if err := e.Reset(rctx); err != nil {
		o.log.Warn().Str("engine", name).Err(err).Msg("reset between cases failed")
	}
	o.log.Debug().Str("engine", name).Dur("took", time.Since(t0)).Msg("page reset")
}

// callSafely turns a panic in one engine's work into that engine's error: it runs
// on its own goroutine, where handleSafely's recover cannot reach.
func callSafely[T any](ctx context.Context, e browser.Engine, do func(context.Context, browser.Engine) (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return do(ctx, e)
}

func uniq(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
