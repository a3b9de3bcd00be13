package client

// A connection: one oracle process (or attached stream), reading its answers
// and matching each to the call in flight it answers.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// stdoutGrace is how long a call in flight waits, once the oracle's stdout ended,
// for its exit status before failing with "still running".
var stdoutGrace = 10 * time.Second

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
