package browser

// The oracle's own Chrome DevTools Protocol client (cdp.go's wire): Chromium's
// --remote-debugging-pipe, one JSON message per NUL-terminated record on fds 3 (the
// browser reads) and 4 (it writes), with flat sessions (a page's commands and events
// carry its sessionId). Commands are matched to replies by id; events go to one
// handler, on the reader's goroutine, which must not call back into the connection.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// cdpConn is one connection to a Chromium. A call whose context ends returns at
// once; its reply, if it ever comes, is dropped.
type cdpConn struct {
	w       io.WriteCloser
	r       io.ReadCloser
	wmu     sync.Mutex // one message written at a time
	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpMessage
	done    chan struct{} // closed when the reader stops: the connection is gone
	err     error         // why the reader stopped; set before done closes
	onEvent func(session, method string, params json.RawMessage)
	log     zerolog.Logger
}

// cdpMessage is a reply (ID set) or an event (Method set) from the browser.
type cdpMessage struct {
	ID        *int            `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errCDPGone is a call on a connection whose reader stopped (the browser exited or
// closed its pipe).
var errCDPGone = errors.New("CDP pipe closed")

// cdpFault is a CDP error reply.
type cdpFault struct {
	method  string
	code    int
	message string
}

func (e *cdpFault) Error() string { return fmt.Sprintf("%s: %s (%d)", e.method, e.message, e.code) }

// newCDPConn reads messages from r until it ends, each at most maxMessage bytes (a
// larger one ends the connection, as the BiDi route's read limit does).
func newCDPConn(w io.WriteCloser, r io.ReadCloser, maxMessage int64, onEvent func(session, method string, params json.RawMessage), log zerolog.Logger) *cdpConn {
	c := &cdpConn{w: w, r: r, waiting: map[int]chan cdpMessage{}, done: make(chan struct{}), onEvent: onEvent, log: log}
	go c.read(maxMessage)
	return c
}

func (c *cdpConn) read(maxMessage int64) {
	records := bufio.NewScanner(c.r)
	records.Buffer(make([]byte, 64<<10), int(maxMessage))
	records.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return 0, nil, io.ErrUnexpectedEOF
		}
		return 0, nil, nil
	})
	for records.Scan() {
		var m cdpMessage
		if json.Unmarshal(records.Bytes(), &m) != nil {
			continue
		}
		if m.ID == nil {
			if m.Method != "" && c.onEvent != nil {
				c.onEvent(m.SessionID, m.Method, m.Params)
			}
			continue
		}
		c.mu.Lock()
		ch := c.waiting[*m.ID]
		delete(c.waiting, *m.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
	err := records.Err()
	if err == nil {
		err = io.EOF
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// alive says whether the connection still reads.
func (c *cdpConn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// call sends one command (to session, or to the browser when "") and waits for its
// reply under ctx; an error reply is a *cdpFault naming the command.
func (c *cdpConn) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	c.mu.Lock()
	c.next++
	id, ch := c.next, make(chan cdpMessage, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	m := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		m["sessionId"] = session
	}
	var msg bytes.Buffer
	enc := json.NewEncoder(&msg)
	enc.SetEscapeHTML(false) // markup stays its size: no \u003c for every <
	if err := enc.Encode(m); err != nil {
		forget()
		return nil, fmt.Errorf("%s: encode: %w", method, err)
	}
	msg.Truncate(msg.Len() - 1) // Encode's newline
	msg.WriteByte(0)
	if !c.alive() {
		forget()
		return nil, fmt.Errorf("%s: %w", method, errCDPGone)
	}
	c.wmu.Lock()
	_, err := c.w.Write(msg.Bytes())
	c.wmu.Unlock()
	if err != nil {
		forget()
		return nil, fmt.Errorf("%s: %w: %v", method, errCDPGone, err)
	}
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > slowCall {
			c.log.Debug().Str("method", method).Dur("took", d).Msg("slow CDP call")
		}
	}()
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, &cdpFault{method: method, code: r.Error.Code, message: r.Error.Message}
		}
		return r.Result, nil
	case <-c.done:
		forget()
		return nil, fmt.Errorf("%s: %w", method, errCDPGone)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// send is call with no wait for the reply (a dialog's answer, a termination).
func (c *cdpConn) send(session, method string, params any) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		if _, err := c.call(ctx, session, method, params); err != nil {
			c.log.Debug().Str("method", method).Err(err).Msg("CDP command sent without waiting failed")
		}
	}()
}

// close ends the connection (the browser's end may already be gone).
func (c *cdpConn) close() {
	_ = c.w.Close()
	_ = c.r.Close()
}
