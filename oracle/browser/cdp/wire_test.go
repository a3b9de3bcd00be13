package cdp

// Unit tests of the CDP route's wire (wire.go, on ownclient's pending calls) and of
// what the engine makes of its errors. No browser runs: each test fakes the browser's
// end of the pipe (an in-memory io.Pipe), so they test our own wire code only. The
// four CDP wire defects found without a browser each have a test here that failed
// on 05864a4.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/ownclient"

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
	return newCDPConn(ourW, ourR, maxMessage, nil, testutil.Logger(t))
}

// testCDPEngine is a cdpEngine around conn with one page and no process.
func testCDPEngine(t *testing.T, conn *cdpConn) *cdpEngine {
	e := &cdpEngine{}
	e.Configure(ownclient.Setup{Engine: browser.Chromium, ConnLost: errCDPGone.Error()})
	e.Log = testutil.Logger(t)
	require.NoError(t, e.Adopt(nil, conn, "", func() { e.page = newCDPPage("T", "S") }))
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
	assert.Contains(t, e.Broken(), "token too long")

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
	assert.False(t, conn.Alive())
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
	assert.ErrorIs(t, err, ownclient.ErrEngineClosed)
	assert.ErrorIs(t, e.Reset(ctx), ownclient.ErrEngineClosed)
	_, err = e.Load(ctx, "<p>", "function () { return '1'; }")
	assert.ErrorContains(t, err, "engine closed")
}

// A pipe the browser ends is still called a crash or a disconnection, with its reason.
func TestCDPWireAPipeTheBrowserEndsIsACrash(t *testing.T) {
	ourR, browserW := io.Pipe()
	browserR, ourW := io.Pipe()
	t.Cleanup(func() { ourW.Close(); browserR.Close() })
	go func() { _, _ = io.Copy(io.Discard, browserR) }()
	conn := newCDPConn(ourW, ourR, 1<<20, nil, testutil.Logger(t))
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
	err := e.Errorf("relaunch failed: %w", e.Errorf("launch: %w", cause))
	assert.Equal(t, "chromium: relaunch failed: launch: no such file", err.Error())
	assert.ErrorIs(t, err, cause)
}
