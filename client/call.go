package client

// Calls: sending a request (Start, StartLine, Do, DoLine) and delivering its
// answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

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
