package oracle

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/layout-oracle/oracle/store"
	"github.com/layout-oracle/oracle/trace"
	"github.com/rs/zerolog"
)

// Oracle is the long-lived process state: the launched engines, kept open until
// Close, and the settings every request shares.
type Oracle struct {
	mem *host.MemoryBounds // each engine's memory cgroup (--engine-memory)
	// stateMu guards engines, order, failed, starting and launched: engines are
	// published while Serve already runs (Start serves before the slowest engine is
	// ready).
	stateMu  sync.RWMutex
	engines  map[string]*pool.Pool // launched engines by name
	order    []string              // launched engine names, in AllEngines order
	profile  string
	walk     string        // the walk part of its store keys (walkKey)
	deadline time.Duration // per engine per request
	maxLine  int
	inflight int // requests served at once
	log      zerolog.Logger
	failed   map[string]string        // engines that did not come up, with the reason
	starting map[string]chan struct{} // engines still launching or self-checking; closed when decided
	launched map[string]engineBuild   // engines still starting whose pages report their build
	// predicted is, per engine still starting and not yet launched, the build its
	// fingerprint's store record names (warmstart.go): stored answers of it are
	// served before the engine is up.
	predicted map[string]engineBuild
	prints    map[string]string // each local engine's build fingerprint, set before any starts
	// need is closed (and deleted) when a case waits for name's live engine: an
	// engine whose launch waits (awaitLaunch) launches at once.
	need  map[string]chan struct{}
	pages map[string]int // configured pages per engine, for ping
	// endpoints is, per engine with remote endpoints, its local pages and each
	// endpoint (remote.go); set before any engine starts, read by ping.
	endpoints map[string][]*endpointState

	startAt     time.Time
	startCtx    context.Context    // the launches' and checks' context
	startCancel context.CancelFunc // ends launches and checks still under way, at Close
	startWG     tracker            // one per engine still starting
	started     chan struct{}      // closed when every engine serves or failed
	origin      *origin.Server     // serves trace pages

	traceLimits  trace.Limits // --trace-max-records, --trace-max-bytes
	dumpMaxNodes int          // --dump-max-nodes
	inertReuse   bool         // inert cases may share a window (--inert-reuse, fanout.go)
	verify       int          // runs per engine of every case (--verify, operation.go)
	storeMinRuns int          // runs a stored answer must rest on to be served (--store-min-runs)
	artifacts    string       // --screenshot-dir: screenshots go to files here, not base64

	progress      progress      // answers (not ping, shutdown) counted for the progress line
	progressEvery time.Duration // --progress-every; <= 0: no progress line

	store *store.Store // the ground-truth store, nil when off (Config.Store)

	resets tracker // resets between cases still running; Close waits for them

	closeMu sync.Mutex
	closed  bool           // Close ran: a page launched after it is closed at once
	closers []func() error // run by Close, last first (engines, then their drivers)
}

// defaultDeadline bounds one engine's work on one request: long enough for any real
// layout case, short enough that a stuck case (while(true){}) cannot hold the oracle.
const defaultDeadline = browser.DefaultDeadline

// DefaultMaxLine is the longest request line accepted (bytes).
const DefaultMaxLine = 64 << 20

// readAhead bounds the cases read from stdin but not yet started: their line bytes
// plus caseOverhead each. Reading past waiting cases is what lets a ping behind them
// be answered at once; the bound keeps a producer piping thousands of cases blocked
// on the pipe instead of the oracle buffering them all.
const (
	readAhead    = 64 << 20
	caseOverhead = 4 << 10
)

// Serve reads request lines from r and writes one response line per request to w
// until EOF, a shutdown request, ctx's end, or a failed write to w. It never writes
// anything but protocol JSON to w. Lines after a shutdown are not read; a read of r
// still under way when Serve returns is left to end with r.
func (o *Oracle) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lineWriter{w: bufio.NewWriter(w), broken: make(chan struct{}), limits: o.answerLimits()}
	inflight := o.inflight
	if inflight <= 0 {
		inflight = 1
	}
	// Up to inflight requests are served at once, each answered as it completes.
	places := make(chan struct{}, inflight)
	var running sync.WaitGroup
	defer running.Wait() // every request started gets its answer before Serve returns

	// Lines are read on their own goroutine, so the loop below can answer a ping
	// while cases wait for a place, and notice a broken stdout while stdin is idle.
	lines := make(chan readLine)
	stop := make(chan struct{})
	defer close(stop)
	go readLines(newLineReader(r, o.maxLine), lines, stop)
	progressStop, progressDone := make(chan struct{}), make(chan struct{})
	go func() { o.progress.run(o.log, o.progressEvery, progressStop); close(progressDone) }()
	defer func() { close(progressStop); <-progressDone }() // its last line is out before Serve returns

	type waiting struct {
		req  *Request
		size int
	}
	var queue []waiting // cases read, in order, waiting for a place
	queued := 0         // their bytes, bounded by readAhead
	var shutdownID json.RawMessage
	var readErr error
	reading := true
	for {
		if !reading && len(queue) == 0 {
			break
		}
		var in <-chan readLine
		if reading && queued < readAhead {
			in = lines
		}
		var place chan struct{}
		if len(queue) > 0 {
			place = places
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-out.broken:
			return o.outputLost(out)
		case place <- struct{}{}:
			req := queue[0].req
			queued -= queue[0].size
			queue = queue[1:]
			running.Add(1)
			go func() {
				defer running.Done()
				defer func() { <-places }()
				resp := o.handleSafely(forTheWire(ctx), req)
				o.progress.note(resp)
				out.write(resp)
			}()
		case l := <-in:
			var tooLong *lineTooLongError
			switch {
			case errors.Is(l.err, io.EOF):
				o.log.Info().Msg("stdin closed; finishing requests in flight, then shutting down")
				reading = false
			case errors.As(l.err, &tooLong):
				resp := ErrorResponse{ID: nullID, Error: tooLong.Error(), Line: l.n}
				o.progress.note(resp)
				out.write(resp)
			case l.err != nil:
				readErr = fmt.Errorf("read request: %w", l.err)
				reading = false
			case len(l.line) == 0: // blank lines are not requests
			default:
				req, id, err := ParseRequest(l.line)
				switch {
				case err != nil:
					o.log.Warn().RawJSON("id", id).Int("line", l.n).Err(err).Msg("bad request")
					resp := ErrorResponse{ID: id, Error: err.Error(), Line: l.n}
					o.progress.note(resp)
					out.write(resp)
				case req.Op == OpPing: // answered at once, never queued behind cases
					out.write(o.ping(req.ID))
				case req.Op == opShutdown:
					o.log.Info().Msg("shutdown requested; finishing the requests already read; lines after it are not read")
					shutdownID, reading = req.ID, false
				default:
					size := len(l.line) + caseOverhead
					queue = append(queue, waiting{req, size})
					queued += size
				}
			}
		}
	}
	if shutdownID != nil {
		running.Wait()
		out.write(shutdownResponse{ID: shutdownID, OK: true})
	}
	running.Wait()
	if out.failed() {
		return o.outputLost(out)
	}
	return readErr
}

// outputLost says on stderr that answers can no longer be delivered, and why.
func (o *Oracle) outputLost(out *lineWriter) error {
	err := fmt.Errorf("write response: %w", out.failure())
	o.log.Error().Err(err).Msg("stdout is closed or broken; answers cannot be delivered: no more requests are read, shutting down")
	return err
}

type readLine struct {
	line []byte
	err  error
	n    int // the line's number, from 1
}

// readLines sends each line of lr (or its read error) with its number until EOF,
// another read error, or stop.
func readLines(lr *lineReader, lines chan<- readLine, stop <-chan struct{}) {
	for n := 1; ; n++ {
		line, err := lr.next()
		select {
		case lines <- readLine{line, err, n}:
		case <-stop:
			return
		}
		var tooLong *lineTooLongError
		if err != nil && !errors.As(err, &tooLong) {
			return
		}
	}
}

// handleSafely turns a panic while serving one request into that request's error
// response: one bad case must not end the process serving thousands.
func (o *Oracle) handleSafely(ctx context.Context, req *Request) (resp any) {
	defer func() {
		if p := recover(); p != nil {
			o.log.Error().RawJSON("id", req.ID).Interface("panic", p).Str("stack", string(debug.Stack())).Msg("panic serving request")
			resp = ErrorResponse{ID: req.ID, Error: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	return o.Handle(ctx, req)
}

// Handle answers one parsed request.
func (o *Oracle) Handle(ctx context.Context, req *Request) any {
	start := time.Now()
	defer func() {
		o.log.Debug().RawJSON("id", req.ID).Str("op", req.Op).Dur("took", time.Since(start)).Msg("request")
	}()
	if err := o.checkDocument(req); err != nil {
		return ErrorResponse{ID: req.ID, Error: err.Error()}
	}
	if k := kindFor(req.Op); k != nil {
		return k.answer(ctx, o, req)
	}
	switch req.Op {
	case OpPing:
		return o.ping(req.ID)
	case opShutdown:
		return shutdownResponse{ID: req.ID, OK: true}
	}
	return ErrorResponse{ID: req.ID, Error: fmt.Sprintf("op %q is not implemented yet", req.Op)}
}

func (o *Oracle) ping(id json.RawMessage) PingResponse {
	o.stateMu.RLock()
	defer o.stateMu.RUnlock()
	// Engines is who answers a case sent now: a starting engine too, since the case
	// waits for it (state "starting"); its build as soon as its pages report one.
	p := PingResponse{ID: id, OK: true, Protocol: ProtocolVersion, Engines: o.requestEnginesLocked(),
		Versions: map[string]string{}, Routes: map[string]string{}, States: map[string]pool.Health{}, Profile: o.profile,
		Environment: environment.Name()}
	for name := range o.starting {
		p.States[name] = pool.Health{State: browser.StateStarting}
		b, ok := o.launched[name]
		if !ok {
			b, ok = o.predicted[name] // the build its stored answers are served as
		}
		if ok {
			p.Versions[name] = b.version
			if b.route != "" {
				p.Routes[name] = b.route
			}
		}
	}
	if len(o.pages) > 0 {
		p.Pages = map[string]int{}
		for name, n := range o.pages {
			p.Pages[name] = n
		}
	}
	for _, name := range o.order {
		e := o.engines[name]
		p.Versions[name] = e.Version()
		p.Routes[name] = e.Route()
		p.States[name] = e.Health()
		if st, ok := e.Sandbox(); ok {
			if p.Sandbox == nil {
				p.Sandbox = map[string]browser.SandboxState{}
			}
			p.Sandbox[name] = st
		}
	}
	if len(o.failed) > 0 {
		p.Failed = map[string]string{} // a copy: engines still starting may fail while it is encoded
		for name, why := range o.failed {
			p.Failed[name] = why
		}
	}
	p.Endpoints = o.endpointHealth()
	if o.mem != nil {
		p.Memory = &memoryReport{Limit: o.mem.Limit, Kind: o.mem.Kind, Problem: o.mem.Problem}
		for name := range o.pages {
			if st, ok := o.mem.State(name); ok {
				if p.Memory.Engines == nil {
					p.Memory.Engines = map[string]host.MemoryState{}
				}
				p.Memory.Engines[name] = st
			}
		}
	}
	if o.store != nil {
		st := o.store.Stats()
		p.Store = &st
	}
	return p
}

// Close ends every engine and driver the oracle started.
func (o *Oracle) Close() error {
	// Engines still starting stop early and close what they launched (addCloser);
	// wait for them, so that no browser launched during startup outlives the oracle.
	o.closeMu.Lock()
	o.closed = true
	o.closeMu.Unlock()
	if o.startCancel != nil {
		o.startCancel()
	}
	waitAtMost(&o.startWG, startCloseWait)
	o.closeMu.Lock()
	defer o.closeMu.Unlock()
	waitAtMost(&o.resets, resetTimeout+time.Second) // a page mid-reset closes cleanly
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		if err := o.closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	o.closers = nil
	return errors.Join(errs...)
}

// startCloseWait bounds how long Close waits for launches under way: a browser
// launch does not take a context, and Firefox's takes up to about 20 s here.
const startCloseWait = 45 * time.Second

// waitAtMost waits until t has no work under way, or d passed. It leaves nothing
// behind when d passes (a goroutine blocked on WaitGroup.Wait did).
func waitAtMost(t *tracker, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.idle():
	case <-timer.C:
	}
}

// tracker counts work under way, as a sync.WaitGroup does, and can be waited on with
// a bound (waitAtMost).
type tracker struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil while n is 0
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (t *tracker) Add(d int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 && d > 0 {
		t.zero = make(chan struct{})
	}
	t.n += d
	if t.n < 0 {
		panic("oracle: negative tracker count")
	}
	if t.n == 0 && t.zero != nil {
		close(t.zero)
		t.zero = nil
	}
}

func (t *tracker) Done() { t.Add(-1) }

// idle is closed once no work is under way (already closed when none is).
func (t *tracker) idle() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.zero == nil {
		return closedChan
	}
	return t.zero
}

func (t *tracker) Wait() { <-t.idle() }

// lineWriter writes one JSON value per line and flushes it at once, so a client
// reading line by line sees each answer as soon as it exists. The first failed write
// closes broken; nothing is written after it.
type lineWriter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	err    error
	broken chan struct{}
	limits answerLimits // no line is longer than answerbound.MaxLine (boundLine)
}

func (l *lineWriter) write(v any) {
	b, err := boundLine(v, l.limits)
	if err != nil {
		b, _ = json.Marshal(ErrorResponse{ID: nullID, Error: "internal: cannot encode response: " + err.Error()})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	l.w.Write(b)
	l.w.WriteByte('\n')
	if err := l.w.Flush(); err != nil { // bufio keeps the first write error; Flush reports it
		l.err = err
		close(l.broken)
	}
}

func (l *lineWriter) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *lineWriter) failed() bool { return l.failure() != nil }

// lineReader reads newline-terminated lines of at most max bytes. A longer line is
// skipped whole and reported, so the next line is still read.
type lineReader struct {
	r   *bufio.Reader
	max int
}

type lineTooLongError struct{ max int }

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("request line exceeds the maximum of %d bytes", e.max)
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (l *lineReader) next() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > l.max+1 { // +1: the newline itself
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !(errors.Is(err, io.EOF) && (len(line) > 0 || tooLong)) {
			return nil, err
		}
		if tooLong {
			return nil, &lineTooLongError{max: l.max}
		}
		return trimNewline(line), nil
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
