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

	"github.com/layout-oracle/oracle/trace"
	"github.com/rs/zerolog"
)

// Oracle is the long-lived process state: the launched engines, kept open until
// Close, and the settings every request shares.
type Oracle struct {
	engines  map[string]*pool // launched engines by name
	order    []string         // launched engine names, in AllEngines order
	profile  string
	deadline time.Duration // per engine per request
	maxLine  int
	inflight int // requests served at once
	log      zerolog.Logger
	failed   map[string]string // engines that did not come up, with the reason
	origin   *origin           // serves trace pages

	traceLimits trace.Limits // --trace-max-records, --trace-max-bytes

	resets sync.WaitGroup // resets between cases still running; Close waits for them

	closeMu sync.Mutex
	closers []func() error // run by Close, last first (engines, then their drivers)
}

// DefaultDeadline bounds one engine's work on one request: long enough for any real
// layout case, short enough that a stuck case (while(true){}) cannot hold the oracle.
const DefaultDeadline = 30 * time.Second

// DefaultMaxLine is the longest request line accepted (bytes).
const DefaultMaxLine = 64 << 20

// Serve reads request lines from r and writes one response line per request to w
// until EOF, a shutdown request, or ctx ends. It never writes anything but protocol
// JSON to w.
func (o *Oracle) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lineWriter{w: bufio.NewWriter(w)}
	lines := newLineReader(r, o.maxLine)
	inflight := o.inflight
	if inflight <= 0 {
		inflight = 1
	}
	// Up to inflight requests are served at once, each answered as it completes.
	// Taking a place before reading on is the backpressure: stdin is read no faster
	// than the engines' pages take cases.
	places := make(chan struct{}, inflight)
	var running sync.WaitGroup
	defer running.Wait() // every request read gets its answer before Serve returns
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := lines.next()
		if errors.Is(err, io.EOF) {
			o.log.Info().Msg("stdin closed; finishing requests in flight, then shutting down")
			return nil
		}
		var tooLong *lineTooLongError
		if errors.As(err, &tooLong) {
			out.write(ErrorResponse{ID: nullID, Error: tooLong.Error()})
			continue
		}
		if err != nil {
			return fmt.Errorf("read request: %w", err)
		}
		if len(line) == 0 {
			continue // blank lines are not requests
		}
		req, id, err := ParseRequest(line)
		if err != nil {
			o.log.Warn().RawJSON("id", id).Err(err).Msg("bad request")
			out.write(ErrorResponse{ID: id, Error: err.Error()})
			continue
		}
		switch req.Op {
		case OpPing: // answered at once, never queued behind cases
			out.write(o.ping(req.ID))
			continue
		case OpShutdown:
			o.log.Info().Msg("shutdown requested; finishing requests in flight")
			running.Wait()
			out.write(ShutdownResponse{ID: req.ID, OK: true})
			return nil
		}
		places <- struct{}{}
		running.Add(1)
		go func() {
			defer running.Done()
			defer func() { <-places }()
			out.write(o.handleSafely(ctx, req))
		}()
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
	switch req.Op {
	case OpPing:
		return o.ping(req.ID)
	case OpShutdown:
		return ShutdownResponse{ID: req.ID, OK: true}
	case OpGeometry:
		return o.geometry(ctx, req)
	case OpReflect:
		return o.reflectCase(ctx, req)
	case OpTrace:
		return o.traceCase(ctx, req)
	}
	return ErrorResponse{ID: req.ID, Error: fmt.Sprintf("op %q is not implemented yet", req.Op)}
}

func (o *Oracle) ping(id json.RawMessage) PingResponse {
	p := PingResponse{ID: id, OK: true, Engines: append([]string{}, o.order...),
		Versions: map[string]string{}, Routes: map[string]string{}, States: map[string]PoolHealth{}, Profile: o.profile,
		Environment: Environment()}
	for _, name := range o.order {
		e := o.engines[name]
		p.Versions[name] = e.version()
		p.Routes[name] = e.route()
		p.States[name] = e.health()
	}
	if len(o.failed) > 0 {
		p.Failed = o.failed
	}
	return p
}

// Close ends every engine and driver the oracle started.
func (o *Oracle) Close() error {
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

func waitAtMost(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// lineWriter writes one JSON value per line and flushes it at once, so a client
// reading line by line sees each answer as soon as it exists.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lineWriter) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(ErrorResponse{ID: nullID, Error: "internal: cannot encode response: " + err.Error()})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
	l.w.WriteByte('\n')
	l.w.Flush()
}

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
