package webdriver

// Close racing a restart of the real WebKitGTK (WebKitWebDriver, MiniBrowser, and an
// Xvfb the engine owns). Before the fix, Close read xvfb and the session without the
// lock a restart writes them under (go test -race reported it), and an Xvfb the
// restart started after Close was never closed.

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/internal/routetest"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWebDriverCloseDuringARestartLeavesNoXvfb(t *testing.T) {
	testutil.NeedsBrowsers(t)
	skipWithoutWebKit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	eng, err := Launch(ctx, Options{StartXvfb: true}, testutil.Logger(t))
	require.NoError(t, err)
	e := eng.(*webDriverEngine)
	defer e.Close()

	// Kill our Xvfb, so the restart starts another.
	oldX := e.xvfb
	require.NoError(t, syscall.Kill(oldX.Pid(), syscall.SIGKILL))
	for deadline := time.Now().Add(10 * time.Second); !oldX.ExitedEarly(); {
		require.True(t, time.Now().Before(deadline), "Xvfb did not exit")
		time.Sleep(10 * time.Millisecond)
	}
	restarted := make(chan struct{})
	go func() { e.restart("test: Xvfb killed"); close(restarted) }()
	for deadline := time.Now().Add(10 * time.Second); e.Health().State != browser.StateRestarting; {
		require.True(t, time.Now().Before(deadline), "the restart did not start")
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, e.Close())
	select {
	case <-restarted:
	case <-time.After(2 * time.Minute):
		t.Fatal("the restart did not return")
	}
	e.mu.Lock()
	x := e.xvfb
	e.mu.Unlock()
	if x != oldX { // the restart got as far as a new Xvfb: it must be gone too
		deadline := time.Now().Add(10 * time.Second)
		for routetest.Alive(x.Pid()) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		assert.False(t, routetest.Alive(x.Pid()), "the Xvfb a restart started outlived Close")
	}
}
