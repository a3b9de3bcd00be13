package cdp

// Events by subscription (cdp.Session's Subscribe): a session's events of one method,
// from the connection's reader (cdp/wire.go) to whoever subscribed, each buffered
// without bound so that the reader never waits; the route attaches a case's popups
// by it (attachPopups, cdp/page.go). The events that change the page's state, and
// the dialogs, go to cdpEngine.event on the reader instead.

import (
	"encoding/json"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
)

// Subscribe is cdp.Session's: the session's events of method, from now on, until
// cancel or the connection's end (which closes the channel).
func (s cdpSession) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	if s.conn == nil {
		ch := make(chan jsonv2.Value)
		close(ch)
		return ch, func() {}
	}
	return s.conn.subs.add(s.id, method)
}

// cdpSubscriptions are a connection's subscriptions to events. Each buffers what the
// reader publishes without bound, so the reader never waits for a subscriber.
type cdpSubscriptions struct {
	mu    sync.Mutex
	subs  map[*cdpSubscription]struct{}
	ended bool
}

type cdpSubscription struct {
	session, method string
	mu              sync.Mutex
	queue           []jsonv2.Value
	more            chan struct{} // 1-buffered: the queue grew, or the subscription ended
	done            bool
}

func (ss *cdpSubscriptions) add(session, method string) (<-chan jsonv2.Value, func()) {
	sub := &cdpSubscription{session: session, method: method, more: make(chan struct{}, 1)}
	out := make(chan jsonv2.Value)
	ss.mu.Lock()
	if ss.subs == nil {
		ss.subs = map[*cdpSubscription]struct{}{}
	}
	if ss.ended {
		sub.done = true
	} else {
		ss.subs[sub] = struct{}{}
	}
	ss.mu.Unlock()
	stop := make(chan struct{})
	go sub.pump(out, stop)
	var once sync.Once
	return out, func() {
		once.Do(func() {
			ss.mu.Lock()
			delete(ss.subs, sub)
			ss.mu.Unlock()
			close(stop)
		})
	}
}

// publish hands an event to every subscription to its session and method.
func (ss *cdpSubscriptions) publish(session, method string, params json.RawMessage) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for sub := range ss.subs {
		if sub.session == session && sub.method == method {
			sub.push(jsonv2.Value(append([]byte(nil), params...)))
		}
	}
}

// end closes every subscription's channel once its buffered events are read.
func (ss *cdpSubscriptions) end() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.ended = true
	for sub := range ss.subs {
		sub.finish()
	}
	ss.subs = nil
}

func (sub *cdpSubscription) push(v jsonv2.Value) {
	sub.mu.Lock()
	sub.queue = append(sub.queue, v)
	sub.mu.Unlock()
	select {
	case sub.more <- struct{}{}:
	default:
	}
}

func (sub *cdpSubscription) finish() {
	sub.mu.Lock()
	sub.done = true
	sub.mu.Unlock()
	select {
	case sub.more <- struct{}{}:
	default:
	}
}

// pump sends the queue's events in order on out, and closes out when the connection
// ended and the queue is empty, or at once when stop closes.
func (sub *cdpSubscription) pump(out chan<- jsonv2.Value, stop <-chan struct{}) {
	defer close(out)
	for {
		sub.mu.Lock()
		var next jsonv2.Value
		have := len(sub.queue) > 0
		if have {
			next, sub.queue = sub.queue[0], sub.queue[1:]
		}
		done := sub.done
		sub.mu.Unlock()
		switch {
		case have:
			select {
			case out <- next:
			case <-stop:
				return
			}
		case done:
			return
		default:
			select {
			case <-sub.more:
			case <-stop:
				return
			}
		}
	}
}

// onEvents calls handle with each of s's events of ev, decoded into cdproto's type,
// in order, on a goroutine of its own, from now until the connection ends; one that
// does not decode is logged and skipped (decodeEvent).
func onEvents[E any](s cdpSession, ev cdp.Event[E], handle func(E)) {
	events, _ := s.Subscribe(ev.Method) // the connection's end closes it
	go func() {
		for raw := range events {
			if v, ok := decodeEvent(s.conn.log, ev, json.RawMessage(raw)); ok {
				handle(v)
			}
		}
	}()
}
