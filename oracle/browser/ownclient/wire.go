package ownclient

// What the oracle's two own wires (package cdp: CDP over a pipe; package bidi:
// BiDi over a WebSocket) share: the calls waiting for their replies, matched by id, and
// why the connection ended. The reader's reason reaches every waiting call and every
// later one; a reply whose id parses but whose body does not fails its call at once.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// slowCall is how long a call may take before the debug log names it.
const slowCall = time.Second

// ErrEngineClosed is a call on an engine that Close ended: the oracle closed it, the
// browser did nothing wrong.
var ErrEngineClosed = errors.New("engine closed")

// ReplyTooLargeError is the end of a connection on which a reply exceeded the bound
// of one reply (cdp.Options.MaxReply, bidi.Options.MaxReply and the framing's slack):
// the browser is alive, the answer was too large to take.
type ReplyTooLargeError struct {
	Bound int64
	Err   error // the reader's own words: "bufio.Scanner: token too long", "read limited at N bytes"
}

func (e *ReplyTooLargeError) Error() string {
	return fmt.Sprintf("a reply over the %d-byte bound of one reply ended the connection (%v)", e.Bound, e.Err)
}
func (e *ReplyTooLargeError) Unwrap() error { return e.Err }

// badReplyError is a reply that names its call's id but does not decode.
type badReplyError struct {
	ID  int
	Err error
}

func (e *badReplyError) Error() string {
	return fmt.Sprintf("reply %d does not decode: %v", e.ID, e.Err)
}
func (e *badReplyError) Unwrap() error { return e.Err }

// Result is what a waiting call receives: the decoded reply, or why there is none.
type Result[R any] struct {
	Reply R
	Err   error
}

// PendingCalls are one connection's calls waiting for their replies.
type PendingCalls[R any] struct {
	wire string // the protocol, as log lines name it: "CDP", "WebDriver BiDi"
	log  zerolog.Logger

	mu      sync.Mutex
	next    int
	waiting map[int]chan Result[R]
	done    chan struct{} // closed when the connection ended
	err     error         // why it ended; set before done closes
}

// NewPendingCalls are the calls of a new connection speaking wire, which logs to log.
func NewPendingCalls[R any](wire string, log zerolog.Logger) *PendingCalls[R] {
	return &PendingCalls[R]{wire: wire, log: log, waiting: map[int]chan Result[R]{}, done: make(chan struct{})}
}

// Call is one command's round trip, for a wire whose replies are R: it registers the
// call, has send write the message that carries its id, and waits for the reply
// under ctx, logging a call slower than slowCall. A connection that has ended is the
// call's error at once. ctx's end is ctx.Err() itself; any other error, send's
// included, names the method ("Page.navigate: ...").
func (p *PendingCalls[R]) Call(ctx context.Context, method string, send func(id int) error) (R, error) {
	var zero R
	if why := p.Reason(); why != nil {
		return zero, fmt.Errorf("%s: %w", method, why)
	}
	id, ch := p.add()
	if err := send(id); err != nil {
		p.forget(id)
		if ctx.Err() != nil && err == ctx.Err() {
			return zero, err
		}
		return zero, fmt.Errorf("%s: %w", method, err)
	}
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > slowCall {
			p.log.Debug().Str("method", method).Dur("took", d).Msg("slow " + p.wire + " call")
		}
	}()
	r, err := p.wait(ctx, id, ch)
	switch {
	case err != nil && ctx.Err() != nil && err == ctx.Err():
		return zero, err
	case err != nil:
		return zero, fmt.Errorf("%s: %w", method, err)
	}
	return r, nil
}

// Decode decodes msg, one message the browser sent, as R; false when it does not
// decode. Such a message fails the call whose id it names at once (badReplyError);
// one that names none is dropped, and logged.
func (p *PendingCalls[R]) Decode(msg []byte) (R, bool) {
	var m R
	if err := json.Unmarshal(msg, &m); err != nil {
		if id, ok := replyID(msg); ok {
			p.Deliver(id, Result[R]{Err: &badReplyError{ID: id, Err: err}})
		} else {
			p.log.Debug().Err(err).Int("bytes", len(msg)).Msg(p.wire + " message that does not decode dropped")
		}
		return m, false
	}
	return m, true
}

// add registers a new call: its id and the channel its reply arrives on.
func (p *PendingCalls[R]) add() (int, chan Result[R]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	ch := make(chan Result[R], 1)
	p.waiting[p.next] = ch
	return p.next, ch
}

// forget drops a call that no longer waits; its reply, if it comes, is dropped.
func (p *PendingCalls[R]) forget(id int) {
	p.mu.Lock()
	delete(p.waiting, id)
	p.mu.Unlock()
}

// Deliver hands id's call its result; false when no call waits for it.
func (p *PendingCalls[R]) Deliver(id int, r Result[R]) bool {
	p.mu.Lock()
	ch := p.waiting[id]
	delete(p.waiting, id)
	p.mu.Unlock()
	if ch != nil {
		ch <- r
	}
	return ch != nil
}

// errConnEnded is the reason of a connection that ended with none given.
var errConnEnded = errors.New("connection ended")

// End records why the connection ended (the first reason stays; nil is
// errConnEnded: a call on an ended connection always fails) and wakes every call
// waiting on it. Safe to call more than once.
func (p *PendingCalls[R]) End(why error) {
	if why == nil {
		why = errConnEnded
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return
	}
	p.err = why
	close(p.done)
}

// Ended is closed when the connection ended.
func (p *PendingCalls[R]) Ended() <-chan struct{} { return p.done }

// Alive says whether the connection has not ended.
func (p *PendingCalls[R]) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Reason is why the connection ended; nil while it has not.
func (p *PendingCalls[R]) Reason() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// wait waits for id's result under ctx. The connection's end is the call's error,
// with its reason; so is ctx's.
func (p *PendingCalls[R]) wait(ctx context.Context, id int, ch chan Result[R]) (R, error) {
	var zero R
	select {
	case r := <-ch:
		return r.Reply, r.Err
	case <-p.done:
		p.forget(id)
		select { // a reply the reader handed over just before the end still counts
		case r := <-ch:
			return r.Reply, r.Err
		default:
		}
		return zero, p.Reason()
	case <-ctx.Done():
		p.forget(id)
		return zero, ctx.Err()
	}
}

// replyID is the id of a message that does not decode as a whole, when its top-level
// object names one before the point where it stops making sense (both protocols
// write a reply's id before its result).
func replyID(msg []byte) (int, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, false
		}
		if key, _ := t.(string); key == "id" {
			var id int
			if dec.Decode(&id) != nil {
				return 0, false
			}
			return id, true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return 0, false
		}
	}
	return 0, false
}
