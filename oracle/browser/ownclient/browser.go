package ownclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/rs/zerolog"
)

// Browser is what the oracle's own-client routes (package cdp for Chromium, package
// bidi for Firefox) share: one browser process and the connection to it, why the next
// call must relaunch them, the engine's health, and the relaunch with backoff. An
// engine embeds it (its methods are the engine's) and launches through it (Launch),
// naming how to start the browser. Its lock also guards the engine's page state,
// which the engine reads and writes through Current and SetPage.
type Browser[P process, C conn] struct {
	Exe string         // the browser's binary
	Log zerolog.Logger // the engine's log

	// mu guards proc, conn, closed, broken, the page's marks and the embedding
	// engine's page state.
	mu     sync.Mutex
	proc   P      // zero: none
	conn   C      // zero: none
	closed bool   // Close ran
	broken string // why the next call relaunches the browser ("": it need not)
	blank  bool   // the page is on the about:blank the reset's navigation made, no case in it yet
	kept   bool   // the page holds an inert case (Keep) the next Load writes over

	closedCh chan struct{} // closed by Close (closing)

	setup   Setup
	version string // the first launch's; a relaunch must match it
	health  browser.Health
}

// Setup is what an engine tells its Browser once, at Launch.
type Setup struct {
	Engine, Route string
	// ConnLost is the relaunch reason when the connection closed.
	ConnLost string
	// Start launches the browser and adopts it (Adopt); on any failure nothing it
	// started is left running.
	Start func(context.Context) error
	// PageReasonLocked says why the engine's page needs a relaunch ("": it does not);
	// nil: no such reason. The Browser's lock is held.
	PageReasonLocked func() string
	// BundledAbsent: see browser.BundledAbsent.
	BundledAbsent string
	// MaxReply bounds a reply carrying a case's answer; 0: browser.DefaultMaxReply.
	MaxReply int64
}

// errBrowserReplaced is a call on the connection to a browser that a relaunch killed.
var errBrowserReplaced = errors.New("browser replaced")

type process interface {
	comparable
	Kill()       // ends the browser's process group and removes its profile
	Alive() bool // the process has not exited
	PID() int    // the browser's own process, the root of its tree
}

type conn interface {
	comparable
	Close(why error) // ends the connection: every call on it, now or later, gets why
	Alive() bool
	Reason() error // why the connection ended; nil while it has not
}

func (b *Browser[P, C]) Name() string    { return b.setup.Engine }
func (b *Browser[P, C]) Version() string { return b.version }
func (b *Browser[P, C]) Route() string   { return b.setup.Route }

// BundledAbsent: see browser.BundledAbsent.
func (b *Browser[P, C]) BundledAbsent() string { return b.setup.BundledAbsent }

// Errorf is fmt.Errorf's error as the engine's (browser.EngineErrorf: the message
// names the engine once, "chromium: relaunch failed: launch: ...").
func (b *Browser[P, C]) Errorf(format string, args ...any) error {
	return browser.EngineErrorf(b.setup.Engine, format, args...)
}

// Configure records s and starts nothing: Launch does both, and a test of an engine
// around a fake connection needs only the first.
func (b *Browser[P, C]) Configure(s Setup) { b.setup = s }

// Launch is the first start of exe, as s says, logged to log (which names the engine).
func (b *Browser[P, C]) Launch(ctx context.Context, exe string, log zerolog.Logger, s Setup) error {
	b.Exe, b.Log = exe, log.With().Str("engine", s.Engine).Logger()
	b.Configure(s)
	began := time.Now()
	if err := b.setup.Start(ctx); err != nil {
		return err
	}
	b.Log.Info().Str("version", b.version).Str("route", b.setup.Route).Dur("launch", time.Since(began)).Msg("engine launched")
	return nil
}

// MaxMessage bounds one message on the wire: a reply carrying a case's answer
// (Setup.MaxReply) and the framing's slack.
func (b *Browser[P, C]) MaxMessage() int64 {
	reply := b.setup.MaxReply
	if reply <= 0 {
		reply = browser.DefaultMaxReply
	}
	return reply + 1<<20
}

// Current is the connection the engine's calls use now; page, when not nil, reads
// the engine's page state under the same lock, so the two belong together.
func (b *Browser[P, C]) Current(page func()) C {
	b.mu.Lock()
	defer b.mu.Unlock()
	if page != nil {
		page()
	}
	return b.conn
}

// SetPage runs set, which changes the engine's page state, under the Browser's lock.
func (b *Browser[P, C]) SetPage(set func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	set()
}

// Proc is the browser's process now; zero when none runs.
func (b *Browser[P, C]) Proc() P {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.proc
}

// Broken is why a call found the browser broken, so that the next call relaunches
// it; "" when none did.
func (b *Browser[P, C]) Broken() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

// Abandon ends a browser whose session could not start (err): its connection, if it
// has one, and its process. The error is the launch's, with the browser's last output.
func (b *Browser[P, C]) Abandon(p P, conn C, output string, err error) error {
	var noConn C
	err = fmt.Errorf("session: %w (its output: %s)", err, output)
	if conn != noConn {
		conn.Close(err)
	}
	p.Kill()
	return b.Errorf("%w", err)
}

// Adopt makes p and conn the engine's browser, on a new page, if the engine is still
// open and the build is the first launch's; engineFields sets the engine's own state
// under the same lock. Refused, it closes both.
func (b *Browser[P, C]) Adopt(p P, conn C, version string, engineFields func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	refuse := func(err error) error {
		conn.Close(err)
		p.Kill()
		return err
	}
	if b.closed {
		return refuse(b.Errorf("%w", ErrEngineClosed))
	}
	if b.version == "" {
		b.version = version
	} else if version != b.version {
		return refuse(b.Errorf("%w from %s to %s on relaunch", browser.ErrVersionChanged, b.version, version))
	}
	b.proc, b.conn, b.broken = p, conn, ""
	b.blank, b.kept = false, false
	engineFields()
	return nil
}

// BreakFor records that a call on the browser failed, so the next call relaunches
// it, and logs why: the deadline, when the call outlived it (the page is left busy),
// else op and err.
func (b *Browser[P, C]) BreakFor(ctx context.Context, op string, err error) {
	reason := op + ": " + browser.FirstLine(err)
	if ctx.Err() != nil {
		reason = browser.OpOf(ctx) + " did not finish in time"
	}
	b.mu.Lock()
	if b.broken == "" {
		b.broken = reason
	}
	b.mu.Unlock()
	b.Log.Warn().Str("op", browser.OpOf(ctx)).Err(err).Msg(reason + "; the browser relaunches on the next call")
}

// Ensure relaunches the browser when a call found it broken, or its process,
// connection or page is gone.
func (b *Browser[P, C]) Ensure(ctx context.Context) error {
	_, err := b.renew(ctx)
	return err
}

// renew is Ensure, and says whether it relaunched the browser: its page is then new,
// as the first case's was.
func (b *Browser[P, C]) renew(ctx context.Context) (relaunched bool, err error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false, b.Errorf("%w", ErrEngineClosed)
	}
	reason := b.relaunchReasonLocked()
	b.mu.Unlock()
	if reason == "" {
		return false, nil
	}
	return true, b.relaunch(ctx, reason)
}

// ResetPage is both own routes' Reset: the page's marks are cleared; a browser that must relaunch is relaunched, and its new page is the reset
// (as the first case's was: resetting it would run in what the relaunch left of
// ctx, often nothing after a hung case, fail, and relaunch a second time);
// otherwise reset, and a page that cannot reset in time costs a relaunch.
func (b *Browser[P, C]) ResetPage(ctx context.Context, reset func(context.Context) error) error {
	b.TakeMarks()
	if relaunched, err := b.renew(ctx); err != nil || relaunched {
		return err
	}
	ctx = browser.WithOp(ctx, "reset to about:blank")
	err := reset(ctx)
	if err == nil {
		return nil
	}
	reason := "page did not reset in time"
	if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		reason = "page could not reset: " + browser.FirstLine(err)
	}
	b.Log.Warn().Err(err).Msg(reason + "; relaunching the browser")
	return b.relaunch(ctx, reason)
}

// relaunchReasonLocked says why the next call must relaunch the browser: a call found
// it broken, its process or connection is gone, or the page's own reason; "" when it
// need not. b.mu is held.
func (b *Browser[P, C]) relaunchReasonLocked() string {
	var noProc P
	var noConn C
	switch {
	case b.broken != "":
		return b.broken
	case b.proc == noProc:
		return "no browser"
	case !b.proc.Alive():
		return "browser exited"
	case b.conn == noConn:
		return b.setup.ConnLost
	case !b.conn.Alive():
		return browser.FirstLine(b.conn.Reason())
	case b.setup.PageReasonLocked != nil:
		return b.setup.PageReasonLocked()
	}
	return ""
}

// relaunch kills the browser and launches it again, with backoff. It runs outside
// the caller's deadline (a relaunch takes seconds): a hung case must not leave the
// engine without a browser.
func (b *Browser[P, C]) relaunch(ctx context.Context, reason string) error {
	var noProc P
	var noConn C
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return b.Errorf("%w", ErrEngineClosed)
	}
	b.health = browser.Health{State: browser.StateRestarting, Restarts: b.health.Restarts + 1, Reason: reason}
	p, conn := b.proc, b.conn
	b.proc, b.conn, b.broken = noProc, noConn, "relaunching"
	b.mu.Unlock()
	if conn != noConn {
		conn.Close(fmt.Errorf("%w: the browser relaunched (%s)", errBrowserReplaced, reason))
	}
	if p != noProc {
		p.Kill()
	}
	// Not the caller's deadline, but Close's: a closed engine starts no browser, and
	// its relaunch stops waiting.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	closing := b.closing()
	go func() {
		select {
		case <-closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	began := time.Now()
	var err error
	for i, wait := range browser.RelaunchBackoff {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil {
			return b.Errorf("%w", ErrEngineClosed)
		}
		if err = b.setup.Start(ctx); err == nil {
			b.mu.Lock()
			b.health.State = browser.StateReady
			b.mu.Unlock()
			b.Log.Info().Int("attempt", i+1).Str("reason", reason).Dur("took", time.Since(began)).Msg("browser relaunched")
			return nil
		}
		b.mu.Lock()
		closed := b.closed
		b.mu.Unlock()
		if closed {
			return b.Errorf("%w", ErrEngineClosed)
		}
		b.Log.Warn().Int("attempt", i+1).Err(err).Msg("relaunch failed")
	}
	b.mu.Lock()
	b.health.State, b.health.Reason = browser.StateFailed, err.Error()
	b.broken = "relaunch failed"
	b.mu.Unlock()
	return b.Errorf("relaunch failed: %w", err)
}

// closing is closed once Close ran.
func (b *Browser[P, C]) closing() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closedCh == nil {
		b.closedCh = make(chan struct{})
	}
	return b.closedCh
}

// Health says what the next call meets: a dead browser or connection, a crashed page,
// or a page a call left broken, is "restarting" (the next call relaunches it).
func (b *Browser[P, C]) Health() browser.Health {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.health.Reported()
	if h.State != browser.StateReady || b.closed {
		return h
	}
	if reason := b.relaunchReasonLocked(); reason != "" {
		h.State, h.Reason = browser.StateRestarting, reason+"; the browser relaunches on the next call"
	}
	return h
}

// ProcessRoots is the browser's own process, the root of its tree; nil when none runs.
func (b *Browser[P, C]) ProcessRoots() []int {
	var noProc P
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == noProc || b.closed {
		return nil
	}
	return []int{b.proc.PID()}
}

// Sandbox is the browser's sandbox as /proc shows it now.
func (b *Browser[P, C]) Sandbox() browser.SandboxState {
	return browser.InspectSandbox(b.setup.Engine, b.ProcessRoots())
}

// Close kills the browser and removes its profile. Safe to call twice. The closed
// connection stays the engine's: a call still under way, and any later one, gets
// "engine closed" from it (ErrEngineClosed), never a connection that is not there.
func (b *Browser[P, C]) Close() error {
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
	if b.closedCh == nil {
		b.closedCh = make(chan struct{})
	}
	close(b.closedCh)
	b.mu.Unlock()
	if conn != noConn {
		conn.Close(ErrEngineClosed)
	}
	if p != noProc {
		p.Kill()
	}
	return nil
}

// TakeMarks says whether the page is on the reset's about:blank, and whether it holds
// a kept inert case, and clears both: what a call that uses the page reads first.
func (b *Browser[P, C]) TakeMarks() (blank, kept bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	blank, kept = b.blank, b.kept
	b.blank, b.kept = false, false
	return blank, kept
}

// MarkBlank records that the reset left the page on its about:blank, checked: the
// next Load writes into it with no navigation of its own.
func (b *Browser[P, C]) MarkBlank() {
	b.mu.Lock()
	b.blank = true
	b.mu.Unlock()
}

// Keepable begins both own routes' Keep (browser.Keeper): it clears the kept mark and
// says whether the browser, reached by the connection it returns, may keep its page
// (it is open and need not relaunch). page reads the engine's page under the same lock.
func (b *Browser[P, C]) Keepable(page func()) (C, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kept = false
	page()
	return b.conn, !b.closed && b.relaunchReasonLocked() == ""
}

// KeepIf ends Keep: only, under browser.ProbeTimeout, says whether the page is the one
// window, on about:blank, as the inert case left it; then the page is marked kept if
// still (under the Browser's lock) says it is the engine's page yet. The answer is only's.
func (b *Browser[P, C]) KeepIf(only func(context.Context) bool, still func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
	defer cancel()
	if !only(ctx) {
		return false
	}
	b.mu.Lock()
	b.kept = still()
	b.mu.Unlock()
	return true
}

// FreshAndFocused reads raw, a reset's check of the page (browser.ResetCheckJS:
// history.length and document.hasFocus(), err its failure), and says whether
// history.length is the first case's and the page has the focus, refocusing the page
// first when a case took it. replaced is the debug line when a new page must replace it.
func (b *Browser[P, C]) FreshAndFocused(raw json.RawMessage, err error, replaced string, refocus func() bool) (bool, error) {
	if err != nil {
		return false, err
	}
	var st [2]any // history.length, document.hasFocus()
	if err := json.Unmarshal(raw, &st); err != nil {
		return false, b.Errorf("reset check: %w", err)
	}
	if st[0] != browser.FirstHistoryLength {
		b.Log.Debug().Str("history", string(raw)).Msg(replaced)
		return false, nil
	}
	return st[1] == true || refocus(), nil
}

// IdlePageFailed ends both own routes' Prepare when the idle page failed its check
// (err) or lost the focus for good (err nil): ctx's end is ctx's error; else the
// browser relaunches.
func (b *Browser[P, C]) IdlePageFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	reason := "idle page lost the focus, and it could not be given back"
	if err != nil {
		reason = "idle page failed a check: " + browser.FirstLine(err)
	}
	b.Log.Warn().Msg(reason + "; relaunching the browser")
	return b.relaunch(ctx, reason)
}
