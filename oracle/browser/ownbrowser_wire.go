package browser

// What the oracle's two own wires (cdp_wire.go: CDP over a pipe; bidi_wire.go: BiDi
// over a WebSocket) share: the calls waiting for their replies, matched by id, and
// why the connection ended. The reader's reason reaches every waiting call and every
// later one; a reply whose id parses but whose body does not fails its call at once.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// errEngineClosed is a call on an engine that Close ended: the oracle closed it, the
// browser did nothing wrong.
var errEngineClosed = errors.New("engine closed")

// replyTooLargeError is the end of a connection on which a reply exceeded the bound
// of one reply (CDPOptions.MaxReply, BiDiOptions.MaxReply and the framing's slack):
// the browser is alive, the answer was too large to take.
type replyTooLargeError struct {
	bound int64
	err   error // the reader's own words: "bufio.Scanner: token too long", "read limited at N bytes"
}

func (e *replyTooLargeError) Error() string {
	return fmt.Sprintf("a reply over the %d-byte bound of one reply ended the connection (%v)", e.bound, e.err)
}
func (e *replyTooLargeError) Unwrap() error { return e.err }

// badReplyError is a reply that names its call's id but does not decode.
type badReplyError struct {
	id  int
	err error
}

func (e *badReplyError) Error() string {
	return fmt.Sprintf("reply %d does not decode: %v", e.id, e.err)
}
func (e *badReplyError) Unwrap() error { return e.err }

// wireResult is what a waiting call receives: the decoded reply, or why there is none.
type wireResult[R any] struct {
	reply R
	err   error
}

// pendingCalls are one connection's calls waiting for their replies.
type pendingCalls[R any] struct {
	mu      sync.Mutex
	next    int
	waiting map[int]chan wireResult[R]
	done    chan struct{} // closed when the connection ended
	err     error         // why it ended; set before done closes
}

func newPendingCalls[R any]() *pendingCalls[R] {
	return &pendingCalls[R]{waiting: map[int]chan wireResult[R]{}, done: make(chan struct{})}
}

// add registers a new call: its id and the channel its reply arrives on.
func (p *pendingCalls[R]) add() (int, chan wireResult[R]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	ch := make(chan wireResult[R], 1)
	p.waiting[p.next] = ch
	return p.next, ch
}

// forget drops a call that no longer waits; its reply, if it comes, is dropped.
func (p *pendingCalls[R]) forget(id int) {
	p.mu.Lock()
	delete(p.waiting, id)
	p.mu.Unlock()
}

// deliver hands id's call its result; false when no call waits for it.
func (p *pendingCalls[R]) deliver(id int, r wireResult[R]) bool {
	p.mu.Lock()
	ch := p.waiting[id]
	delete(p.waiting, id)
	p.mu.Unlock()
	if ch != nil {
		ch <- r
	}
	return ch != nil
}

// end records why the connection ended (the first reason stays) and wakes every
// call waiting on it.
func (p *pendingCalls[R]) end(why error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return
	}
	p.err = why
	close(p.done)
}

// alive says whether the connection has not ended.
func (p *pendingCalls[R]) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// reason is why the connection ended; nil while it has not.
func (p *pendingCalls[R]) reason() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// wait waits for id's result under ctx. The connection's end is the call's error,
// with its reason; so is ctx's.
func (p *pendingCalls[R]) wait(ctx context.Context, id int, ch chan wireResult[R]) (R, error) {
	var zero R
	select {
	case r := <-ch:
		return r.reply, r.err
	case <-p.done:
		p.forget(id)
		select { // a reply the reader handed over just before the end still counts
		case r := <-ch:
			return r.reply, r.err
		default:
		}
		return zero, p.reason()
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
