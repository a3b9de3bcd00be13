package main

// A malformed or silent Playwright server costs its endpoint only
// (docs/remote.md). The server is a real `playwright run-server` on loopback,
// fronted by a test proxy that INJECTS a malformed message the real server never
// sends; the silent one is a loopback TCP listener that accepts and never answers.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// injectProxy relays WebSocket connections to upstream and, on inject, sends a
// message of its own to the client of the newest connection.
type injectProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	down *websocket.Conn
	gate chan struct{} // when set, the server's messages wait until it closes: a slow server
}

func newInjectProxy(t *testing.T, upstream string) *injectProxy {
	p := &injectProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := http.Header{}
		for _, k := range []string{"X-Playwright-Browser", "X-Playwright-Launch-Options"} {
			h.Set(k, r.Header.Get(k))
		}
		up, _, err := websocket.Dial(r.Context(), upstream+strings.TrimPrefix(r.URL.RequestURI(), "/"), &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		up.SetReadLimit(-1)
		down, err := websocket.Accept(w, r, nil)
		if err != nil {
			up.CloseNow()
			return
		}
		down.SetReadLimit(-1)
		p.mu.Lock()
		p.down = down
		p.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		pipe := func(from, to *websocket.Conn) {
			defer cancel()
			for {
				typ, data, err := from.Read(ctx)
				if err != nil || to.Write(ctx, typ, data) != nil {
					return
				}
			}
		}
		go pipe(down, up)
		if p.gate != nil {
			select {
			case <-p.gate:
			case <-ctx.Done():
			}
		}
		pipe(up, down)
		up.CloseNow()
		down.CloseNow()
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *injectProxy) url() string { return "ws" + strings.TrimPrefix(p.srv.URL, "http") + "/" }

func (p *injectProxy) inject(t *testing.T, msg string) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	require.NotNil(t, down, "a connection to inject into")
	require.NoError(t, down.Write(context.Background(), websocket.MessageText, []byte(msg)))
}

// TestMalformedServerMessageCostsItsEndpointOnly: each message below panics
// playwright-go's dispatch goroutine when it reaches the client; before the relay the
// oracle exited 2 on the first. Now the oracle lives, ping answers within a second,
// the local page answers, and the endpoint reconnects.
func TestMalformedServerMessageCostsItsEndpointOnly(t *testing.T) {
	testutil.NeedsBrowsers(t)
	port := freePort(t)
	startPlaywrightServer(t, port, true)
	proxy := newInjectProxy(t, fmt.Sprintf("ws://127.0.0.1:%d/", port))

	c := startOracle(t, "--log-level=info", "--engines=chromium", "--pages=chromium=1", "--connect", "chromium="+proxy.url())
	defer c.close()
	eps := endpointsOf(t, c)
	require.Equal(t, "ready", eps["chromium "+proxy.url()]["state"], "%v\nstderr:\n%s", eps, c.stderr.String())

	for i, msg := range []string{
		`{"guid":"","method":"__dispose__","params":{"reason":5}}`,
		`{"guid":"","method":"__create__","params":{"guid":"evil","initializer":{}}}`,
	} {
		proxy.inject(t, msg)
		t0 := time.Now()
		ping := c.send(t, map[string]any{"op": "ping"})
		assert.Equal(t, true, ping["ok"])
		assert.Less(t, time.Since(t0), time.Second, "ping answers at once")
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failed []any
			for j := 0; j < 2; j++ { // two at once hold both pages: the remote one serves too
				wg.Add(1)
				go func() {
					defer wg.Done()
					if r := c.send(t, caseOK()); r["errors"] != nil {
						mu.Lock()
						failed = append(failed, r["errors"])
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			ep := endpointsOf(t, c)["chromium "+proxy.url()]
			if len(failed) == 0 && ep["state"] == "ready" && ep["restarts"].(float64) >= float64(i+1) {
				break
			}
			require.True(t, time.Now().Before(deadline), "message %d: the endpoint did not come back: %v %v\nstderr:\n%s", i, ep, failed, c.stderr.String())
			time.Sleep(200 * time.Millisecond)
		}
	}
	assert.Contains(t, c.stderr.String(), "malformed message")
}

// TestSilentServerCostsTheHandshakeBoundOnly: a --connect endpoint that accepts TCP
// and never answers the WebSocket handshake held the engine's start (and so the
// first ping, with only that engine) for the 90 s connect timeout; the handshake now
// has a bound of its own (15 s), after which the local page serves and ping answers.
func TestSilentServerCostsTheHandshakeBoundOnly(t *testing.T) {
	testutil.NeedsBrowsers(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn) // accepted, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	silent := "ws://" + l.Addr().String() + "/"

	t0 := time.Now()
	c := startOracle(t, "--log-level=info", "--engines=chromium", "--pages=chromium=1", "--connect", "chromium="+silent)
	defer c.close()
	ping := c.send(t, map[string]any{"op": "ping"})
	took := time.Since(t0)
	t.Logf("first ping answered after %s", took)
	assert.Less(t, took, 60*time.Second, "the silent endpoint did not hold the start for the connect timeout")
	assert.Equal(t, []any{"chromium"}, ping["engines"], "the local page serves: %v", ping)
	ep := endpointsOf(t, c)["chromium "+silent]
	assert.Equal(t, "out-of-service", ep["state"], "%v", ep)
	r := c.send(t, caseOK())
	assert.Nil(t, r["errors"])
}

// TestSlowEndpointJoinsTheServingEngine: a --connect endpoint slow to come up (here a
// real server whose messages a test proxy HOLDS until the test releases them) held
// its engine's local pages until it was up, and with only that engine every case
// waited for it. Now the local page serves at once, the endpoint joins the pool when
// it is up, and ping answers within a second throughout.
func TestSlowEndpointJoinsTheServingEngine(t *testing.T) {
	testutil.NeedsBrowsers(t)
	port := freePort(t)
	startPlaywrightServer(t, port, true)
	proxy := newInjectProxy(t, fmt.Sprintf("ws://127.0.0.1:%d/", port))
	proxy.gate = make(chan struct{})
	var released atomic.Bool
	release := func() {
		if released.CompareAndSwap(false, true) {
			close(proxy.gate)
		}
	}
	defer release()
	// Before the fix the case below waits for the endpoint: it is let go after a
	// while, so that the test fails rather than hangs.
	timer := time.AfterFunc(45*time.Second, release)
	defer timer.Stop()

	c := startOracleNow(t, "--log-level=info", "--engines=chromium", "--pages=chromium=1", "--connect", "chromium:1="+proxy.url())
	defer c.close()
	var mu sync.Mutex
	var worst time.Duration
	stop := make(chan struct{})
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			t0 := time.Now()
			c.send(t, map[string]any{"op": "ping", "id": "slow-ping-" + strconv.Itoa(n)})
			mu.Lock()
			worst = max(worst, time.Since(t0))
			mu.Unlock()
		}
	}()

	r := c.send(t, caseOK())
	held := !released.Load()
	assert.Nil(t, r["errors"], "%v", r)
	assert.True(t, held, "the local page answered only once the slow endpoint was let go")
	ep := endpointsOf(t, c)["chromium "+proxy.url()]
	assert.Equal(t, "starting", ep["state"], "%v", ep)

	release()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ep = endpointsOf(t, c)["chromium "+proxy.url()]
		if ep["state"] == "ready" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the endpoint did not join: %v\nstderr:\n%s", ep, c.stderr.String())
		time.Sleep(200 * time.Millisecond)
	}
	assert.Equal(t, float64(1), ep["pages"])
	ping := c.send(t, map[string]any{"op": "ping"})
	states, _ := ping["states"].(map[string]any)
	chromium, _ := states["chromium"].(map[string]any)
	assert.Equal(t, float64(2), chromium["pages"], "the local page and the joined one serve: %v", states)
	var wg sync.WaitGroup
	for j := 0; j < 2; j++ { // two at once hold both pages: the joined one serves too
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.send(t, caseOK())
			assert.Nil(t, r["errors"], "%v", r)
		}()
	}
	wg.Wait()
	close(stop)
	<-pinged
	mu.Lock()
	t.Logf("slowest ping: %s", worst)
	assert.Less(t, worst, time.Second, "ping answers within a second throughout")
	mu.Unlock()
	assert.Contains(t, c.stderr.String(), "endpoint joined the serving engine")
}
