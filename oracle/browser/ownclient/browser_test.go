package ownclient

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeProc and fakeConn stand in for a browser and its connection: the tests in this
// file are unit tests of Browser's own bookkeeping, no browser runs.
type fakeProc struct{}

func (*fakeProc) Kill()       {}
func (*fakeProc) Alive() bool { return true }
func (*fakeProc) PID() int    { return 0 }

type fakeConn struct{ *PendingCalls[int] }

func (c fakeConn) Close(why error) { c.End(why) }

// onLine is a log writer that calls f on the first line containing msg.
type onLine struct {
	msg  string
	once sync.Once
	f    func()
}

func (w *onLine) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.msg)) {
		w.once.Do(w.f)
	}
	return len(p), nil
}

// A Close while a relaunch waits between two attempts ends the wait, and the closed
// engine starts no browser.
func TestARelaunchStartsNoBrowserAfterClose(t *testing.T) {
	var b Browser[*fakeProc, fakeConn]
	var starts atomic.Int32
	b.Configure(Setup{Engine: browser.Chromium, Start: func(context.Context) error {
		starts.Add(1)
		return errors.New("no browser here")
	}})
	// The first attempt fails; the engine closes as its failure is logged, before the
	// wait for the second attempt (RelaunchBackoff's second step).
	b.Log = zerolog.New(&onLine{msg: "relaunch failed", f: func() { _ = b.Close() }})
	require.Greater(t, len(browser.RelaunchBackoff), 1)

	began := time.Now()
	err := b.relaunch(context.Background(), "test")
	assert.ErrorIs(t, err, ErrEngineClosed)
	assert.Equal(t, int32(1), starts.Load(), "a browser started after Close")
	assert.Less(t, time.Since(began), browser.RelaunchBackoff[1], "the relaunch waited out its backoff after Close")
}

// End with no reason still ends the connection with one, and a second End is a no-op.
func TestPendingCallsEndWithNoReason(t *testing.T) {
	p := NewPendingCalls[int]("test", zerolog.Nop())
	require.NotPanics(t, func() { p.End(nil) })
	require.NotPanics(t, func() { p.End(nil) })
	require.NotPanics(t, func() { p.End(errors.New("later")) })
	assert.False(t, p.Alive())
	assert.Error(t, p.Reason(), "an ended connection has a reason")
	_, err := p.Call(context.Background(), "M", func(int) error { return nil })
	assert.Error(t, err, "a call on an ended connection fails")
}

// The browser's lock and state are Browser's own: an engine reaches them through
// its methods (Current, SetPage, Proc, Broken), never by locking a field itself.
func TestBrowserExportsNoLockOrState(t *testing.T) {
	var exported []string
	for f := range reflect.TypeFor[Browser[*fakeProc, fakeConn]]().Fields() {
		if f.IsExported() {
			exported = append(exported, f.Name)
		}
	}
	assert.Equal(t, []string{"Exe", "Log"}, exported)
}
