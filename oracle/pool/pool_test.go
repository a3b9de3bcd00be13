package pool

import (
	"testing"

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
