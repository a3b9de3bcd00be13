package webdriver

// Reply bounds of the WebDriver wire client. The endpoint here is
// a FAKE WebDriver server (httptest on loopback) that answers what a broken or
// hostile remote endpoint could: an endless new-session reply, a version that is not
// one, an Execute Script reply over the bound. No browser runs.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeWebDriver serves newSession's reply as version's bytes (padding bytes of 'a'
// appended inside the version string), and Execute Script's as a string value of
// execBytes bytes. written counts the bytes it got out.
type fakeWebDriver struct {
	srv       *httptest.Server
	version   string
	padding   int
	execBytes int
	written   atomic.Int64
}

func newFakeWebDriver(t *testing.T) *fakeWebDriver {
	f := &fakeWebDriver{version: "2.46.5"}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write := func(s string) bool {
			n, err := w.Write([]byte(s))
			f.written.Add(int64(n))
			return err == nil
		}
		switch {
		case r.URL.Path == "/session":
			write(`{"value":{"sessionId":"s1","capabilities":{"browserName":"MiniBrowser","browserVersion":"` + f.version)
			chunk := strings.Repeat("a", 64<<10)
			for left := f.padding; left > 0; left -= len(chunk) {
				if !write(chunk[:min(len(chunk), left)]) {
					return // the client stopped reading
				}
			}
			write(`"}}}`)
		case strings.HasSuffix(r.URL.Path, "/execute/sync"):
			write(`{"value":"` + strings.Repeat("x", f.execBytes) + `"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeWebDriver) engine(t *testing.T, maxReply int64) (*webDriverEngine, *wdProc) {
	e := &webDriverEngine{opts: Options{RemoteURL: f.srv.URL, MaxReply: maxReply}, log: testutil.Logger(t),
		client: &http.Client{}}
	p := &wdProc{base: f.srv.URL}
	e.proc = p
	return e, p
}

func TestWebDriverNewSessionReplyIsBounded(t *testing.T) {
	f := newFakeWebDriver(t)
	f.padding = 200 << 20 // the 200 MB reply of the issue, streamed
	e, p := f.engine(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := e.newSession(ctx, p)
	require.Error(t, err, "a 200 MB new-session reply is refused")
	assert.Contains(t, err.Error(), "reply over")
	f.srv.CloseClientConnections()
	assert.Less(t, f.written.Load(), int64(32<<20), "the client stopped reading near the 1 MiB bound")
}

func TestWebDriverVersionIsBoundedAndPrintable(t *testing.T) {
	for _, tc := range []struct {
		version string
		padding int
		ok      bool
	}{
		{"2.46.5", 0, true},
		{"605.1.15 (WebKitGTK 2.46.5)", 0, true},
		{"", 0, false},
		{"2.46.5", 100, false}, // 106 bytes
		{`2.46\n5`, 0, false},
		{`2.46\u00005`, 0, false},
	} {
		t.Run(fmt.Sprintf("%q+%d", tc.version, tc.padding), func(t *testing.T) {
			f := newFakeWebDriver(t)
			f.version, f.padding = tc.version, tc.padding
			e, p := f.engine(t, 0)
			v, err := e.newSession(context.Background(), p)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, tc.version, v)
				return
			}
			require.Error(t, err, "version %q refused", v)
		})
	}
}

func TestWebDriverExecuteReplyIsBounded(t *testing.T) {
	f := newFakeWebDriver(t)
	e, p := f.engine(t, 1<<20)
	p.session = "s1"
	f.execBytes = 1<<20 - 100
	_, err := e.execute(context.Background(), map[string]any{"script": "", "args": []any{}})
	require.NoError(t, err, "a reply within the bound is read")
	f.execBytes = 2 << 20
	_, err = e.execute(context.Background(), map[string]any{"script": "", "args": []any{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reply over 1048576 bytes")
}

func TestMaxReplyForFitsTheTraceBound(t *testing.T) {
	assert.Equal(t, int64(browser.DefaultMaxReply), browser.MaxReplyFor(64<<20), "the default trace bound fits the default")
	big := 512 << 20
	assert.GreaterOrEqual(t, browser.MaxReplyFor(big), 2*(2*int64(big)+1<<20), "a larger --trace-max-bytes raises it")
}

// The call script's viewport-changed error is found by errors.Is through the
// wrapping a failed call gets, and no other script error is (it was a match on the
// whole error's text at the call site). No browser runs.
func TestViewportChangedIsTyped(t *testing.T) {
	e := &webDriverEngine{}
	changed := &webDriverError{Status: 500, Code: "javascript error",
		Message: "Error: " + viewportChangedText + " (800x600 when it began, 800x560 when it ended, not 800x600); answer withheld"}
	err := e.wrap(context.Background(), "execute script", changed)
	assert.ErrorIs(t, err, errViewportChanged)
	assert.Equal(t, "webkit: execute script: javascript error: "+changed.Message, err.Error(), "the text is unchanged")
	other := e.wrap(context.Background(), "execute script", &webDriverError{Status: 500, Code: "javascript error", Message: "Error: boom"})
	assert.NotErrorIs(t, other, errViewportChanged)
}
