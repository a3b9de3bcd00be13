package cdp

// The CDP route's typed commands (cdp/cdp.go calls them): cdpSession is cdproto's
// cdp.Session over the oracle's own pipe (cdp/wire.go), so every command is
// cdp.Call(ctx, session, page.Navigate, page.NavigateParams{...}) with cdproto's
// parameter and result types, and the wire stays the oracle's (docs/cdp-route.md).
// Also the route's errors: CDP's error replies by code, with their data, and the
// oracle's own "target closed".

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/layout-oracle/oracle/inpage"
	"github.com/rs/zerolog"
)

// cdpSession is one CDP session on a connection: a page's (id its sessionId) or
// the browser's (id ""). It is cdproto's cdp.Session.
type cdpSession struct {
	conn *cdpConn
	id   string
}

var _ cdp.Session = cdpSession{}

// jsonOptions are the JSON options of every command's parameters and result: as
// encoding/json did before, text that is not UTF-8 becomes U+FFFD instead of an error.
var jsonOptions = jsonv2.AllowInvalidUTF8(true)

// Call sends method with params (cdproto's parameter type) on the session and decodes
// its result into result (a pointer to cdproto's result type; nil: none wanted). An
// error reply is a *cdpReplyError; the wire's errors are cdpConn.call's.
func (s cdpSession) Call(ctx context.Context, method string, params, result any) error {
	body, err := jsonv2.Marshal(params, jsonOptions)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", method, err)
	}
	raw, err := s.conn.call(ctx, s.id, method, json.RawMessage(body))
	if err != nil {
		return err
	}
	if result == nil || len(raw) == 0 {
		return nil
	}
	if err := jsonv2.Unmarshal(raw, result, jsonOptions); err != nil {
		return &cdpResultError{fmt.Errorf("%s: result does not decode: %w", method, err)}
	}
	return nil
}

// cdpResultError is a command's result that does not decode into cdproto's type:
// the browser answered, the route could not read the answer.
type cdpResultError struct{ error }

func (e *cdpResultError) Unwrap() error { return e.error }

// grantPermissions is Browser.grantPermissions, typed as cdproto types its commands.
// The pinned protocol (Chromium 157's, docs/cdp-route.md) no longer has it; the
// Chromium this project runs (156) still serves it, and Playwright's route grants a
// context's permissions with it (crBrowser.ts), so both routes grant alike.
var grantPermissions = cdp.Command[grantPermissionsParams, cdp.Empty]{Method: "Browser.grantPermissions"}

type grantPermissionsParams struct {
	Permissions      []cdpbrowser.PermissionType `json:"permissions"`
	BrowserContextID cdp.BrowserContextID        `json:"browserContextId,omitempty"`
}

// CDP's error codes (Chromium's crdtp/dispatch.h: JSON-RPC's, and its server errors).
const (
	cdpInvalidParams   = -32602 // also "No target with given id found"
	cdpServerError     = -32000 // every other failure of a command, told apart by its text only
	cdpSessionNotFound = -32001 // the sessionId names no session: its target closed or detached
)

// cdpReplyError is a CDP error reply: the command, CDP's code and message, and its data
// (more detail, often on invalid parameters; "" when the reply had none).
type cdpReplyError struct {
	Method  string
	Code    int64
	Message string
	Data    string
}

func (e *cdpReplyError) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("%s: %s (%d): %s", e.Method, e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s: %s (%d)", e.Method, e.Message, e.Code)
}

// errorData is an error reply's data as text: a JSON string's value, other JSON as it
// came.
func errorData(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// asCDPError is err's CDP error reply, if it is one.
func asCDPError(err error) (*cdpReplyError, bool) {
	var e *cdpReplyError
	return e, errors.As(err, &e)
}

// lostContext says err is CDP's reply that the page's JavaScript context went away
// under the call (a navigation). CDP has no code of its own for it: the reply is the
// generic server error (-32000), and only its text, V8's or the protocol's
// (contextGone), tells it apart.
func lostContext(err error) bool {
	e, ok := asCDPError(err)
	return ok && e.Code == cdpServerError && browser.ContextGone(e.Message)
}

// targetClosed says err is CDP's reply that the call's session is gone: its target
// closed or detached (code -32001, "Session with given id not found").
func targetClosed(err error) bool {
	e, ok := asCDPError(err)
	return ok && e.Code == cdpSessionNotFound
}

// errTargetClosed is a call on a page that closed or crashed under it: the CDP
// route's own, in the text of playwright-go's ErrTargetClosed ("target closed"), so
// that the two routes' answers read alike.
var errTargetClosed = errors.New("target closed")

// pageScriptError is an exception or failure of the page's script as the CDP route
// reports it, worded as Playwright's Evaluate words it ("playwright: " and the
// message), so that the two routes' answers are byte for byte the same.
type pageScriptError struct{ msg string }

func (e *pageScriptError) Error() string { return "playwright: " + e.msg }

// cdpSend is cdp.Call with no wait for the reply (a dialog's answer, a popup's
// attach: the events' handler must not wait on the wire it runs on). A failure is
// logged.
func cdpSend[P, R any](s cdpSession, c cdp.Command[P, R], params P) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), browser.ProbeTimeout)
		defer cancel()
		if _, err := cdp.Call(ctx, s, c, params); err != nil {
			s.conn.log.Debug().Str("method", c.Method).Err(err).Msg("CDP command sent without waiting failed")
		}
	}()
}

// decodeEvent decodes an event's parameters into cdproto's type for it; one that
// does not decode is logged and ignored (false).
func decodeEvent[E any](log zerolog.Logger, ev cdp.Event[E], params json.RawMessage) (E, bool) {
	var v E
	if err := jsonv2.Unmarshal(params, &v, jsonOptions); err != nil {
		log.Warn().Str("event", ev.Method).Err(err).Msg("CDP event does not decode; ignored")
		return v, false
	}
	return v, true
}

// cdpEvaluateParams is the Runtime.evaluate of fn called with arg (plain JSON): by
// value, its promise awaited, with no user gesture, as the Playwright route's
// runtimeEvaluate sends it (the same expression, inpage.EvaluateCall).
func cdpEvaluateParams(fn string, arg any) (cdpruntime.EvaluateParams, error) {
	var a bytes.Buffer
	enc := json.NewEncoder(&a)
	enc.SetEscapeHTML(false) // markup stays its size: no \u003c for every <
	if err := enc.Encode(arg); err != nil {
		return cdpruntime.EvaluateParams{}, fmt.Errorf("encode the argument: %w", err)
	}
	return cdpruntime.EvaluateParams{
		Expression:    inpage.Fill(inpage.EvaluateCall, "FN", fn, "ARG", string(bytes.TrimSpace(a.Bytes()))),
		ReturnByValue: ptr(true), AwaitPromise: ptr(true), UserGesture: ptr(false),
	}, nil
}

// cdpEvaluated is the value of a Runtime.evaluate result (as encoding/json decodes
// it: numbers float64), or its exception as the error Playwright's Evaluate gives for
// it (getExceptionMessage: the exception's description, else its value, else the
// text).
func cdpEvaluated(r cdpruntime.EvaluateResult) (any, error) {
	if d := r.ExceptionDetails; d != nil {
		msg := d.Text
		if x := d.Exception; x != nil {
			msg = x.Description
			if msg == "" {
				var v any
				if len(x.Value) > 0 {
					if err := json.Unmarshal(x.Value, &v); err != nil {
						return nil, fmt.Errorf("unreadable exception of Runtime.evaluate: %w", err)
					}
				}
				msg = fmt.Sprint(v)
			}
		}
		return nil, &pageScriptError{msg}
	}
	var v any
	if r.Result != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, &v); err != nil {
			return nil, fmt.Errorf("unreadable reply to Runtime.evaluate: %w", err)
		}
	}
	return v, nil
}
