package oracle

// Unit test of the self-check's store bypass with the stand-in engines of
// protocol_test.go (no browser); against the real engines, cmd/oracle's
// TestSelfCheckRunsLiveOnAWarmStore.

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/layout-oracle/oracle/store"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// brokenEngine is a stand-in engine of the same build and route as fakeEngine whose
// every case fails: a broken engine the store holds good answers for.
type brokenEngine struct{ fakeEngine }

func (b *brokenEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	return nil, errors.New("broken")
}

// Fails before the fix: checkEngine read the store, so the broken engine passed
// from the good engine's stored answer.
func TestSelfCheckIgnoresStoredAnswers(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{}, zerolog.Nop())
	require.NoError(t, err)
	defer st.Close()
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	o.store = st
	html := "<p>"
	checks := []SelfCheck{{Name: "box", Request: Request{Op: OpGeometry, HTML: &html}}}
	ctx := context.Background()

	// The good engine answers the check's case as a request, which stores it.
	resp := o.Handle(ctx, checks[0].NewRequest("warm", []string{browser.Chromium})).(geometryResponse)
	require.Empty(t, resp.Errors)
	st.Flush(10 * time.Second)
	require.Equal(t, int64(1), st.Stats().Writes)

	before := st.Stats()
	broken := pool.New(browser.Chromium, []browser.Engine{&brokenEngine{fakeEngine{name: browser.Chromium}}})
	assert.Contains(t, o.checkEngine(ctx, broken, checks), "box: ")
	good := pool.New(browser.Chromium, []browser.Engine{&fakeEngine{name: browser.Chromium}})
	assert.Empty(t, o.checkEngine(ctx, good, checks))
	st.Flush(10 * time.Second)
	after := st.Stats()
	assert.Equal(t, before.Hits, after.Hits, "the self-check read the store")
	assert.Equal(t, before.Misses, after.Misses, "the self-check looked in the store")
	assert.Equal(t, before.Writes, after.Writes, "the self-check wrote to the store")
}
