// Package client drives a layout oracle process over its NDJSON protocol
// (docs/protocol.md, docs/client.md): it spawns the oracle binary or attaches to a
// reader and writer, sends typed requests with many in flight at once, and matches
// each answer to its request by id, since the oracle answers each request as it
// completes, not in order. A Client is safe for concurrent use.
//
// It imports only the answer packages (dump, trace, reflect), not the oracle or its
// browser drivers, so a fuzzer that drives the oracle builds without them.
//
// Restart on exit (Options.Restart, spawned oracles only): when the process exits,
// every call in flight ends with an *ExitError giving the exit status, and the next
// call starts a new process. Without it, every later call gets that *ExitError too.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure Spawn and Attach. The zero value is usable.
type Options struct {
	// Stderr receives the spawned oracle's log; nil discards it. Either way the
	// last lines are kept for ExitError.Stderr.
	Stderr io.Writer
	// Restart, for a spawned oracle: after it exits, the next call spawns it again.
	Restart bool
	// CloseTimeout bounds Close: how long it waits to end a request line being
	// written and for the oracle to exit after EOF on its stdin, before killing it
	// (default 30s). Shutdown takes a context instead.
	CloseTimeout time.Duration
	// Unmatched, if set, gets every answer line whose id is no call in flight (the
	// answer to a call whose context ended, or a line the client cannot read).
	Unmatched func(line []byte)
	// Env, for a spawned oracle, is added to the environment it inherits
	// ("KEY=value", later entries winning), e.g. ORACLE_STORE=off.
	Env []string
}

// stdoutGrace is how long a call in flight waits, once the oracle's stdout ended,
// for its exit status before failing with "still running".
var stdoutGrace = 10 * time.Second

var (
	// ErrClosed is returned by calls after Close or Kill.
	ErrClosed = errors.New("client: closed")
	// ErrExited matches (errors.Is) every *ExitError.
	ErrExited = errors.New("oracle exited")
)

// ExitError says the oracle's process exited (or, attached, its output ended)
// while a call was in flight, or before it was sent.
type ExitError struct {
	// Status is the process's exit status ("exit status 1", "signal: killed"),
	// or why the stream ended for an attached oracle.
	Status string
	// Code is the exit code, -1 when killed by a signal or unknown.
	Code int
	// Stderr is the end of a spawned oracle's stderr (at most stderrTail bytes, from
	// a line's start): why it exited ("invalid value ... for flag"), whether or not
	// Options.Stderr kept the log. Empty when attached.
	Stderr string
}

func (e *ExitError) Error() string {
	if last := lastLine(e.Stderr); last != "" {
		return "oracle exited (" + e.Status + "; its stderr ends: " + last + ")"
	}
	return "oracle exited (" + e.Status + ")"
}

// Is makes errors.Is(err, ErrExited) true.
func (e *ExitError) Is(target error) bool { return target == ErrExited }

// Client is one oracle connection. Its methods are safe for concurrent use.
type Client struct {
	opts Options
	bin  string
	args []string
	seq  atomic.Uint64

	mu     sync.Mutex
	conn   *conn
	closed bool
}

// Spawn starts bin with args and returns a client speaking to it over its stdin
// and stdout, once the oracle has answered a ping (it does at once, while its
// engines still start): an oracle that exits first, a bad flag, is Spawn's
// *ExitError, with the end of its stderr. ctx bounds that wait; when it ends
// first, the process is killed and ctx's error returned. The process gets its own
// process group, which Kill ends whole.
func Spawn(ctx context.Context, bin string, args []string, opts Options) (*Client, error) {
	c := &Client{opts: opts, bin: bin, args: append([]string(nil), args...)}
	cn, err := c.spawn()
	if err != nil {
		return nil, err
	}
	c.conn = cn
	if _, err := c.Ping(ctx); err != nil {
		c.Kill()
		return nil, err
	}
	return c, nil
}

// Attach returns a client speaking to an oracle the caller started: requests are
// written to w, answers read from r. Close closes w when it is an io.Closer.
// Options.Restart does not apply.
func Attach(r io.Reader, w io.Writer, opts Options) *Client {
	opts.Restart = false
	c := &Client{opts: opts}
	c.conn = c.newConn(r, w, nil, nil)
	return c
}

func (c *Client) spawn() (*conn, error) {
	cmd := exec.Command(c.bin, c.args...)
	tail := &tailBuffer{}
	cmd.Stderr = tail
	if c.opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(c.opts.Stderr, tail)
	}
	// The copy of stderr ends at the oracle's exit, not when a browser that
	// inherited the descriptor lets go of it.
	cmd.WaitDelay = 2 * time.Second
	if len(c.opts.Env) > 0 {
		cmd.Env = append(os.Environ(), c.opts.Env...)
	}
	setGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe, not StdoutPipe: Wait would close that one's read end once the
	// process exits, dropping answers still buffered in it.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	return c.newConn(pr, stdin, cmd, tail), nil
}

// conn is one process (or one attached stream) and the calls in flight on it.
type conn struct {
	w      io.Writer
	cmd    *exec.Cmd   // nil when attached
	stderr *tailBuffer // the end of a spawned oracle's stderr; nil when attached
	wlock  chan struct{}
	exited chan struct{} // closed when cmd.Wait returned (attached: when done)
	done   chan struct{} // closed when the reader ended; err is then set
	err    error
	client *Client

	lines int // request lines written, counted under wlock as the oracle counts them

	mu      sync.Mutex
	pending map[string]*Call
	byLine  map[int]*Call // the calls in flight by their line's number on the oracle's stdin
}

// newConn starts the reader at once, so every field it reads is set here.
func (c *Client) newConn(r io.Reader, w io.Writer, cmd *exec.Cmd, stderr *tailBuffer) *conn {
	cn := &conn{w: w, cmd: cmd, stderr: stderr, wlock: make(chan struct{}, 1), exited: make(chan struct{}), done: make(chan struct{}),
		client: c, pending: map[string]*Call{}, byLine: map[int]*Call{}}
	if cmd != nil {
		go func() {
			_ = cmd.Wait()
			close(cn.exited)
			// A browser that inherited the pipe could keep the reader waiting for EOF.
			if f, ok := r.(*os.File); ok {
				select {
				case <-cn.done:
				case <-time.After(2 * time.Second):
					f.Close()
				}
			}
		}()
	}
	go cn.read(r)
	return cn
}

func (cn *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	var readErr error
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			cn.answer(line[:len(line)-1])
		}
		if err != nil {
			readErr = err
			break
		}
	}
	if f, ok := r.(*os.File); ok && cn.cmd != nil {
		f.Close()
	}
	cn.err = cn.exitError(readErr)
	if cn.cmd == nil {
		close(cn.exited)
	}
	cn.mu.Lock()
	calls := cn.pending
	cn.pending, cn.byLine = nil, nil
	cn.mu.Unlock()
	close(cn.done)
	for _, call := range calls {
		call.finish(nil, fmt.Errorf("%w while this request was in flight", cn.err))
	}
}

// exitError is why the stream ended: the process's exit status once it exited.
func (cn *conn) exitError(readErr error) *ExitError {
	if cn.cmd == nil {
		s := "its output ended"
		if readErr != nil && readErr != io.EOF {
			s += ": " + readErr.Error()
		}
		return &ExitError{Status: s, Code: -1}
	}
	select {
	case <-cn.exited:
	case <-time.After(stdoutGrace):
		return &ExitError{Status: "it closed its stdout and is still running", Code: -1}
	}
	return cn.processExit()
}

// processExit is a spawned oracle's exit as an *ExitError, its stderr's end with
// it; call once cn.exited is closed.
func (cn *conn) processExit() *ExitError {
	st := cn.cmd.ProcessState
	return &ExitError{Status: st.String(), Code: st.ExitCode(), Stderr: cn.stderr.String()}
}

// answer hands one line to the call it answers.
func (cn *conn) answer(line []byte) {
	resp := &Response{Raw: line} // ReadBytes gave line a buffer of its own
	decErr := json.Unmarshal(line, resp)
	if decErr != nil {
		var head struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &head) != nil {
			cn.unmatched(line)
			return
		}
		resp.ID = head.ID
	}
	call := cn.take(resp)
	if call == nil {
		cn.unmatched(line)
		return
	}
	if decErr != nil {
		call.finish(resp, fmt.Errorf("client: undecodable answer: %v", decErr))
		return
	}
	ping := call.Request.Op == OpPing
	if ping {
		resp.States = nil // ping's states are engine states (Ping), not reflection
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		call.finish(resp, fmt.Errorf("client: undecodable answer: %v", err))
		return
	}
	call.finish(resp, resp.readKind(fields, ping))
}

// take removes and returns the call resp answers: the one whose line the oracle
// refused, when resp carries that line's number (its id is then often null: the
// line could not be read), else the one in flight under resp's id.
func (cn *conn) take(resp *Response) *Call {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	call := cn.byLine[resp.Line]
	if resp.Line <= 0 || call == nil || !(isNull(resp.ID) || string(resp.ID) == call.key) {
		call = cn.pending[string(resp.ID)]
	}
	if call != nil {
		cn.forget(call)
	}
	return call
}

// forget removes call from the calls in flight; under cn.mu.
func (cn *conn) forget(call *Call) {
	if cn.pending[call.key] == call {
		delete(cn.pending, call.key)
	}
	if cn.byLine[call.line] == call {
		delete(cn.byLine, call.line)
	}
}

func isNull(id json.RawMessage) bool {
	return len(id) == 0 || string(bytes.TrimSpace(id)) == "null"
}

func (cn *conn) unmatched(line []byte) {
	if f := cn.client.opts.Unmatched; f != nil {
		f(line)
	}
}

// Call is one request in flight (Start) or answered.
type Call struct {
	Request  Request   // as sent, its ID filled in
	Response *Response // the answer; nil when Err is a transport error
	Err      error     // the call failed: the oracle exited, the context ended, ...
	Sent     time.Time // when its line was wholly written
	Received time.Time // when its answer was read (or the call failed)
	Done     chan *Call

	key  string
	line int         // its line's number on the oracle's stdin, from 1
	stop func() bool // ends the context watch

	mu       sync.Mutex
	written  bool
	finished bool
}

// finish records the outcome; Done gets the call once it is both written and
// finished (an answer can be read before the writer has noted its send time).
func (call *Call) finish(resp *Response, err error) {
	call.mu.Lock()
	call.Response, call.Err, call.Received = resp, err, time.Now()
	call.finished = true
	deliver := call.written
	call.mu.Unlock()
	if deliver {
		call.deliver()
	}
}

func (call *Call) markWritten() {
	call.mu.Lock()
	call.Sent = time.Now()
	call.written = true
	deliver := call.finished
	call.mu.Unlock()
	if deliver {
		call.deliver()
	}
}

func (call *Call) deliver() {
	if call.stop != nil {
		call.stop()
	}
	call.Done <- call
}

// current returns the live conn, spawning a new process when the last one exited
// and Restart is on.
func (c *Client) current() (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	cn := c.conn
	select {
	case <-cn.done:
	default:
		return cn, nil
	}
	if !c.opts.Restart || c.bin == "" {
		return nil, cn.err
	}
	nc, err := c.spawn()
	if err != nil {
		return nil, fmt.Errorf("client: respawn after %v: %w", cn.err, err)
	}
	c.conn = nc
	return nc, nil
}

// Start sends req and returns once its line is written; the answer arrives on
// done (buffered; nil: a new channel of one), which also gets the call when it
// fails. ctx bounds the wait for the answer: when it ends first, the call ends
// with ctx's error and its answer, when it comes, is dropped. A line being
// written cannot be cut short, so ctx does not interrupt a write the oracle's
// backpressure holds up. When Start returns an error, nothing is sent on done.
func (c *Client) Start(ctx context.Context, req Request, done chan *Call) (*Call, error) {
	if done == nil {
		done = make(chan *Call, 1)
	} else if cap(done) == 0 {
		return nil, errors.New("client: done channel is unbuffered")
	}
	if req.ID == "" {
		req.ID = "client:" + strconv.FormatUint(c.seq.Add(1), 10)
	}
	key, err := encodeID(req.ID)
	if err != nil {
		return nil, err
	}
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return c.send(ctx, req, key, append(line, '\n'), done)
}

// StartLine is Start for a request line the caller wrote: a line replayed from an
// NDJSON file, one with a field Request does not model, or a malformed one (a
// fuzzer's). id is the answer's id as JSON text (`"a"`, `5`, `null` for a line the
// oracle cannot read an id from); nil takes the line's own id. Call.Request holds
// the line's id and op as far as they can be read.
func (c *Client) StartLine(ctx context.Context, line []byte, id json.RawMessage, done chan *Call) (*Call, error) {
	if done == nil {
		done = make(chan *Call, 1)
	} else if cap(done) == 0 {
		return nil, errors.New("client: done channel is unbuffered")
	}
	if bytes.ContainsAny(line, "\r\n") {
		return nil, errors.New("client: a request line holds a line break")
	}
	var head struct {
		ID json.RawMessage `json:"id"`
		Op any             `json:"op"`
	}
	_ = json.Unmarshal(line, &head) // best effort: the line may be malformed on purpose
	if id == nil {
		if head.ID == nil {
			return nil, errors.New("client: the line has no readable id, and none was given")
		}
		id = head.ID
	}
	var req Request
	_ = json.Unmarshal(id, &req.ID)
	req.Op, _ = head.Op.(string)
	var key bytes.Buffer
	if err := json.Compact(&key, id); err != nil {
		return nil, fmt.Errorf("client: answer id %q is not JSON: %v", id, err)
	}
	return c.send(ctx, req, key.String(), append(append([]byte(nil), line...), '\n'), done)
}

// DoLine is Do for a request line the caller wrote (StartLine).
func (c *Client) DoLine(ctx context.Context, line []byte, id json.RawMessage) (*Response, error) {
	call, err := c.StartLine(ctx, line, id, nil)
	if err != nil {
		return nil, err
	}
	call = <-call.Done
	return call.Response, call.Err
}

// send writes line, whose answer carries key as its id, and registers its call.
func (c *Client) send(ctx context.Context, req Request, key string, line []byte, done chan *Call) (*Call, error) {
	cn, err := c.current()
	if err != nil {
		return nil, err
	}
	call := &Call{Request: req, Done: done, key: key}
	cn.mu.Lock()
	if cn.pending == nil {
		cn.mu.Unlock()
		return nil, cn.err
	}
	if cn.pending[key] != nil {
		cn.mu.Unlock()
		return nil, fmt.Errorf("client: id %s is already in flight", key)
	}
	cn.pending[key] = call
	cn.mu.Unlock()

	select {
	case cn.wlock <- struct{}{}:
	case <-ctx.Done():
		cn.drop(call)
		return nil, ctx.Err()
	case <-cn.done:
		return nil, cn.err
	}
	// Numbered before it is written: a refusal can be read before Write returns.
	cn.lines++
	cn.mu.Lock()
	if cn.pending[key] == call {
		call.line = cn.lines
		cn.byLine[call.line] = call
	}
	cn.mu.Unlock()
	_, werr := cn.w.Write(line)
	<-cn.wlock
	if werr != nil && cn.drop(call) {
		select { // a write fails when the process is gone: say how it ended
		case <-cn.done:
			return nil, cn.err
		case <-time.After(5 * time.Second):
			return nil, fmt.Errorf("client: write request: %w", werr)
		}
	}
	call.stop = context.AfterFunc(ctx, func() {
		if cn.drop(call) {
			call.finish(nil, ctx.Err())
		}
	})
	call.markWritten()
	return call, nil
}

// drop removes call from the calls in flight; false when it was no longer there
// (answered or failed meanwhile).
func (cn *conn) drop(call *Call) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.pending == nil || cn.pending[call.key] != call {
		return false
	}
	cn.forget(call)
	return true
}

// Do sends req and waits for its answer. An error is the call's (the oracle
// exited, ctx ended); the oracle refusing the request is the answer's Error.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	call, err := c.Start(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	call = <-call.Done
	return call.Response, call.Err
}

// Ping asks for the oracle's state, and checks the oracle speaks this package's
// protocol version (a *ProtocolError if not; an oracle too old to say is taken
// as it is).
func (c *Client) Ping(ctx context.Context) (*Ping, error) {
	r, err := c.Do(ctx, Request{Op: OpPing})
	if err != nil {
		return nil, err
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	var p Ping
	if err := json.Unmarshal(r.Raw, &p); err != nil {
		return nil, fmt.Errorf("client: ping answer: %v", err)
	}
	if p.Protocol != 0 && p.Protocol != ProtocolVersion {
		return nil, &ProtocolError{Oracle: p.Protocol}
	}
	return &p, nil
}

// WaitReady pings every interval until no engine is still starting, and returns
// that ping: from then on its Engines do not change (docs/protocol.md). Cases
// need no wait; this is for knowing the final engines and builds.
func (c *Client) WaitReady(ctx context.Context, every time.Duration) (*Ping, error) {
	for {
		p, err := c.Ping(ctx)
		if err != nil || len(p.Starting()) == 0 {
			return p, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
}

// Exited is closed once the current oracle process has exited (attached: once its
// output ended), for a caller that waits on it with other things (a signal it
// sent, a kill). An oracle can close its stdout well before it exits. After a
// restart it is the new process's.
func (c *Client) Exited() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.exited
}

// PID is the spawned oracle's current process id, 0 when attached.
func (c *Client) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn.cmd == nil {
		return 0
	}
	return c.conn.cmd.Process.Pid
}
