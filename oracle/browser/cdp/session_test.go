package cdp

// Unit tests of the CDP route's typed session (cdp/session.go) over an in-memory pipe
// (newFakeCDPPipe: no browser runs, so they test our own code only): what a cdproto
// command puts on the wire, CDP's error replies by code with their data, and
// cdp.Session's event subscriptions. The route against the real Chromium is
// cdp_test.go's.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"

	"github.com/layout-oracle/oracle/oracle/browser/ownclient"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingCDPPipe is a cdpConn whose fake browser records every command it reads
// and answers the n-th with reply(n) (nil: nothing), and can send events (emit).
func recordingCDPPipe(t *testing.T, reply func(n int) []byte) (conn *cdpConn, sent <-chan []byte, emit func(string)) {
	t.Helper()
	ourR, browserW := io.Pipe()
	browserR, ourW := io.Pipe()
	t.Cleanup(func() { browserW.Close(); browserR.Close(); ourW.Close(); ourR.Close() })
	got := make(chan []byte, 16)
	go func() {
		sc := bufio.NewScanner(browserR)
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			if i := bytes.IndexByte(data, 0); i >= 0 {
				return i + 1, data[:i], nil
			}
			return 0, nil, nil
		})
		for n := 1; sc.Scan(); n++ {
			got <- append([]byte(nil), sc.Bytes()...)
			if b := reply(n); b != nil {
				if _, err := browserW.Write(append(b, 0)); err != nil {
					return
				}
			}
		}
	}()
	emit = func(msg string) { _, _ = browserW.Write(append([]byte(msg), 0)) }
	return newCDPConn(ourW, ourR, 1<<20, nil, testutil.Logger(t)), got, emit
}

// A cdproto command goes out as the route sent it by hand before (the page's
// sessionId, the method, its parameters with markup unescaped and false sent), and
// its result comes back in cdproto's type.
func TestCDPSessionSendsTypedCommands(t *testing.T) {
	conn, sent, _ := recordingCDPPipe(t, func(n int) []byte {
		return []byte(`{"id":1,"sessionId":"S","result":{"result":{"type":"string","value":"<b>ok</b>"}}}`)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	params, err := cdpEvaluateParams("function (a) { return a; }", "<p>&</p>")
	require.NoError(t, err)
	r, err := cdp.Call(ctx, cdpSession{conn, "S"}, cdpruntime.Evaluate, params)
	require.NoError(t, err)
	var msg struct {
		ID        int             `json:"id"`
		Method    string          `json:"method"`
		SessionID string          `json:"sessionId"`
		Params    json.RawMessage `json:"params"`
	}
	raw := <-sent
	require.NoError(t, json.Unmarshal(raw, &msg))
	assert.Equal(t, 1, msg.ID)
	assert.Equal(t, "Runtime.evaluate", msg.Method)
	assert.Equal(t, "S", msg.SessionID)
	assert.Contains(t, string(msg.Params), `<p>&</p>`, "markup is not escaped")
	assert.NotContains(t, string(msg.Params), `\u003c`)
	assert.Contains(t, string(msg.Params), `"userGesture":false`)
	assert.Contains(t, string(msg.Params), `"returnByValue":true`)
	v, err := cdpEvaluated(r)
	require.NoError(t, err)
	assert.Equal(t, "<b>ok</b>", v)
}

// CDP's error replies are a typed error with their code, message and data; a lost
// context and a closed target are read from the code (and the text, where CDP has no
// code of its own).
func TestCDPSessionErrorsByCode(t *testing.T) {
	replies := map[int]string{
		1: `{"id":1,"error":{"code":-32602,"message":"Invalid parameters","data":"Failed to deserialize params.url - BINDINGS: mandatory field missing at position 2"}}`,
		2: `{"id":2,"error":{"code":-32000,"message":"Execution context was destroyed."}}`,
		3: `{"id":3,"error":{"code":-32001,"message":"Session with given id not found."}}`,
		4: `{"id":4,"error":{"code":-32000,"message":"Execution context was destroyed.","data":{"not":"a string"}}}`,
	}
	conn, _, _ := recordingCDPPipe(t, func(n int) []byte { return []byte(replies[n]) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := cdpSession{conn, "S"}

	_, err := cdp.Call(ctx, s, cdppage.Navigate, cdppage.NavigateParams{})
	e, ok := asCDPError(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, cdpReplyError{Method: "Page.navigate", Code: cdpInvalidParams, Message: "Invalid parameters",
		Data: "Failed to deserialize params.url - BINDINGS: mandatory field missing at position 2"}, *e)
	assert.Equal(t, "Page.navigate: Invalid parameters (-32602): Failed to deserialize params.url - BINDINGS: mandatory field missing at position 2", err.Error())
	assert.False(t, lostContext(err))
	assert.False(t, targetClosed(err))

	_, err = cdp.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "1"})
	assert.True(t, lostContext(err))
	assert.False(t, targetClosed(err))
	assert.Equal(t, "Runtime.evaluate: Execution context was destroyed. (-32000)", err.Error(), "no data: the text as before")

	_, err = cdp.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "1"})
	assert.True(t, targetClosed(err))
	assert.False(t, lostContext(err))

	_, err = cdp.Call(ctx, s, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: "1"})
	e, ok = asCDPError(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, `{"not":"a string"}`, e.Data, "data that is not a string is kept as it came")
}

// The page's session gone under an evaluation (CDP's -32001) is the route's own
// "target closed", and the page is given up for a new one (no relaunch).
func TestCDPEvaluateOnAClosedSessionIsTargetClosed(t *testing.T) {
	conn, _, _ := recordingCDPPipe(t, func(n int) []byte {
		return []byte(`{"id":1,"error":{"code":-32001,"message":"Session with given id not found."}}`)
	})
	e := testCDPEngine(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.evaluate(ctx, conn, e.page, "1", nil)
	require.ErrorIs(t, err, errTargetClosed)
	assert.Equal(t, "target closed: Target page, context or browser has been closed", err.Error())
	_, _, _, gone, _ := e.page.state()
	assert.True(t, gone)
	assert.Empty(t, e.Broken(), "no relaunch for a closed page")
}

// cdp.Session's Subscribe: the session's events of one method, in order, none lost
// while nobody reads, until cancel; the connection's end closes the channel.
func TestCDPSessionSubscribe(t *testing.T) {
	conn, _, emit := recordingCDPPipe(t, func(n int) []byte { return nil })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	events := cdp.Events(ctx, cdpSession{conn, "S"}, cdppage.LoadEventFired)
	emit(`{"method":"Page.loadEventFired","sessionId":"other","params":{"timestamp":1}}`)
	emit(`{"method":"Page.domContentEventFired","sessionId":"S","params":{"timestamp":2}}`)
	for i := 3; i <= 5; i++ {
		emit(`{"method":"Page.loadEventFired","sessionId":"S","params":{"timestamp":` + string(rune('0'+i)) + `}}`)
	}
	var got []float64
	for ev, err := range events {
		require.NoError(t, err)
		got = append(got, float64(ev.Timestamp))
		if len(got) == 3 {
			break
		}
	}
	assert.Equal(t, []float64{3, 4, 5}, got)

	ch, stop := cdpSession{conn, "S"}.Subscribe("Page.frameNavigated")
	defer stop()
	conn.Close(ownclient.ErrEngineClosed)
	select {
	case _, open := <-ch:
		assert.False(t, open, "the connection's end closes the channel")
	case <-time.After(3 * time.Second):
		t.Fatal("the channel stayed open after the connection ended")
	}
}

// OpenWindows's commands go through cdproto, Target.getBrowserContexts included, and
// their results decode into its types (the wire is what the raw command sent). A unit
// test of our own client over a fake pipe: no browser runs.
func TestCDPOpenWindowsSendsTypedCommands(t *testing.T) {
	replies := map[int]string{
		1: `{"id":1,"result":{"targetInfos":[{"targetId":"T","type":"page","title":"","url":"about:blank","attached":true,"canAccessOpener":false,"browserContextId":"B"}]}}`,
		2: `{"id":2,"result":{"browserContextIds":["B","C"]}}`,
	}
	conn, sent, _ := recordingCDPPipe(t, func(n int) []byte { return []byte(replies[n]) })
	e := testCDPEngine(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pages, contexts, err := e.OpenWindows(ctx)
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 2}, [2]int{pages, contexts})
	<-sent
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	require.NoError(t, json.Unmarshal(<-sent, &msg))
	assert.Equal(t, "Target.getBrowserContexts", msg.Method)
	assert.JSONEq(t, `{}`, string(msg.Params))
}

// A case's popup is attached and its Page domain enabled, by subscription to the
// browser session's events (attachPopups); the page itself and other contexts' pages
// are left alone. A unit test of our own client over a fake pipe: no browser runs.
func TestCDPPopupsAreAttachedBySubscription(t *testing.T) {
	conn, sent, emit := recordingCDPPipe(t, func(n int) []byte { return []byte(`{"id":` + strconv.Itoa(n) + `,"result":{}}`) })
	e := testCDPEngine(t, conn)
	e.SetPage(func() { e.bctx = "B" })
	e.attachPopups(conn)
	info := func(id, bctx string) string {
		return `{"targetId":"` + id + `","type":"page","title":"","url":"about:blank","attached":false,"canAccessOpener":false,"browserContextId":"` + bctx + `"}`
	}
	emit(`{"method":"Target.targetCreated","params":{"targetInfo":` + info("T", "B") + `}}`)     // the page itself
	emit(`{"method":"Target.targetCreated","params":{"targetInfo":` + info("X", "other") + `}}`) // not the engine's context
	emit(`{"method":"Target.targetCreated","params":{"targetInfo":` + info("P", "B") + `}}`)     // a popup
	emit(`{"method":"Target.attachedToTarget","params":{"sessionId":"PS","targetInfo":` + info("P", "B") + `,"waitingForDebugger":false}}`)

	var got []string
	for len(got) < 2 {
		select {
		case b := <-sent:
			var msg struct {
				Method    string          `json:"method"`
				SessionID string          `json:"sessionId"`
				Params    json.RawMessage `json:"params"`
			}
			require.NoError(t, json.Unmarshal(b, &msg))
			got = append(got, msg.Method+" "+msg.SessionID+" "+string(msg.Params))
		case <-time.After(5 * time.Second):
			t.Fatalf("sent only %q", got)
		}
	}
	assert.ElementsMatch(t, []string{`Target.attachToTarget  {"targetId":"P","flatten":true}`, `Page.enable PS {}`}, got)
	select {
	case b := <-sent:
		t.Errorf("sent more: %s", b)
	case <-time.After(200 * time.Millisecond):
	}
}
