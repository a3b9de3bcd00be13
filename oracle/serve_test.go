package oracle

// Unit tests of the request loop with the stand-in engines of protocol_test.go (no
// browser): ping while cases wait, a broken stdout, lines after shutdown. The real
// binary is tested for the same in cmd/oracle/protocol_edges_test.go.

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three slow cases on one page, then a ping: the ping is answered first. Before,
// the loop blocked on a free place for the second case and read the ping only after
// the first case's answer.
func TestPingIsAnsweredWhileCasesWaitForAPlace(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium, delay: 300 * time.Millisecond})
	got := serveLines(t, o, `{"id":1,"html":"<p>"}`+"\n"+`{"id":2,"html":"<p>"}`+"\n"+`{"id":3,"html":"<p>"}`+"\n"+`{"id":"p","op":"ping"}`+"\n")
	require.Len(t, got, 4)
	assert.Equal(t, "p", got[0]["id"], "the ping is the first answer")
	for i, id := range []float64{1, 2, 3} {
		assert.Equal(t, id, got[i+1]["id"], "cases keep their order on one page")
	}
}

type brokenWriter struct{}

func (brokenWriter) Write(p []byte) (int, error) { return 0, syscall.EPIPE }

// A failed write to stdout ends Serve with that error, even while stdin stays open
// and idle (the pipe below is never written or closed). Before, the error was
// ignored and Serve went on reading.
func TestServeStopsWhenStdoutIsBroken(t *testing.T) {
	var logs lockedBuffer // reset goroutines may still log while the test reads
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	o.log = zerolog.New(&logs)
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() { done <- o.Serve(context.Background(), pr, brokenWriter{}) }()
	_, err := io.WriteString(pw, `{"id":"p","op":"ping"}`+"\n")
	require.NoError(t, err)
	select {
	case err := <-done:
		require.Error(t, err)
		assert.True(t, errors.Is(err, syscall.EPIPE), "%v", err)
		assert.Contains(t, logs.String(), "stdout is closed or broken")
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still running 10s after stdout broke")
	}
}

// Lines after shutdown are not read, and the log says so.
func TestLinesAfterShutdownAreNotReadAndTheLogSaysSo(t *testing.T) {
	var logs lockedBuffer // reset goroutines may still log while the test reads
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	o.log = zerolog.New(&logs)
	got := serveLines(t, o, `{"id":1,"html":"<p>"}`+"\n"+`{"id":"s","op":"shutdown"}`+"\n"+`{"id":"after","op":"ping"}`+"\n")
	require.Len(t, got, 2)
	assert.Equal(t, 1.0, got[0]["id"], "a case read before shutdown is answered before it")
	assert.Equal(t, map[string]any{"id": "s", "ok": true}, got[1])
	assert.True(t, strings.Contains(logs.String(), "lines after it are not read"), logs.String())
}
