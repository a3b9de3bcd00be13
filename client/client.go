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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
