package oracle

import (
	"context"
	"fmt"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pool"
)

// Which engines serve, which are still starting and which failed, as a request and
// ping see them: a request waits for a starting engine (enginePool), the store keys
// an answer by the build known so far (storeBuild), and the start decides each
// engine's outcome once (decide).

// needLive starts name's launch now if it is waiting for warmLaunchDelay.
func (o *Oracle) needLive(name string) {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	if ch, ok := o.need[name]; ok {
		close(ch)
		delete(o.need, name)
	}
}

// decide ends name's start: it serves from p, or (p nil) it failed for reason.
func (o *Oracle) decide(name string, p *pool.Pool, reason string) {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	if p != nil {
		o.engines[name] = p
		o.order = o.order[:0:0]
		for _, n := range browser.AllEngines {
			if o.engines[n] != nil {
				o.order = append(o.order, n)
			}
		}
		delete(o.failed, name)
	} else {
		o.failed[name] = reason
	}
	if ch, ok := o.starting[name]; ok {
		delete(o.starting, name)
		close(ch)
	}
	delete(o.launched, name)
	delete(o.predicted, name)
}

// engineBuild is the build an engine's pages launched, as ping reports it.
type engineBuild struct{ version, route string }

// noteBuild records the build of name, still starting, for ping: known once its
// pages launched and agree, before its self-check ends.
func (o *Oracle) noteBuild(name string, b engineBuild) {
	o.stateMu.Lock()
	defer o.stateMu.Unlock()
	if _, ok := o.starting[name]; !ok {
		return
	}
	if o.launched == nil {
		o.launched = map[string]engineBuild{}
	}
	o.launched[name] = b
}

// WaitStarted returns once every engine serves or has failed to. An oracle not made
// by Start or Launch has nothing starting.
func (o *Oracle) WaitStarted() {
	if o.started != nil {
		<-o.started
	}
}

// checkPoolKey carries, in a self-check's context, the pool under check, which
// serves that check before it is published to requests.
type checkPoolKey struct{}

// startupWait bounds a request's wait for an engine that is still starting. It is
// the startup's own bound, not the case's: a case's --deadline starts when an engine
// takes it, and a startup under load (Firefox's launch alone may take up to the 180 s
// bidi.go allows it, then the self-checks) must not use it up. A
// variable for the tests.
var startupWait = 5 * time.Minute

// enginePool is name's pool for a request: the pool under self-check in ctx, a
// serving pool, or, while name is still starting, that pool once it serves (waiting
// within ctx and startupWait). It is ErrNotLaunched when name did not come up.
func (o *Oracle) enginePool(ctx context.Context, name string) (*pool.Pool, error) {
	if p, ok := ctx.Value(checkPoolKey{}).(*pool.Pool); ok && p.Name() == name {
		return p, nil
	}
	o.stateMu.RLock()
	p, ok := o.engines[name]
	wait := o.starting[name]
	o.stateMu.RUnlock()
	if ok {
		return p, nil
	}
	if wait == nil {
		return nil, browser.ErrNotLaunched
	}
	o.needLive(name)
	bound := time.NewTimer(startupWait)
	defer bound.Stop()
	select {
	case <-wait:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s is still starting: %w", name, ctx.Err())
	case <-bound.C:
		return nil, fmt.Errorf("%s is still starting after %s", name, startupWait)
	}
	o.stateMu.RLock()
	p, ok = o.engines[name]
	o.stateMu.RUnlock()
	if !ok {
		return nil, browser.ErrNotLaunched
	}
	return p, nil
}

// storeBuild is name's build for the store's key, without waiting for it: its
// serving pool's, else the one its live launch reported, else the one its
// fingerprint's record names (warmstart.go). ok is false while none is known.
func (o *Oracle) storeBuild(name string) (engineBuild, bool) {
	o.stateMu.RLock()
	defer o.stateMu.RUnlock()
	if p := o.engines[name]; p != nil {
		return buildOf(p), true
	}
	if b, ok := o.launched[name]; ok {
		return b, true
	}
	b, ok := o.predicted[name]
	return b, ok
}

// requestEngines is who answers a request naming no engine: every engine serving or
// still starting, in AllEngines order.
func (o *Oracle) requestEngines() []string {
	o.stateMu.RLock()
	defer o.stateMu.RUnlock()
	return o.requestEnginesLocked()
}

// requestEnginesLocked is requestEngines under stateMu.
func (o *Oracle) requestEnginesLocked() []string {
	out := []string{}
	for _, n := range browser.AllEngines {
		if o.engines[n] != nil || o.starting[n] != nil {
			out = append(out, n)
		}
	}
	return out
}
