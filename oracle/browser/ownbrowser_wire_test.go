package browser

// Unit tests of the oracle's own wires (cdp_wire.go, bidi_wire.go, ownbrowser_wire.go)
// and of what the engines make of their errors. No browser runs: each test fakes the
// browser's end of the connection (an in-memory io.Pipe for CDP, a loopback WebSocket
// for BiDi), so they test our own wire code only. The four CDP defects of issue 41
// ("Reproduced without a browser") each have a test here that failed on 05864a4.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeCDPBrowser is the browser's end of a CDP pipe: it reads our NUL-terminated
// commands and answers each with reply(n) (n counts commands from 1), raw bytes that
// it terminates with NUL; a nil reply sends nothing.
type fakeCDPBrowser struct {
	toUs   *io.PipeWriter
	fromUs *io.PipeReader
}

// newFakeCDPPipe is a cdpConn over two io.Pipes (bound: maxMessage) and the fake
// browser's ends. With reply nil the browser never reads our commands.
func newFakeCDPPipe(t *testing.T, maxMessage int64, reply func(n int) []byte) *cdpConn {
	t.Helper()
	ourR, browserW := io.Pipe()
	browserR, ourW := io.Pipe()
	f := &fakeCDPBrowser{toUs: browserW, fromUs: browserR}
	t.Cleanup(func() {
		f.toUs.Close()
		f.fromUs.Close()
		ourW.Close()
		ourR.Close()
	})
	if reply != nil {
		go func() {
			sc := bufio.NewScanner(f.fromUs)
			sc.Buffer(make([]byte, 4096), 1<<20)
			sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
				if i := bytes.IndexByte(data, 0); i >= 0 {
					return i + 1, data[:i], nil
				}
				return 0, nil, nil
			})
			for n := 1; sc.Scan(); n++ {
				if b := reply(n); b != nil {
					if _, err := f.toUs.Write(append(b, 0)); err != nil {
						return
					}
				}
			}
		}()
	}
	return newCDPConn(ourW, ourR, maxMessage, nil, testLogger(t))
}

// testCDPEngine is a cdpEngine around conn with one page and no process.
func testCDPEngine(t *testing.T, conn *cdpConn) *cdpEngine {
	e := &cdpEngine{}
	e.name, e.log, e.connLost = Chromium, testLogger(t), errCDPGone.Error()
	e.conn, e.page = conn, newCDPPage("T", "S")
	return e
}

// Defect 1: a reply over the bound ended the connection, and the call said "CDP pipe
// closed" while the reason stayed in the connection; the case's error then said the
// browser crashed. Failed on 05864a4 ("chromium: browser crashed or disconnected:
// Runtime.evaluate: CDP pipe closed").
func TestCDPWireAReplyOverTheBoundSaysSo(t *testing.T) {
	const bound = 64 << 10 // the reader's first buffer: under it, 05864a4 took a reply over the bound
	conn := newFakeCDPPipe(t, bound, func(n int) []byte {
		return []byte(`{"id":1,"result":{"result":{"type":"string","value":"` + strings.Repeat("x", 2*bound) + `"}}}`)
	})
	e := testCDPEngine(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.evaluate(ctx, conn, e.page, "1", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "token too long")
	assert.Contains(t, err.Error(), "65536-byte bound")
	assert.NotContains(t, err.Error(), "crashed")
	assert.True(t, strings.HasPrefix(err.Error(), "chromium: evaluate: "), err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "chromium"), "the engine is named once: %s", err)
	// The next call is told the same reason, and so is the relaunch's.
	_, err = conn.call(ctx, "", "Browser.getVersion", nil)
	assert.ErrorContains(t, err, "token too long")
	e.mu.Lock()
	reason := e.relaunchReasonLocked()
	e.mu.Unlock()
	assert.Contains(t, reason, "token too long")

	// A bound under the reader's first buffer holds too.
	small := newFakeCDPPipe(t, 4096, func(n int) []byte { return []byte(`{"id":1,"result":"` + strings.Repeat("x", 8192) + `"}`) })
	_, err = small.call(ctx, "", "Browser.getVersion", nil)
	assert.ErrorContains(t, err, "4096-byte bound")
}

// Defect 2: a reply whose id parses but whose body does not was dropped, and its call
// waited out its whole deadline. Failed on 05864a4 (context deadline exceeded after
// 5 s).
func TestCDPWireAReplyThatDoesNotDecodeFailsItsCallAtOnce(t *testing.T) {
	conn := newFakeCDPPipe(t, 1<<20, func(n int) []byte {
		switch n {
		case 1:
			return []byte(`{"id":1,"result":{"value":"cut short`) // not JSON past the id
		case 2:
			return []byte(`{"id":2,"error":"not an object"}`) // JSON of the wrong shape
		}
		return []byte(`{"id":3,"result":{"ok":true}}`)
	})
	for i, want := range []string{"reply 1 does not decode", "reply 2 does not decode"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		began := time.Now()
		_, err := conn.call(ctx, "", "Browser.getVersion", nil)
		cancel()
		require.Error(t, err, "call %d", i+1)
		assert.Less(t, time.Since(began), 2*time.Second, "call %d failed at once, not at its deadline", i+1)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, want)
	}
	// The connection is still good for the next call.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	raw, err := conn.call(ctx, "", "Browser.getVersion", nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"ok":true}`, string(raw))
}

// Defect 3: the pipe write ignored its call's context and held the write lock: a call
// with a 200 ms deadline was still blocked seconds later, every other call queued
// behind it. Failed on 05864a4 (both calls still blocked after 3 s).
func TestCDPWireAWriteHonoursItsCallsDeadline(t *testing.T) {
	conn := newFakeCDPPipe(t, 1<<20, nil) // a browser that never reads its pipe
	type result struct {
		err  error
		took time.Duration
	}
	results := make(chan result, 2)
	var wg sync.WaitGroup
	for _, d := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			began := time.Now()
			_, err := conn.call(ctx, "", "Runtime.evaluate", map[string]any{"expression": strings.Repeat("1+", 1000) + "1"})
			results <- result{err, time.Since(began)}
		}()
		time.Sleep(50 * time.Millisecond) // the first call holds the write
	}
	for i := 0; i < 2; i++ {
		select {
		case r := <-results:
			require.Error(t, r.err)
			assert.Less(t, r.took, time.Second, "a call returned within about its deadline")
		case <-time.After(3 * time.Second):
			t.Fatalf("call %d still blocked 3 s later", i+1)
		}
	}
	wg.Wait()
	// The half-written connection is gone, and says why.
	assert.False(t, conn.alive())
	_, err := conn.call(context.Background(), "", "Browser.getVersion", nil)
	assert.ErrorContains(t, err, "not taken within its call's deadline")
}

// Defect 4: after Close, a call already past its ensure (a Reset beside the oracle's
// Close) was handed a nil connection and panicked. Failed on 05864a4 (nil pointer
// dereference in cdpConn.call).
func TestCDPCallAfterCloseIsEngineClosed(t *testing.T) {
	conn := newFakeCDPPipe(t, 1<<20, func(n int) []byte { return nil })
	e := testCDPEngine(t, conn)
	require.NoError(t, e.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	require.NotPanics(t, func() { err = e.reset(ctx) })
	assert.ErrorIs(t, err, errEngineClosed)
	assert.ErrorIs(t, e.Reset(ctx), errEngineClosed)
	_, err = e.Load(ctx, "<p>", "function () { return '1'; }")
	assert.ErrorContains(t, err, "engine closed")
}

// A pipe the browser ends is still called a crash or a disconnection, with its reason.
func TestCDPWireAPipeTheBrowserEndsIsACrash(t *testing.T) {
	ourR, browserW := io.Pipe()
	browserR, ourW := io.Pipe()
	t.Cleanup(func() { ourW.Close(); browserR.Close() })
	go func() { _, _ = io.Copy(io.Discard, browserR) }()
	conn := newCDPConn(ourW, ourR, 1<<20, nil, testLogger(t))
	e := testCDPEngine(t, conn)
	browserW.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := e.evaluate(ctx, conn, e.page, "1", nil)
	assert.ErrorContains(t, err, "chromium: browser crashed or disconnected: Runtime.evaluate: CDP pipe closed (EOF)")
	assert.ErrorIs(t, err, errCDPGone)
}

// An error of the engine's own, wrapped by the engine again, names the engine once
// (was "chromium: relaunch failed: chromium: launch: ...").
func TestOwnBrowserErrorsNameTheirEngineOnce(t *testing.T) {
	e := testCDPEngine(t, nil)
	cause := errors.New("no such file")
	err := e.errorf("relaunch failed: %w", e.errorf("launch: %w", cause))
	assert.Equal(t, "chromium: relaunch failed: launch: no such file", err.Error())
	assert.ErrorIs(t, err, cause)
}

// fakeBiDiBrowser is a loopback WebSocket server standing in for Firefox's BiDi
// endpoint: it answers the n-th command with reply(n).
func fakeBiDiBrowser(t *testing.T, reply func(n int) []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for n := 1; ; n++ {
			if _, _, err := ws.Read(r.Context()); err != nil {
				return
			}
			if b := reply(n); b != nil {
				if ws.Write(r.Context(), websocket.MessageText, b) != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// The BiDi wire keeps the same reasons: a reply over the bound says so (not "connection
// closed", not a crash), and one that does not decode fails its call at once.
func TestBiDiWireKeepsEveryReason(t *testing.T) {
	const bound = 4096
	url := fakeBiDiBrowser(t, func(n int) []byte {
		if n == 1 {
			return []byte(`{"type":"success","id":1,"result":{"v":"cut short`)
		}
		return []byte(`{"type":"success","id":` + string(rune('0'+n)) + `,"result":"` + strings.Repeat("x", 2*bound) + `"}`)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := dialBiDi(ctx, url, bound, testLogger(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.ws.CloseNow() })
	e := &bidiEngine{}
	e.name, e.log, e.conn, e.page = Firefox, testLogger(t), conn, "P"

	began := time.Now()
	_, err = conn.call(ctx, "session.status", nil)
	assert.ErrorContains(t, err, "reply 1 does not decode")
	assert.Less(t, time.Since(began), 2*time.Second)

	_, err = e.evaluate(ctx, conn, "P", "() => '1'", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read limited at")
	assert.Contains(t, err.Error(), "4096-byte bound")
	assert.NotContains(t, err.Error(), "crashed")
	assert.Equal(t, 1, strings.Count(err.Error(), "firefox"), "the engine is named once: %s", err)

	// After Close, a call under way gets "engine closed", not a nil connection.
	conn, err = dialBiDi(ctx, url, bound, testLogger(t))
	require.NoError(t, err)
	e = &bidiEngine{}
	e.name, e.log, e.conn, e.page = Firefox, testLogger(t), conn, "P"
	require.NoError(t, e.Close())
	require.NotPanics(t, func() { err = e.reset(ctx) })
	assert.ErrorContains(t, err, "engine closed")
}

// Firefox's last lines on stderr reach the launch's error: the launcher read stderr
// from a pipe beside cmd.Wait, which closes that pipe once the process exits (os/exec
// documents it), and lost what was still unread; now os/exec copies stderr to its end
// before Wait returns. A unit test of the launcher with a shell script standing in
// for Firefox (no browser runs); on 05864a4 it was missing from some launches (a race).
func TestFirefoxsLastLinesReachItsLaunchError(t *testing.T) {
	dir, err := os.MkdirTemp("", "layout-oracle-fake-firefox-") // t.TempDir's parent is private: the browser user runs it
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	exe := filepath.Join(dir, "firefox")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\ni=0\nwhile [ $i -lt 300 ]; do echo \"starting up $i\" >&2; i=$((i+1)); done\necho 'the last words' >&2\nexit 3\n"), 0o755))
	for i := 0; i < 40; i++ { // the loss was a race: on 05864a4, 2 of 137 launches lost it
		e := &bidiEngine{}
		e.name, e.exe, e.log = Firefox, exe, testLogger(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := e.startFirefox(ctx)
		cancel()
		require.Error(t, err)
		require.Contains(t, err.Error(), "exited before WebDriver BiDi listened")
		require.Contains(t, err.Error(), "the last words", "run %d", i)
	}
}
