package bidi

// Unit tests of the BiDi route's wire (wire.go, on ownclient's pending calls) and of
// Firefox's launch errors. No browser runs: each test fakes Firefox's BiDi endpoint
// with a loopback WebSocket, so they test our own wire code only.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/ownclient"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	conn, err := dialBiDi(ctx, url, bound, testutil.Logger(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.ws.CloseNow() })
	e := &bidiEngine{}
	e.Configure(ownclient.Setup{Engine: browser.Firefox})
	e.Log = testutil.Logger(t)
	require.NoError(t, e.Adopt(nil, conn, "", func() { e.page = "P" }))

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
	conn, err = dialBiDi(ctx, url, bound, testutil.Logger(t))
	require.NoError(t, err)
	e = &bidiEngine{}
	e.Configure(ownclient.Setup{Engine: browser.Firefox})
	e.Log = testutil.Logger(t)
	require.NoError(t, e.Adopt(nil, conn, "", func() { e.page = "P" }))
	require.NoError(t, e.Close())
	require.NotPanics(t, func() { err = e.reset(ctx) })
	assert.ErrorContains(t, err, "engine closed")
}

// Firefox's last lines on stderr reach the launch's error: the launcher read stderr
// from a pipe beside cmd.Wait, which closes that pipe once the process exits (os/exec
// documents it), and lost what was still unread; now os/exec copies stderr to its end
// before Wait returns. A unit test of the launcher with a shell script standing in
// for Firefox (no browser runs). The loss was a race (2 launches in 137 on 05864a4);
// here it is forced: the log, which every stderr line goes through, holds the first
// line until the script has written the rest, exited and been reaped.
func TestFirefoxsLastLinesReachItsLaunchError(t *testing.T) {
	dir, err := os.MkdirTemp("", "layout-oracle-fake-firefox-") // t.TempDir's parent is private: the browser user runs it
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	goOn := filepath.Join(dir, "go-on")
	exe := filepath.Join(dir, "firefox")
	// It names its pid (the wrapper and setpriv exec it: it is the launched process),
	// waits until the log holds that line, then writes the rest and exits.
	script := "#!/bin/sh\necho \"pid $$\" >&2\nwhile [ ! -e " + goOn + " ]; do sleep 0.01; done\n" +
		"i=0\nwhile [ $i -lt 300 ]; do echo \"starting up $i\" >&2; i=$((i+1)); done\necho 'the last words' >&2\nexit 3\n"
	require.NoError(t, os.WriteFile(exe, []byte(script), 0o755))

	e := &bidiEngine{}
	e.Configure(ownclient.Setup{Engine: browser.Firefox})
	e.Exe = exe
	e.Log = zerolog.New(&holdUntilReaped{t: t, goOn: goOn}).Level(zerolog.DebugLevel)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = e.startFirefox(ctx)
	require.Error(t, err)
	require.Contains(t, err.Error(), "exited before WebDriver BiDi listened")
	require.Contains(t, err.Error(), "the last words")
}

// holdUntilReaped is a log writer: on the line naming the fake Firefox's pid it lets
// the script go on, and returns once that process is gone from /proc (reaped, so
// Wait has returned from the process's wait) and a moment more.
type holdUntilReaped struct {
	t    *testing.T
	goOn string
	once sync.Once
}

var pidLine = regexp.MustCompile(`"pid (\d+)"`)

func (w *holdUntilReaped) Write(p []byte) (int, error) {
	m := pidLine.FindSubmatch(p)
	if m == nil {
		return len(p), nil
	}
	w.once.Do(func() {
		if err := os.WriteFile(w.goOn, nil, 0o644); err != nil {
			w.t.Error(err)
			return
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat("/proc/" + string(m[1])); os.IsNotExist(err) {
				break
			}
		}
		time.Sleep(100 * time.Millisecond) // Wait closes the pipes right after the reap
	})
	return len(p), nil
}
