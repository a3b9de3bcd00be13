package oracle

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/store"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --verify against the real engines: a case whose layout depends on a random number
// is unstable in every engine on the items it moves, and only on those; a stable case
// and a stable trace list nothing; a reflect probe of a random value is unstable.
func TestVerifyListsTheItemsThatDifferBetweenRuns(t *testing.T) {
	o := launchAll(t, Config{})
	random := handle(t, o, `{"id":"r","verify":3,"html":"<div id=a style='height:10px'></div><p>x</p>",`+
		`"script":"a.style.width = 10 + Math.random() * 300 + 'px'"}`)
	require.Contains(t, random, "unstable", "%v", random["errors"])
	unstable := random["unstable"].(map[string]any)
	for _, e := range browser.AllEngines {
		require.Contains(t, unstable, e)
		items := unstable[e].([]any)
		assert.Contains(t, items, "3:bounding.w", "%s: the DIV (node 3) moved", e)
		assert.NotContains(t, items, "4:bounding.y", "%s: the P below it did not", e)
	}
	assert.Len(t, random["dumps"], 3, "the answer is the first run's dumps")

	stable := handle(t, o, `{"id":"s","verify":3,"html":"<div style='width:10px;height:10px'></div>"}`)
	assert.NotContains(t, stable, "unstable")
	assert.Len(t, stable["dumps"], 3)

	tr := handle(t, o, `{"id":"t","op":"trace","verify":2,"html":"<p>","script":"trace.value('n', 1); trace.done()"}`)
	assert.NotContains(t, tr, "unstable", "%v", tr["errors"])
	assert.Len(t, tr["traces"], 3)

	refl := handle(t, o, `{"id":"f","op":"reflect","verify":3,"html":"<input id=i>",`+
		`"script":"i.value = String(Math.random())","probes":[{"selector":"#i","attr":"value","idl":"value"}]}`)
	require.Contains(t, refl, "unstable", "%v", refl["errors"])
	for _, e := range browser.AllEngines {
		assert.Contains(t, refl["unstable"].(map[string]any)[e], "0:idl_value(value)", e)
	}
}

// With the store on and --store-min-runs 2, a case answered once is measured live
// again, served from the store once two identical runs back it, and a flaky case
// is never served as stable: its second, different answer marks the key unstable,
// and the store serves it with its unstable list from then on. Real engines
// (Chromium alone: the store's part is per engine).
func TestStoreMinRunsMeasuresAgainAndNeverServesAFlakyAnswerAsStable(t *testing.T) {
	testutil.NeedsBrowsers(t)
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{Diff: StoreDiff}, testLogger(t))
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o, err := Launch(ctx, Config{Routes: routes.Table, Engines: []string{browser.Chromium}, Pages: 1, Store: st, StoreMinRuns: 2}, testLogger(t))
	require.NoError(t, err)
	defer o.Close()
	ask := func(line string) map[string]any {
		r := handle(t, o, line)
		st.Flush(10 * time.Second)
		return r
	}

	stable := `{"id":"s","html":"<div style='width:10px;height:10px'></div>"}`
	assert.NotContains(t, ask(stable), "stored", "first answer: live")
	assert.NotContains(t, ask(stable), "stored", "one run stored, two needed: live again")
	third := ask(stable)
	assert.Equal(t, []any{browser.Chromium}, third["stored"], "two identical runs: served from the store")
	assert.NotContains(t, third, "unstable")

	flaky := `{"id":"f","html":"<div id=a style='height:10px'></div>","script":"a.style.width = 10 + Math.random() * 300 + 'px'"}`
	for i := 0; i < 2; i++ {
		r := ask(flaky)
		assert.NotContains(t, r, "stored", "run %d: live", i+1)
	}
	served := ask(flaky)
	assert.Equal(t, []any{browser.Chromium}, served["stored"], "an unstable key is served from the store")
	require.Contains(t, served, "unstable", "and never as stable")
	assert.Contains(t, served["unstable"].(map[string]any)[browser.Chromium], "3:bounding.w")
	assert.EqualValues(t, 1, st.Stats().Unstable)
}
