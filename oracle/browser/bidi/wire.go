package bidi

// The oracle's own WebDriver BiDi client (bidi/bidi.go's wire): one WebSocket, commands
// matched to their replies by id, events ignored (the engine subscribes to none). The calls waiting for
// replies and the reasons a connection ends are ownclient/wire.go's, shared with CDP.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser/ownclient"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// bidiConn is one BiDi session's connection. A call whose context ends returns at
// once; its reply, if it ever comes, is dropped.
type bidiConn struct {
	ws    *websocket.Conn
	calls *ownclient.PendingCalls[bidiReply]
}

// bidiReply is a command's reply: result on success, error and message otherwise.
type bidiReply struct {
	ID      *int            `json:"id"`
	Type    string          `json:"type"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

// errBiDiGone is a call on a connection the browser ended (it exited or closed the
// socket); the error says how.
var errBiDiGone = errors.New("WebDriver BiDi connection closed")

// dialBiDi connects to url (Firefox's "ws://…/session") and reads replies until the
// connection ends; maxMessage bounds one reply (a trace or a dump can be large), and a
// larger one ends the connection, every call told so.
func dialBiDi(ctx context.Context, url string, maxMessage int64, log zerolog.Logger) (*bidiConn, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(maxMessage)
	c := &bidiConn{ws: ws, calls: ownclient.NewPendingCalls[bidiReply]("WebDriver BiDi", log)}
	go c.read(maxMessage)
	return c, nil
}

func (c *bidiConn) read(maxMessage int64) {
	for {
		_, b, err := c.ws.Read(context.Background())
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusMessageTooBig || strings.Contains(err.Error(), "read limited at") {
				c.calls.End(&ownclient.ReplyTooLargeError{Bound: maxMessage, Err: err})
			} else {
				c.calls.End(fmt.Errorf("%w (%v)", errBiDiGone, err))
			}
			return
		}
		r, ok := c.calls.Decode(b)
		if ok && r.ID != nil { // else an event: the engine subscribes to none
			c.calls.Deliver(*r.ID, ownclient.Result[bidiReply]{Reply: r})
		}
	}
}

// alive says whether the connection still reads.
func (c *bidiConn) Alive() bool { return c.calls.Alive() }

// reason is why the connection ended; nil while it has not.
func (c *bidiConn) Reason() error { return c.calls.Reason() }

// call sends one command and waits for its reply under ctx; a BiDi error reply is an
// error naming the command, its error code and message. ctx's end is ctx.Err()
// itself; any other error names the command and why.
func (c *bidiConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if c == nil {
		return nil, fmt.Errorf("%s: %w", method, ownclient.ErrEngineClosed)
	}
	if params == nil {
		params = map[string]any{}
	}
	r, err := c.calls.Call(ctx, method, func(id int) error {
		msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		// The library's write honours ctx (and closes the connection when ctx ends it
		// half written).
		if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if why := c.calls.Reason(); why != nil {
				return why
			}
			return fmt.Errorf("%w: %v", errBiDiGone, err)
		}
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case r.Type != "success":
		return nil, &bidiError{method: method, code: r.Error, message: r.Message}
	}
	return r.Result, nil
}

// bidiError is a BiDi error reply.
type bidiError struct{ method, code, message string }

func (e *bidiError) Error() string { return fmt.Sprintf("%s: %s: %s", e.method, e.code, e.message) }

// close ends the connection for why (the browser's end may already be gone): every
// call waiting on it, and every later one, gets why.
func (c *bidiConn) Close(why error) {
	c.calls.End(why)
	_ = c.ws.CloseNow()
}

// bidiRemoteValue is script.evaluate's and script.callFunction's result.
type bidiRemoteValue struct {
	Type   string `json:"type"`
	Result struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"result"`
	ExceptionDetails *struct {
		Text string `json:"text"`
	} `json:"exceptionDetails"`
}
