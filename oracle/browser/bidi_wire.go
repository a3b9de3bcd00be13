package browser

// The oracle's own WebDriver BiDi client (bidi.go's wire): one WebSocket, commands
// matched to their replies by id, events ignored (the engine subscribes to none).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"
)

// slowCall is how long a call may take before the debug log names it.
const slowCall = time.Second

// bidiConn is one BiDi session's connection. A call whose context ends returns at
// once; its reply, if it ever comes, is dropped.
type bidiConn struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	waiting map[int]chan bidiReply
	done    chan struct{} // closed when the reader stops: the connection is gone
	err     error         // why the reader stopped; set before done closes
	log     zerolog.Logger
}

// bidiReply is a command's reply: result on success, error and message otherwise.
type bidiReply struct {
	ID      *int            `json:"id"`
	Type    string          `json:"type"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

// errBiDiGone is a call on a connection whose reader stopped (the browser exited or
// closed the socket).
var errBiDiGone = errors.New("WebDriver BiDi connection closed")

// dialBiDi connects to url (Firefox's "ws://…/session") and reads replies until the
// connection ends; maxMessage bounds one reply (a trace or a dump can be large).
func dialBiDi(ctx context.Context, url string, maxMessage int64, log zerolog.Logger) (*bidiConn, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(maxMessage)
	c := &bidiConn{ws: ws, waiting: map[int]chan bidiReply{}, done: make(chan struct{}), log: log}
	go c.read()
	return c, nil
}

func (c *bidiConn) read() {
	var err error
	for {
		var b []byte
		if _, b, err = c.ws.Read(context.Background()); err != nil {
			break
		}
		var r bidiReply
		if json.Unmarshal(b, &r) != nil || r.ID == nil {
			continue // an event, or nothing we asked for
		}
		c.mu.Lock()
		ch := c.waiting[*r.ID]
		delete(c.waiting, *r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

// alive says whether the connection still reads.
func (c *bidiConn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// call sends one command and waits for its reply under ctx; a BiDi error reply is an
// error naming the command, its error code and message.
func (c *bidiConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	c.mu.Lock()
	c.next++
	id, ch := c.next, make(chan bidiReply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		forget()
		return nil, fmt.Errorf("%s: encode: %w", method, err)
	}
	if !c.alive() {
		forget()
		return nil, fmt.Errorf("%s: %w", method, errBiDiGone)
	}
	if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		forget()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w: %v", method, errBiDiGone, err)
	}
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > slowCall {
			c.log.Debug().Str("method", method).Dur("took", d).Msg("slow WebDriver BiDi call")
		}
	}()
	select {
	case r := <-ch:
		if r.Type != "success" {
			return nil, &bidiError{method: method, code: r.Error, message: r.Message}
		}
		return r.Result, nil
	case <-c.done:
		forget()
		return nil, fmt.Errorf("%s: %w", method, errBiDiGone)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// bidiError is a BiDi error reply.
type bidiError struct{ method, code, message string }

func (e *bidiError) Error() string { return fmt.Sprintf("%s: %s: %s", e.method, e.code, e.message) }

// close ends the connection (the browser's end may already be gone).
func (c *bidiConn) close() {
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
