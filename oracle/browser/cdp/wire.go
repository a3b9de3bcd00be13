package cdp

// The oracle's own Chrome DevTools Protocol client (cdp/cdp.go's wire): Chromium's
// --remote-debugging-pipe, one JSON message per NUL-terminated record on fds 3 (the
// browser reads) and 4 (it writes), with flat sessions (a page's commands and events
// carry its sessionId). Commands are matched to replies by id; events go to one
// handler, on the reader's goroutine, which must not call back into the connection.
// The calls waiting for replies and the reasons a connection ends are
// ownclient/wire.go's, shared with BiDi.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/ownclient"

	"github.com/rs/zerolog"
)

// cdpConn is one connection to a Chromium. A call whose context ends returns at
// once; its reply, if it ever comes, is dropped. Its write honours its context too: a
// write the browser does not take within it ends the connection (a half-written
// message leaves nothing to frame the next one), so no call waits behind it.
type cdpConn struct {
	w       io.WriteCloser
	r       io.ReadCloser
	wtoken  chan struct{} // holds a token while one message is written
	calls   *ownclient.PendingCalls[cdpMessage]
	onEvent func(session, method string, params json.RawMessage)
	subs    cdpSubscriptions // cdp.Session's Subscribe (cdp/session.go)
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
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"` // a string in Chromium's replies
	} `json:"error"`
}

// cdpCommand is a command as the wire sends it (params: cdpSession.Call's encoded
// cdproto parameters).
type cdpCommand struct {
	ID        int    `json:"id"`
	Method    string `json:"method"`
	Params    any    `json:"params"`
	SessionID string `json:"sessionId,omitempty"` // "": the browser's own session
}

// errCDPGone is a call on a connection the browser ended (it exited or closed its
// pipe) or that stopped taking our writes; the error says which.
var errCDPGone = errors.New("CDP pipe closed")

// newCDPConn reads messages from r until it ends, each at most maxMessage bytes (a
// larger one ends the connection, as the BiDi route's read limit does, and every
// call is told so).
func newCDPConn(w io.WriteCloser, r io.ReadCloser, maxMessage int64, onEvent func(session, method string, params json.RawMessage), log zerolog.Logger) *cdpConn {
	c := &cdpConn{w: w, r: r, wtoken: make(chan struct{}, 1), calls: ownclient.NewPendingCalls[cdpMessage]("CDP", log), onEvent: onEvent, log: log}
	go c.read(maxMessage)
	return c
}

func (c *cdpConn) read(maxMessage int64) {
	records := bufio.NewScanner(c.r)
	records.Buffer(make([]byte, min(64<<10, maxMessage)), int(maxMessage)) // a first buffer over the bound would lift it
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
		m, ok := c.calls.Decode(records.Bytes())
		if !ok {
			continue
		}
		if m.ID == nil {
			if m.Method != "" && c.onEvent != nil {
				c.onEvent(m.SessionID, m.Method, m.Params)
			}
			if m.Method != "" {
				c.subs.publish(m.SessionID, m.Method, m.Params)
			}
			continue
		}
		c.calls.Deliver(*m.ID, ownclient.Result[cdpMessage]{Reply: m})
	}
	err := records.Err()
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		c.calls.End(&ownclient.ReplyTooLargeError{Bound: maxMessage, Err: err})
	case err == nil:
		c.calls.End(fmt.Errorf("%w (%v)", errCDPGone, io.EOF))
	default:
		c.calls.End(fmt.Errorf("%w (%v)", errCDPGone, err))
	}
	c.subs.end()
}

// alive says whether the connection still reads.
func (c *cdpConn) Alive() bool { return c.calls.Alive() }

// reason is why the connection ended; nil while it has not.
func (c *cdpConn) Reason() error { return c.calls.Reason() }

// call sends one command (to session, or to the browser when "") and waits for its
// reply under ctx; an error reply is a *cdpReplyError naming the command. ctx's end is
// ctx.Err() itself; any other error names the command and why.
func (c *cdpConn) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	if c == nil {
		return nil, fmt.Errorf("%s: %w", method, ownclient.ErrEngineClosed)
	}
	if params == nil {
		params = json.RawMessage("{}")
	}
	r, err := c.calls.Call(ctx, method, func(id int) error {
		var msg bytes.Buffer
		enc := json.NewEncoder(&msg)
		enc.SetEscapeHTML(false) // markup stays its size: no \u003c for every <
		if err := enc.Encode(cdpCommand{ID: id, Method: method, Params: params, SessionID: session}); err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		msg.Truncate(msg.Len() - 1) // Encode's newline
		msg.WriteByte(0)
		return c.write(ctx, msg.Bytes())
	})
	switch {
	case err != nil:
		return nil, err
	case r.Error != nil:
		return nil, &cdpReplyError{Method: method, Code: r.Error.Code, Message: r.Error.Message, Data: errorData(r.Error.Data)}
	}
	return r.Result, nil
}

// writeGrace is how long a write under way may outlast its call's context before
// the connection is given up: a pipe that takes messages finishes one in
// microseconds, so only a browser that stopped reading reaches it.
const writeGrace = 50 * time.Millisecond

// write writes one whole message under ctx, one message at a time. A write that does
// not finish within ctx (and writeGrace) ends the connection: the message may be half
// written.
func (c *cdpConn) write(ctx context.Context, msg []byte) error {
	select {
	case c.wtoken <- struct{}{}:
	case <-c.calls.Ended():
		return c.calls.Reason()
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil { // nothing written yet: the connection stays good
		<-c.wtoken
		return err
	}
	written := make(chan error, 1)
	go func() {
		_, err := c.w.Write(msg)
		<-c.wtoken
		written <- err
	}()
	var err error
	select {
	case err = <-written:
	case <-ctx.Done():
		grace := time.NewTimer(writeGrace)
		defer grace.Stop()
		select {
		case err = <-written:
		case <-grace.C:
			c.calls.End(fmt.Errorf("%w: a %d-byte command was not taken within its call's deadline (the browser does not read its pipe)", errCDPGone, len(msg)))
			_ = c.w.Close() // ends the write under way
			return ctx.Err()
		}
	}
	if err != nil {
		if why := c.calls.Reason(); why != nil {
			return why
		}
		return fmt.Errorf("%w: write: %v", errCDPGone, err)
	}
	return nil
}

// close ends the connection for why (the browser's end may already be gone): every
// call waiting on it, and every later one, gets why.
func (c *cdpConn) Close(why error) {
	c.calls.End(why)
	c.subs.end()
	_ = c.w.Close()
	_ = c.r.Close()
}
