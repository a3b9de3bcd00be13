package pool

import (
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keeper is a stand-in page (a unit test of the pool's own bookkeeping, no browser):
// it keeps every inert case's window it is asked to; nothing else of it is called.
type keeper struct{ browser.Engine }

func (keeper) Keep() bool { return true }

func TestAKeptPageIsResetAfterMaxKeptCases(t *testing.T) {
	e := keeper{}
	p := New(browser.Chromium, []browser.Engine{e})
	for i := 0; i < maxKept; i++ {
		require.True(t, p.Keep(e))
	}
	assert.False(t, p.Keep(e), "the document has held maxKept cases: the next gets a new one")
	assert.False(t, p.HoldsKept(e))
}

// slowKeeper is a stand-in page (a unit test of the pool's own locking, no browser)
// whose Keep, a browser round trip on a real page, waits until release is closed.
type slowKeeper struct {
	browser.Engine
	entered, release chan struct{}
}

func (k *slowKeeper) Keep() bool {
	close(k.entered)
	<-k.release
	return true
}

// One page's Keep (a round trip of up to seconds) must not hold up the pool's other
// pages: their Keep, Fresh and HoldsKept answer while it is under way.
func TestOnePagesKeepDoesNotHoldUpTheOthers(t *testing.T) {
	slow := &slowKeeper{entered: make(chan struct{}), release: make(chan struct{})}
	other := &keeper{}
	p := New(browser.Chromium, []browser.Engine{slow, other})
	done := make(chan bool)
	go func() { done <- p.Keep(slow) }()
	<-slow.entered

	answered := make(chan struct{})
	go func() {
		defer close(answered)
		p.Keep(other)
		p.HoldsKept(other)
		p.Fresh(other)
	}()
	select {
	case <-answered:
	case <-time.After(5 * time.Second):
		t.Error("another page's Keep, HoldsKept and Fresh waited on a page's Keep under way")
	}
	close(slow.release)
	assert.True(t, <-done)
	assert.True(t, p.HoldsKept(slow))
	<-answered
}
