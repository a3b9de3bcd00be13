package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/stretchr/testify/assert"
)

// No engine serving is ErrNoEngine, which cmd/oracle finds with errors.Is (it read
// the message before). A unit test: an Oracle with no engine, none launched.
func TestNoEngineIsErrNoEngine(t *testing.T) {
	o, err := (&Oracle{}).serveOne(false)
	assert.Nil(t, o)
	assert.True(t, errors.Is(err, ErrNoEngine), "got %v", err)
	assert.Equal(t, "no engine launched", err.Error(), "the text the user sees is unchanged")
}

// A unit test of a Config's page counts alone (the flag's parsing is pagecount's);
// the real engines' page counts are tested through the binary (cmd/oracle
// startup_test.go).
func TestPagesPerEngineAndInflight(t *testing.T) {
	cfg := Config{Pages: 2, EnginePages: map[string]int{browser.Firefox: 3, browser.Chromium: 1}}
	assert.Equal(t, 3, cfg.pagesFor(browser.Firefox))
	assert.Equal(t, 2, cfg.pagesFor(browser.WebKit), "an engine not named gets the default")
	assert.Equal(t, 3, defaultInflight(cfg, browser.AllEngines), "the largest count")
	assert.Equal(t, 2, defaultInflight(cfg, []string{browser.Chromium, browser.WebKit}), "only launched engines count")

}

// A unit test of the waiting logic alone, with fake engines (the real engines'
// startup is tested through the binary, cmd/oracle startup_test.go): a request
// naming an engine still starting waits for it; one that then serves answers, one
// that then fails gives "engine not launched" when named and is left out when not.
func TestRequestsWaitForStartingEngines(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	o.deadline = 10 * time.Second
	o.failed = map[string]string{}
	o.starting = map[string]chan struct{}{browser.Firefox: make(chan struct{}), browser.WebKit: make(chan struct{})}
	ctx := context.Background()
	req := func(engines ...string) *Request {
		html := "<p>"
		return &Request{ID: json.RawMessage(`"x"`), Op: OpGeometry, HTML: &html, Engines: engines}
	}
	named := make(chan any, 1)
	all := make(chan any, 1)
	go func() { named <- o.Handle(ctx, req(browser.Firefox, browser.WebKit)) }()
	go func() { all <- o.Handle(ctx, req()) }()

	ping := o.ping(json.RawMessage(`1`))
	assert.Equal(t, browser.StateStarting, ping.States[browser.Firefox].State)
	assert.Equal(t, []string{browser.Chromium, browser.Firefox, browser.WebKit}, ping.Engines,
		"a case sent now is answered by the starting engines too")
	assert.Equal(t, map[string]string{browser.Chromium: "0.0-fake"}, ping.Versions, "no build is known before a launch reports it")
	o.noteBuild(browser.Firefox, engineBuild{"1.2", "fake-route"})
	ping = o.ping(json.RawMessage(`1`))
	assert.Equal(t, "1.2", ping.Versions[browser.Firefox], "a starting engine's build once its launch reports it")
	assert.Equal(t, "fake-route", ping.Routes[browser.Firefox])
	assert.Equal(t, browser.StateStarting, ping.States[browser.Firefox].State)
	select {
	case <-named:
		t.Fatal("answered before its engines were decided")
	case <-time.After(100 * time.Millisecond):
	}
	o.decide(browser.Firefox, pool.New(browser.Firefox, []browser.Engine{&fakeEngine{name: browser.Firefox}}), "")
	o.decide(browser.WebKit, nil, "launch failed")

	n := (<-named).(geometryResponse)
	assert.Contains(t, n.Answers, browser.Firefox)
	assert.Equal(t, map[string]string{browser.WebKit: browser.ErrNotLaunched.Error()}, n.Errors)
	a := (<-all).(geometryResponse)
	assert.Len(t, a.Answers, 2)
	assert.Nil(t, a.Errors, "an engine that failed is left out of a request naming none")
	ping = o.ping(json.RawMessage(`2`))
	assert.Equal(t, []string{browser.Chromium, browser.Firefox}, ping.Engines, "a failed engine leaves engines")
	assert.Equal(t, map[string]string{browser.WebKit: "launch failed"}, ping.Failed)
	assert.Equal(t, map[string]string{browser.Chromium: "0.0-fake", browser.Firefox: "0.0-fake"}, ping.Versions,
		"the serving pool's build replaces the one noted at launch")
}
