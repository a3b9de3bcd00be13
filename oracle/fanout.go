package oracle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/layout-oracle/oracle/oracle/remote"
)

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

// buildOf is p's build as the store keys it.
func buildOf(p *pool.Pool) engineBuild { return engineBuild{p.Version(), p.Route()} }

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
		if p, ok := ctx.Value(checkPoolKey{}).(*pool.Pool); ok {
			names = []string{p.Name()}
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
			case e = <-p.Take():
				if remote.OutOfService(e) {
					p.Drop(e)
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
				if !inert && p.HoldsKept(e) {
					o.resetPage(name, e)
					p.Fresh(e)
				}
				wcancel()
			case <-p.Gone():
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
				o.log.Info().Str("engine", name).Str("why", failed.why).Bool("kept", p.HoldsKept(e)).Msg("an inert case failed its check in the engine: measured again on a new document")
				keepable = false
				o.resetPage(name, e)
				p.Fresh(e)
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

			if keepable && err == nil && p.Keep(e) {
				p.Put(e) // its window holds only inert cases: the next inert case writes into it
				return
			}
			o.resetPage(name, e)
			p.Fresh(e)
			if remote.OutOfService(e) {
				p.Drop(e)
				return
			}
			p.Put(e)
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
