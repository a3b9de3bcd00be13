package host_test

import (
	"context"
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser/host"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The WebDriver BiDi connection of a Firefox the oracle launched has Nagle off
// (host/nodelay_linux.go): read back from the browser's own socket. Before the change the
// option was 0 (Firefox never sets it on the connection it accepts), and every call
// whose answer followed an event waited about 40 ms for a delayed ACK.
func TestFirefoxBiDiConnectionHasNoDelay(t *testing.T) {
	testutil.NeedsBrowsers(t)
	e, err := playwright.Route.Launch(context.Background(), browser.Firefox, browser.RouteLaunch{}, testutil.Logger(t))
	require.NoError(t, err)
	defer e.Close()
	pids := e.(interface{ ProcessRoots() []int }).ProcessRoots()
	require.NotEmpty(t, pids)

	var on, off int
	n, err := host.EachAccepted(pids[0], func(fd int) error {
		v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
		if v != 0 {
			on++
		} else {
			off++
		}
		return err
	})
	require.NoError(t, err)
	require.Positive(t, n, "the driver's WebDriver BiDi connection to Firefox was not found")
	assert.Zero(t, off, "accepted connections with Nagle still on")
	assert.Positive(t, on)

	// And the engine still answers, the same way, after a document.open (the call
	// whose answer used to wait).
	raw, err := e.Load(context.Background(), "<!doctype html><p>x</p>", "(function(){ return [document.compatMode, document.body.firstChild.textContent]; })")
	require.NoError(t, err)
	assert.JSONEq(t, `["CSS1Compat","x"]`, string(raw))
}
