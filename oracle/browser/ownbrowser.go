package browser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// ownBrowser is what the oracle's own-client routes (bidi.go for Firefox, cdp.go for
// Chromium) share: one browser process and the connection to it, why the next call
// must relaunch them, the engine's health, and the relaunch with backoff. An engine
// embeds it (its fields and methods are the engine's) and sets start, which launches
// the browser and adopts it.
type ownBrowser[P browserProcess, C browserConn] struct {
	name, exe, route string
	connLost         string // the relaunch reason when the connection closed
	version          string // the first launch's; a relaunch must match it
	log              zerolog.Logger
	// start launches the browser and adopts it (adopt); on any failure nothing it
	// started is left running.
	start func(context.Context) error
	// pageReasonLocked says why the engine's page needs a relaunch ("": it does not);
	// nil: no such reason. mu is held.
	pageReasonLocked func() string

	mu     sync.Mutex
	proc   P      // zero: none
	conn   C      // zero: none
	broken string // why the next call relaunches the browser ("": it need not)
	health Health
	closed bool
	// bundledAbsent: see BundledAbsent (launch.go).
	bundledAbsent string
}

// errBrowserReplaced is a call on the connection to a browser that a relaunch killed.
var errBrowserReplaced = errors.New("browser replaced")

type browserProcess interface {
	comparable
	kill()       // ends the browser's process group and removes its profile
	alive() bool // the process has not exited
	pid() int    // the browser's own process, the root of its tree
}

type browserConn interface {
	comparable
	close(why error) // ends the connection: every call on it, now or later, gets why
	alive() bool
	reason() error // why the connection ended; nil while it has not
}

func (b *ownBrowser[P, C]) Name() string    { return b.name }
func (b *ownBrowser[P, C]) Version() string { return b.version }
func (b *ownBrowser[P, C]) Route() string   { return b.route }

// errorf is fmt.Errorf's error as the engine's. An argument that is already this
// engine's error loses its own prefix: the message names the engine once
// ("chromium: relaunch failed: launch: ...").
func (b *ownBrowser[P, C]) errorf(format string, args ...any) error {
	for i, a := range args {
		if ee, ok := a.(*engineError); ok && ee.engine == b.name {
			args[i] = ee.err
		}
	}
	return engineErrorf(b.name, format, args...)
}

// launch is the first start, logged.
func (b *ownBrowser[P, C]) launch(ctx context.Context) error {
	began := time.Now()
	if err := b.start(ctx); err != nil {
		return err
	}
	b.log.Info().Str("version", b.version).Str("route", b.route).Dur("launch", time.Since(began)).Msg("engine launched")
	return nil
}

// adopt makes p and conn the engine's browser if the engine is still open and the
// build is the first launch's; engineFields sets the engine's own state under the same
// lock. Refused, it closes both.
func (b *ownBrowser[P, C]) adopt(p P, conn C, version string, engineFields func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	refuse := func(err error) error {
		conn.close(err)
		p.kill()
		return err
	}
	if b.closed {
		return refuse(b.errorf("%w", errEngineClosed))
	}
	if b.version == "" {
		b.version = version
	} else if version != b.version {
		return refuse(b.errorf("%w from %s to %s on relaunch", ErrVersionChanged, b.version, version))
	}
	b.proc, b.conn, b.broken = p, conn, ""
	engineFields()
	return nil
}

// breakFor records that a call on the browser failed, so the next call relaunches
// it, and logs why: the deadline, when the call outlived it (the page is left busy),
// else op and err.
func (b *ownBrowser[P, C]) breakFor(ctx context.Context, op string, err error) {
	reason := op + ": " + firstLine(err)
	if ctx.Err() != nil {
		reason = opOf(ctx) + " did not finish in time"
	}
	b.mu.Lock()
	if b.broken == "" {
		b.broken = reason
	}
	b.mu.Unlock()
	b.log.Warn().Str("op", opOf(ctx)).Err(err).Msg(reason + "; the browser relaunches on the next call")
}

// ensure relaunches the browser when a call found it broken, or its process,
// connection or page is gone.
func (b *ownBrowser[P, C]) ensure(ctx context.Context) error {
	_, err := b.renew(ctx)
	return err
}

// renew is ensure, and says whether it relaunched the browser: its page is then new,
// as the first case's was.
func (b *ownBrowser[P, C]) renew(ctx context.Context) (relaunched bool, err error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false, b.errorf("%w", errEngineClosed)
	}
	reason := b.relaunchReasonLocked()
	b.mu.Unlock()
	if reason == "" {
		return false, nil
	}
	return true, b.relaunch(ctx, reason)
}

// resetPage is both own routes' Reset once the engine has cleared its own page
// state: a browser that must relaunch is relaunched, and its new page is the reset
// (as the first case's was: resetting it would run in what the relaunch left of
// ctx, often nothing after a hung case, fail, and relaunch a second time);
// otherwise reset, and a page that cannot reset in time costs a relaunch.
func (b *ownBrowser[P, C]) resetPage(ctx context.Context, reset func(context.Context) error) error {
	if relaunched, err := b.renew(ctx); err != nil || relaunched {
		return err
	}
	ctx = context.WithValue(ctx, opKey{}, "reset to about:blank")
	err := reset(ctx)
	if err == nil {
		return nil
	}
	reason := "page did not reset in time"
	if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		reason = "page could not reset: " + firstLine(err)
	}
	b.log.Warn().Err(err).Msg(reason + "; relaunching the browser")
	return b.relaunch(ctx, reason)
}

// relaunchReasonLocked says why the next call must relaunch the browser: a call found
// it broken, its process or connection is gone, or the page's own reason; "" when it
// need not. b.mu is held.
func (b *ownBrowser[P, C]) relaunchReasonLocked() string {
	var noProc P
	var noConn C
	switch {
	case b.broken != "":
		return b.broken
	case b.proc == noProc:
		return "no browser"
	case !b.proc.alive():
		return "browser exited"
	case b.conn == noConn:
		return b.connLost
	case !b.conn.alive():
		return firstLine(b.conn.reason())
	case b.pageReasonLocked != nil:
		return b.pageReasonLocked()
	}
	return ""
}

// relaunch kills the browser and launches it again, with backoff. It runs outside
// the caller's deadline (a relaunch takes seconds): a hung case must not leave the
// engine without a browser.
func (b *ownBrowser[P, C]) relaunch(ctx context.Context, reason string) error {
	var noProc P
	var noConn C
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return b.errorf("%w", errEngineClosed)
	}
	b.health = Health{State: StateRestarting, Restarts: b.health.Restarts + 1, Reason: reason}
	p, conn := b.proc, b.conn
	b.proc, b.conn, b.broken = noProc, noConn, "relaunching"
	b.mu.Unlock()
	if conn != noConn {
		conn.close(fmt.Errorf("%w: the browser relaunched (%s)", errBrowserReplaced, reason))
	}
	if p != noProc {
		p.kill()
	}
	ctx = context.WithoutCancel(ctx)
	began := time.Now()
	var err error
	for i, wait := range relaunchBackoff {
		time.Sleep(wait)
		if err = b.start(ctx); err == nil {
			b.mu.Lock()
			b.health.State = StateReady
			b.mu.Unlock()
			b.log.Info().Int("attempt", i+1).Str("reason", reason).Dur("took", time.Since(began)).Msg("browser relaunched")
			return nil
		}
		b.mu.Lock()
		closed := b.closed
		b.mu.Unlock()
		if closed {
			return b.errorf("%w", errEngineClosed)
		}
		b.log.Warn().Int("attempt", i+1).Err(err).Msg("relaunch failed")
	}
	b.mu.Lock()
	b.health.State, b.health.Reason = StateFailed, err.Error()
	b.broken = "relaunch failed"
	b.mu.Unlock()
	return b.errorf("relaunch failed: %w", err)
}

// Health says what the next call meets: a dead browser or connection, a crashed page,
// or a page a call left broken, is "restarting" (the next call relaunches it).
func (b *ownBrowser[P, C]) Health() Health {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.health.reported()
	if h.State != StateReady || b.closed {
		return h
	}
	if reason := b.relaunchReasonLocked(); reason != "" {
		h.State, h.Reason = StateRestarting, reason+"; the browser relaunches on the next call"
	}
	return h
}

// pids is the browser's own process, the root of its tree; nil when none runs.
func (b *ownBrowser[P, C]) pids() []int {
	var noProc P
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == noProc || b.closed {
		return nil
	}
	return []int{b.proc.pid()}
}

// Sandbox is the browser's sandbox as /proc shows it now.
func (b *ownBrowser[P, C]) Sandbox() SandboxState {
	return inspectSandbox(b.name, b.pids())
}

// Close kills the browser and removes its profile. Safe to call twice. The closed
// connection stays the engine's: a call still under way, and any later one, gets
// "engine closed" from it (errEngineClosed), never a connection that is not there.
func (b *ownBrowser[P, C]) Close() error {
	var noProc P
	var noConn C
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	p, conn := b.proc, b.conn
	b.proc = noProc
	b.mu.Unlock()
	if conn != noConn {
		conn.close(errEngineClosed)
	}
	if p != noProc {
		p.kill()
	}
	return nil
}
