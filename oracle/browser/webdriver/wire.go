package webdriver

// The W3C WebDriver wire client: HTTP JSON commands to the session (new session,
// execute, timeouts, window handles) and the error types the engine acts on.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// newSession opens the session and returns its browserVersion.
func (e *webDriverEngine) newSession(ctx context.Context, p *wdProc) (string, error) {
	// --enable-sandbox: WebKitGTK's bubblewrap sandbox for the web process, which
	// MiniBrowser leaves off unless asked (docs/sandbox.md).
	args := append([]string{"--automation", "--enable-sandbox"}, e.opts.BrowserArgs...)
	caps := map[string]any{
		"webkitgtk:browserOptions": map[string]any{"binary": e.opts.BrowserPath, "args": args},
		"unhandledPromptBehavior":  "dismiss",
		"pageLoadStrategy":         "normal",
	}
	if e.opts.AnyEngine {
		delete(caps, "webkitgtk:browserOptions")
	}
	maps.Copy(caps, e.opts.Capabilities)
	body := map[string]any{"capabilities": map[string]any{"alwaysMatch": caps}}
	raw, err := e.do(ctx, p, http.MethodPost, "/session", body)
	var wdErr *webDriverError
	if errors.As(err, &wdErr) && wdErr.Code == "invalid argument" {
		// A driver that rejects the prompt capability: dialogs are then handled by
		// dismissing on "unexpected alert open".
		e.log.Warn().Err(err).Msg("driver rejected unhandledPromptBehavior; retrying without it")
		delete(caps, "unhandledPromptBehavior")
		raw, err = e.do(ctx, p, http.MethodPost, "/session", body)
	}
	if err != nil {
		return "", err
	}
	var s struct {
		SessionID    string `json:"sessionId"`
		Capabilities struct {
			BrowserName    string `json:"browserName"`
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("malformed new-session response: %v", err)
	}
	if s.SessionID == "" {
		return "", fmt.Errorf("new-session response has no sessionId: %s", raw)
	}
	e.mu.Lock()
	p.session = s.SessionID
	e.name = s.Capabilities.BrowserName
	e.mu.Unlock()
	if err := browser.CheckVersion(s.Capabilities.BrowserVersion); err != nil {
		return "", fmt.Errorf("session capabilities: %w", err)
	}
	e.log.Debug().Str("session", s.SessionID).Str("browser", s.Capabilities.BrowserName).
		Str("version", s.Capabilities.BrowserVersion).Msg("session created")
	return s.Capabilities.BrowserVersion, nil
}

// execute is Execute Script, dismissing a dialog that is somehow still open once.
func (e *webDriverEngine) execute(ctx context.Context, body any) (json.RawMessage, error) {
	raw, err := e.session(ctx, http.MethodPost, "/execute/sync", body)
	var wdErr *webDriverError
	if errors.As(err, &wdErr) && wdErr.Code == "unexpected alert open" {
		e.log.Debug().Err(err).Msg("dismissing a dialog")
		if _, derr := e.session(ctx, http.MethodPost, "/alert/dismiss", map[string]any{}); derr != nil {
			e.log.Warn().Err(derr).Msg("dismiss alert")
		}
		raw, err = e.session(ctx, http.MethodPost, "/execute/sync", body)
	}
	return raw, err
}

// setTimeouts keeps the session's script timeout just inside ctx's deadline, so that
// a never-settling case ends as WebDriver's "script timeout" (cheap) rather than as
// ctx's deadline (a restart). It is set only when the deadline moved a lot, not per call.
func (e *webDriverEngine) setTimeouts(ctx context.Context) error {
	remaining := browser.DefaultDeadline
	if dl, ok := ctx.Deadline(); ok {
		remaining = time.Until(dl)
	}
	if remaining <= 0 {
		return context.DeadlineExceeded
	}
	margin := 50 * time.Millisecond
	if remaining/10 < margin {
		margin = remaining / 10
	}
	if e.scriptTimeout <= remaining-margin && e.scriptTimeout >= remaining*7/10 {
		return nil
	}
	want := (remaining - margin) * 9 / 10
	if want < time.Millisecond {
		want = time.Millisecond
	}
	ms := want.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if _, err := e.session(ctx, http.MethodPost, "/timeouts", map[string]int64{"script": ms, "pageLoad": ms}); err != nil {
		return err
	}
	e.scriptTimeout = time.Duration(ms) * time.Millisecond
	return nil
}

// wrap names what failed; a deadline reads as a timeout and matches
// context.DeadlineExceeded.
func (e *webDriverEngine) wrap(ctx context.Context, what string, err error) error {
	var wdErr *webDriverError
	if errors.As(err, &wdErr) {
		if wdErr.Code == "script timeout" || wdErr.Code == "timeout" {
			return &timeoutError{msg: fmt.Sprintf("webkit: %s: case timed out: %s", what, wdErr), cause: wdErr}
		}
		if wdErr.Code == "no such frame" {
			return browser.EngineErrorf(browser.WebKit, "%s: the page navigated away during the call: %w", what, err)
		}
		return browser.EngineErrorf(browser.WebKit, "%s: %w", what, err)
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return &timeoutError{msg: fmt.Sprintf("webkit: %s: case timed out (context deadline)", what)}
	}
	return browser.EngineErrorf(browser.WebKit, "%s: %w", what, err)
}

// timeoutError is a case's timeout; errors.Is(err, context.DeadlineExceeded) holds.
// cause is WebDriver's "script timeout" error, nil when ctx's deadline hit first.
type timeoutError struct {
	msg   string
	cause error
}

func (t *timeoutError) Error() string        { return t.msg }
func (t *timeoutError) Unwrap() error        { return t.cause }
func (t *timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// windowHandles lists the session's windows.
func (e *webDriverEngine) windowHandles(ctx context.Context) ([]string, error) {
	raw, err := e.session(ctx, http.MethodGet, "/window/handles", nil)
	if err != nil {
		return nil, err
	}
	var hs []string
	if err := json.Unmarshal(raw, &hs); err != nil {
		return nil, fmt.Errorf("window handles: %v (%s)", err, raw)
	}
	return hs, nil
}

// session sends a command to the current session.
func (e *webDriverEngine) session(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	e.mu.Lock()
	p, x := e.proc, e.xvfb
	session := ""
	if p != nil {
		session = p.session
	}
	e.mu.Unlock()
	if session == "" {
		return nil, errors.New("no live session")
	}
	// A print dialog blocks whichever command is waiting when the page opens it: a
	// case's script, or the reset's navigation when the page prints from pagehide
	// (host/xdialogs.go). On the oracle's own display only.
	if x != nil {
		defer x.WatchDialogs(e.log)()
	}
	return e.do(ctx, p, method, "/session/"+session+path, body)
}

// webDriverError is an error response: WebDriver's error code and message.
type webDriverError struct {
	Status  int
	Code    string // e.g. "javascript error"
	Message string
}

func (w *webDriverError) Error() string { return w.Code + ": " + w.Message }

// errViewportChanged matches (errors.Is) a call that failed with viewportPrelude's
// error: the browser's own UI took part of the viewport during the case.
var errViewportChanged = errors.New(viewportChangedText)

// Is makes errors.Is(err, errViewportChanged) find the call script's error for a
// viewport that changed during the case (viewportPrelude): a page's error reaches
// the driver as text only, so its text is read here, in this one place.
func (w *webDriverError) Is(target error) bool {
	return target == errViewportChanged && strings.Contains(w.Message, viewportChangedText)
}

// sessionLost says the error means the session or its window is gone.
func (w *webDriverError) sessionLost() bool {
	switch w.Code {
	case "invalid session id", "no such window", "session not created":
		return true
	}
	return false
}

// do is one WebDriver HTTP command; it returns the response's value.
func (e *webDriverEngine) do(ctx context.Context, p *wdProc, method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	limit := int64(commandReplyLimit)
	if strings.HasSuffix(path, "/execute/sync") {
		limit = e.opts.maxReply()
	}
	data, err := readAtMost(resp.Body, limit)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%s %s: HTTP %d, malformed body: %.200s", method, path, resp.StatusCode, data)
	}
	if resp.StatusCode >= 400 {
		var we struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(env.Value, &we)
		if we.Error == "" {
			we.Error = "unknown error"
			we.Message = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, data)
		}
		return nil, &webDriverError{Status: resp.StatusCode, Code: we.Error, Message: we.Message}
	}
	return env.Value, nil
}

// Reply bounds: a remote endpoint's reply is read only this far, so a
// huge or endless body costs an error, not the oracle's memory. Only Execute Script
// carries a case's answer (a dump, a trace: trace.go accepts 2x --trace-max-bytes
// plus 1 MiB, which JSON escaping may double again); every other command's reply is
// a few hundred bytes.
const commandReplyLimit = 1 << 20

func (o Options) maxReply() int64 {
	if o.MaxReply > 0 {
		return o.MaxReply
	}
	return browser.DefaultMaxReply
}

// readAtMost reads r whole, or fails once it passes limit bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("reply over %d bytes: not read further", limit)
	}
	return data, nil
}
