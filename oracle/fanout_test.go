package oracle

// Unit tests of the pool's bookkeeping, with the stand-in engines of
// protocol_test.go (no browser runs): the races below are in the pool's own code,
// and `go test -race` is what shows them.

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request naming an engine that is not launched, beside one that errors at once:
// fanOut wrote the "engine not launched" error without the lock its goroutines
// write under. Under -race this failed before the fix ("DATA RACE" on errs).
func TestFanOutNotLaunchedBesideAFastErrorIsRaceFree(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	for i := 0; i < 20; i++ {
		results, errs := fanOut(context.Background(), o, []string{browser.Chromium, browser.WebKit, browser.Firefox},
			func(ctx context.Context, e browser.Engine) (int, error) { return 0, caseErrorf("script threw") })
		assert.Empty(t, results)
		assert.Equal(t, map[string]string{browser.Chromium: "script threw", browser.WebKit: "engine not launched",
			browser.Firefox: "engine not launched"}, errs)
	}
}

// slowResetEngine takes a while to reset, so Close finds the reset running.
type slowResetEngine struct {
	fakeEngine
	resetDone atomic.Int32
}

func (s *slowResetEngine) Reset(ctx context.Context) error {
	select {
	case <-time.After(200 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	s.resetDone.Add(1)
	return nil
}

// Close right after the last answer waits for that case's reset. fanOut called
// resets.Add(1) after wg.Done(), so Close's Wait could run before the Add from
// zero: under -race this failed before the fix (the WaitGroup misuse is reported
// as a race between Add and Wait).
func TestCloseWaitsForTheResetOfTheLastCase(t *testing.T) {
	e := &slowResetEngine{fakeEngine: fakeEngine{name: browser.Chromium}}
	o := &Oracle{engines: map[string]*pool.Pool{browser.Chromium: pool.New(browser.Chromium, []browser.Engine{e})}, order: []string{browser.Chromium},
		profile: "default", deadline: time.Second, inflight: 1, log: fakeOracle().log}
	got := serveLines(t, o, `{"id":1,"html":"<p>","script":"window.x=1"}`+"\n")
	require.Len(t, got, 1)
	require.NoError(t, o.Close())
	assert.Equal(t, int32(1), e.resetDone.Load(), "the reset finished before Close returned")
}

// drain, right after an answer, waits for that case's reset: the remote path moves a
// checked pool's pages into the engine's pool, and a page still in its reset there
// met the first request (Firefox via run-server: "target closed" on that request,
// TestOriginListenServesRemoteBrowsers, every run). Before drain the pages were taken
// as they were.
func TestDrainWaitsForTheResetAfterTheLastCase(t *testing.T) {
	e := &slowResetEngine{fakeEngine: fakeEngine{name: browser.Chromium}}
	p := pool.New(browser.Chromium, []browser.Engine{e})
	o := &Oracle{engines: map[string]*pool.Pool{browser.Chromium: p}, order: []string{browser.Chromium},
		profile: "default", deadline: time.Second, inflight: 1, log: fakeOracle().log}
	_, errs := fanOut(context.Background(), o, []string{browser.Chromium},
		func(ctx context.Context, e browser.Engine) (int, error) { return 1, nil })
	require.Empty(t, errs)
	assert.Equal(t, int32(0), e.resetDone.Load(), "the answer comes before the reset")
	back := p.Drain(5 * time.Second)
	assert.Equal(t, []browser.Engine{e}, back)
	assert.Equal(t, int32(1), e.resetDone.Load(), "drain returned after the reset")
}

// keepingEngine is a fakeEngine (a unit test of the pool, no browser) that can keep
// its page (browser.Keeper) and records the order of its calls.
type keepingEngine struct {
	fakeEngine
	mu     sync.Mutex
	events []string
}

func (k *keepingEngine) note(s string) {
	k.mu.Lock()
	k.events = append(k.events, s)
	k.mu.Unlock()
}
func (k *keepingEngine) Keep() bool { k.note("keep"); return true }
func (k *keepingEngine) Reset(ctx context.Context) error {
	k.note("reset")
	return k.fakeEngine.Reset(ctx)
}
func (k *keepingEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	k.note("load " + html)
	return k.fakeEngine.Load(ctx, html, fn, args...)
}

func TestInertCasesKeepTheirPageAndOthersGetANewDocumentFirst(t *testing.T) {
	e := &keepingEngine{fakeEngine: fakeEngine{name: browser.Chromium}}
	o := fakeOracle(&e.fakeEngine)
	o.engines[browser.Chromium] = pool.New(browser.Chromium, []browser.Engine{e})
	o.inertReuse = true
	serveLines(t, o, strings.Join([]string{
		`{"id":1,"html":"<div>a</div>"}`,
		`{"id":2,"html":"<div>b</div>"}`,
		`{"id":3,"html":"<div>c</div>","script":"window.x=1"}`,
		`{"id":4,"html":"<div>d</div>"}`,
		`{"id":5,"html":"<script>x=1</script>"}`,
		`{"id":6,"html":"<div>e</div>"}`,
	}, "\n")+"\n")
	o.resets.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Equal(t, []string{
		"load <div>a</div>", "keep",
		"load <div>b</div>", "keep",
		"reset", "load <div>c</div>", "reset", // a script case: a new document before and after
		"load <div>d</div>", "keep",
		"reset", "load <script>x=1</script>", "reset", // markup that can run script: the same
		"load <div>e</div>", "keep",
	}, e.events)
}

// An inert case whose check fails in the engine (the fake says so: a unit test of
// the pool only) is measured again on a new document, and its page is not kept: the
// next inert case gets a new document too.
func TestAnInertCaseThatFailsItsCheckIsMeasuredAgainOnANewDocument(t *testing.T) {
	e := &keepingEngine{fakeEngine: fakeEngine{name: browser.Chromium, failCheck: "hostile"}}
	o := fakeOracle(&e.fakeEngine)
	o.engines[browser.Chromium] = pool.New(browser.Chromium, []browser.Engine{e})
	o.inertReuse = true
	got := serveLines(t, o, strings.Join([]string{
		`{"id":1,"html":"<div>a</div>"}`,
		`{"id":2,"html":"<div>hostile</div>"}`,
		`{"id":3,"html":"<div>b</div>"}`,
	}, "\n")+"\n")
	o.resets.Wait()
	for _, a := range got {
		assert.Nil(t, a["errors"], "every case is answered: %v", a)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Equal(t, []string{
		"load <div>a</div>", "keep",
		"load <div>hostile</div>", "reset", "load <div>hostile</div>", "reset",
		"load <div>b</div>", "keep",
	}, e.events)
}

func TestWithoutInertReuseEveryCaseIsReset(t *testing.T) {
	e := &keepingEngine{fakeEngine: fakeEngine{name: browser.Chromium}}
	o := fakeOracle(&e.fakeEngine)
	o.engines[browser.Chromium] = pool.New(browser.Chromium, []browser.Engine{e})
	serveLines(t, o, `{"id":1,"html":"<div>a</div>"}`+"\n"+`{"id":2,"html":"<div>b</div>"}`+"\n")
	o.resets.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Equal(t, []string{"load <div>a</div>", "reset", "load <div>b</div>", "reset"}, e.events)
}

// slowSandboxEngine is a stand-in engine (no browser runs) whose sandbox scan waits
// for the test to hand it a state, as inspectSandbox's /proc retry can for 2 s.
type slowSandboxEngine struct {
	*fakeEngine
	states chan browser.SandboxState
}

func (e *slowSandboxEngine) Sandbox() browser.SandboxState { return <-e.states }

// Ping is answered at once while a sandbox scan is under way, with the
// state the last scan found; a later ping shows the next scan's. Before, ping ran the
// scan itself under stateMu and waited for it.
func TestPingDoesNotWaitForASandboxScan(t *testing.T) {
	e := &slowSandboxEngine{fakeEngine: &fakeEngine{name: "chromium"}, states: make(chan browser.SandboxState, 1)}
	t.Cleanup(func() { close(e.states) }) // ends a scan still waiting
	o := fakeOracle()
	p := pool.New(e.name, []browser.Engine{e})
	o.engines[e.name], o.order = p, []string{e.name}
	on := browser.SandboxState{User: "u", On: true, Sandbox: "fake"}
	e.states <- on
	o.logSandbox(e.name, p) // the startup scan

	pingNow := func() PingResponse {
		t.Helper()
		got := make(chan PingResponse, 1)
		go func() { got <- o.ping(nil) }()
		select {
		case r := <-got:
			return r
		case <-time.After(2 * time.Second):
			t.Fatal("ping waited for the sandbox scan")
		}
		return PingResponse{}
	}
	for range 3 { // the scan these start waits for a state; ping does not
		assert.Equal(t, on, pingNow().Sandbox[e.name])
	}
	off := browser.SandboxState{User: "u", Reason: "fake: off"}
	e.states <- off
	deadline := time.Now().Add(5 * time.Second)
	for pingNow().Sandbox[e.name] != off && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, off, pingNow().Sandbox[e.name], "a later ping shows the next scan's state")
}

// A page added to a serving pool (a slow endpoint joining, remote.go) serves beside
// the first, health counts it, and the pool refuses pages past its room. Run under
// -race: ping's health reads the pages while add grows them.
func TestAPoolServesThePagesAddedToIt(t *testing.T) {
	first, joined := &fakeEngine{name: browser.Chromium}, &fakeEngine{name: browser.Chromium}
	p := pool.NewWithRoom(browser.Chromium, []browser.Engine{first}, 2)
	o := &Oracle{engines: map[string]*pool.Pool{browser.Chromium: p}, order: []string{browser.Chromium},
		profile: "default", deadline: time.Second, inflight: 2, log: fakeOracle().log}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			p.Health()
		}
	}()
	assert.Empty(t, p.Add([]browser.Engine{joined}))
	<-done
	assert.Equal(t, 2, p.Health().Pages)
	assert.Len(t, p.Add([]browser.Engine{&fakeEngine{name: browser.Chromium}}), 1, "past the pool's room")

	// Two cases at once, each holding its page until both have one: both pages serve.
	var mu sync.Mutex
	used := map[browser.Engine]bool{}
	var both sync.WaitGroup
	both.Add(2)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fanOut(context.Background(), o, []string{browser.Chromium}, func(ctx context.Context, e browser.Engine) (int, error) {
				mu.Lock()
				used[e] = true
				mu.Unlock()
				both.Done()
				both.Wait()
				return 0, nil
			})
		}()
	}
	wg.Wait()
	assert.True(t, used[first] && used[joined], "both pages served")
	require.NoError(t, o.Close())
}

// A case sent while its engine still starts waits for the startup within the
// startup's own bound, and its --deadline starts when the engine takes it: under load
// Firefox's startup outlasted the wait for a page, and the case
// lost Firefox's answer ("firefox is still starting: context deadline exceeded"). A
// unit test of the pool's waits (a fakeEngine, no browser), with the page wait
// shortened to 300 ms and a startup of 1 s; on 05864a4 the startup's wait was the
// page wait's, and the case failed after 300 ms.
func TestACaseSentAtSpawnWaitsForTheStartupNotItsDeadline(t *testing.T) {
	saved := recoveryAllowance
	recoveryAllowance = 200 * time.Millisecond
	t.Cleanup(func() { recoveryAllowance = saved })
	o := fakeOracle()
	o.deadline = 100 * time.Millisecond
	o.failed, o.launched, o.predicted = map[string]string{}, map[string]engineBuild{}, map[string]engineBuild{}
	o.starting = map[string]chan struct{}{browser.Firefox: make(chan struct{})}
	o.need = map[string]chan struct{}{}
	go func() {
		time.Sleep(time.Second) // the startup, longer than deadline and page wait together
		o.decide(browser.Firefox, pool.New(browser.Firefox, []browser.Engine{&fakeEngine{name: browser.Firefox}}), "")
	}()
	began := time.Now()
	results, errs := fanOut(context.Background(), o, nil, func(ctx context.Context, e browser.Engine) (string, error) {
		return e.Name(), nil
	})
	assert.Empty(t, errs)
	assert.Equal(t, map[string]string{browser.Firefox: browser.Firefox}, results)
	assert.GreaterOrEqual(t, time.Since(began), time.Second, "the case waited for the startup")
}

// The wait for a startup has a bound of its own: an engine that does not come up in
// it is that engine's error, not a request held for good.
func TestTheWaitForAStartupIsBounded(t *testing.T) {
	saved := startupWait
	startupWait = 200 * time.Millisecond
	t.Cleanup(func() { startupWait = saved })
	o := fakeOracle()
	o.failed, o.launched, o.predicted = map[string]string{}, map[string]engineBuild{}, map[string]engineBuild{}
	o.starting = map[string]chan struct{}{browser.Firefox: make(chan struct{})}
	o.need = map[string]chan struct{}{}
	_, errs := fanOut(context.Background(), o, []string{browser.Firefox}, func(ctx context.Context, e browser.Engine) (string, error) {
		return e.Name(), nil
	})
	assert.Equal(t, map[string]string{browser.Firefox: "firefox is still starting after 200ms"}, errs)
}
