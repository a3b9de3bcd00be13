package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/playwright"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// small is a three-node dump (html > body > div); the div's width is w.
func small(engine string, w float64) *dump.Dump {
	d := &dump.Dump{Engine: engine, EngineVersion: "1", Viewport: dump.Viewport}
	for i, tag := range []string{"HTML", "BODY", "DIV"} {
		r := dump.Rect{X: 0, Y: 0, W: 800, H: 100}
		if tag == "DIV" {
			r = dump.Rect{X: 10, Y: 20, W: w, H: 30}
		}
		d.Nodes = append(d.Nodes, dump.Node{Index: i, Parent: i - 1, Depth: i, Tag: tag, Bounding: r,
			Rects: []dump.Rect{r}, Style: dump.Style{"display": "block"}})
	}
	return d
}

// The index stays usable at 10,000 cases: only one page of rows is in the DOM, and
// paging, filtering and sorting work over all of them. The cases are synthetic (a
// unit test of the writer's output), the browser is the oracle's real Chromium.
func TestIndexAtTenThousandCases(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a real browser")
	}
	const n = 10000
	dir := testutil.BrowserDir(t)
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	t0 := time.Now()
	fails := 0
	for i := 0; i < n; i++ {
		// Every 7th case has firefox outvoted on the div's width; every 10th candidate fails.
		ff := 100.0
		if i%7 == 0 {
			ff = 90
		}
		o := map[string]*dump.Dump{"chromium": small("chromium", 100), "firefox": small("firefox", ff), "webkit": small("webkit", 100)}
		cand := small("candidate", 100)
		if i%10 == 0 {
			cand = small("candidate", 120)
		}
		r, err := compare.Geometry(o, cand, dump.DefaultTolerance)
		require.NoError(t, err)
		if r.Verdict == compare.Fail {
			fails++
		}
		id, _ := json.Marshal(fmt.Sprintf("case-%05d", i))
		require.NoError(t, w.Add(Case{ID: id, Report: r, Dumps: o, Candidate: cand}))
	}
	require.NoError(t, w.Close())
	t.Logf("wrote %d case pages in %s", n, time.Since(t0))

	d, err := playwright.Start(zerolog.Nop())
	require.NoError(t, err)
	defer d.Stop()
	e, err := d.Launch(playwright.Options{Engine: browser.Chromium}, zerolog.Nop())
	require.NoError(t, err)
	defer e.Close()

	var got struct {
		Rows, Last, Fail, Firefox, Desc  []string
		Page, LastPage, Shown, FailShown string
		Ms                               float64
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	raw, err := e.Visit(ctx, "file://"+filepath.Join(dir, "index.html"), `() => {
	  const ids = () => [...document.querySelectorAll("#cases tbody tr td.id")].map(td => td.textContent);
	  const text = id => document.getElementById(id).textContent;
	  const set = (id, value) => { const s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event("change")); };
	  const r = { rows: ids(), page: text("page"), shown: text("shown") };
	  const t0 = performance.now();
	  for (let i = 0; i < 99; i++) document.getElementById("next").click();
	  r.ms = (performance.now() - t0) / 99;
	  r.last = ids(); r.lastPage = text("page");
	  set("f-verdict", "fail"); r.fail = ids(); r.failShown = text("shown");
	  set("f-verdict", ""); set("f-engine", "firefox"); r.firefox = ids();
	  set("f-engine", ""); document.querySelector("th[data-sort=id]").click(); document.querySelector("th[data-sort=id]").click();
	  r.desc = ids();
	  return r; }`)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &got))
	t.Logf("one page turn over %d cases: %.1f ms", n, got.Ms)

	assert.Len(t, got.Rows, 100, "one page of rows in the DOM")
	assert.Equal(t, "case-00000", got.Rows[0])
	assert.Equal(t, "page 1 of 100", got.Page)
	assert.Equal(t, fmt.Sprintf("%d of %d cases", n, n), got.Shown)
	assert.Equal(t, "page 100 of 100", got.LastPage)
	require.Len(t, got.Last, 100)
	assert.Equal(t, "case-09999", got.Last[99])
	assert.Equal(t, fmt.Sprintf("%d of %d cases", fails, n), got.FailShown)
	for _, id := range got.Fail {
		var i int
		fmt.Sscanf(id, "case-%d", &i)
		assert.Zero(t, i%10, id)
	}
	for _, id := range got.Firefox {
		var i int
		fmt.Sscanf(id, "case-%d", &i)
		assert.Zero(t, i%7, id)
	}
	assert.NotEmpty(t, got.Firefox)
	assert.Equal(t, "case-09999", got.Desc[0], "sorted by id, descending")

	// Every case has its page, and pages are small.
	entries, err := os.ReadDir(filepath.Join(dir, "cases"))
	require.NoError(t, err)
	assert.Len(t, entries, n)
	b, err := os.ReadFile(filepath.Join(dir, "cases", "000008.html"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(b), `class="box st-outvoted outlier`), "case 8 (i=7): firefox outlier")
}

// A delta past float64's range (widths near 1.7e308, which compare scores as +Inf)
// still gets its page: JSON has no Inf, and one case must not end the report. A unit
// test of the writer on hand-built dumps.
func TestInfiniteDeltaStillWritesThePage(t *testing.T) {
	dir := testutil.BrowserDir(t)
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	o := map[string]*dump.Dump{"chromium": small("chromium", -1.7e308), "firefox": small("firefox", -1.7e308), "webkit": small("webkit", -1.7e308)}
	cand := small("candidate", 1.7e308)
	r, err := compare.Geometry(o, cand, dump.DefaultTolerance)
	require.NoError(t, err)
	require.NoError(t, w.Add(Case{ID: json.RawMessage(`"huge"`), Report: r, Dumps: o, Candidate: cand}))
	require.NoError(t, w.Close())
	b, err := os.ReadFile(filepath.Join(dir, "cases", "000001.html"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `class="box st-failed cause"`)
}

// A case page leads with its causes and outlines the cause box in every aligned
// panel. A unit test of the writer on hand-built dumps.
func TestCasePageShowsCauses(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	o := map[string]*dump.Dump{"chromium": small("chromium", 100), "firefox": small("firefox", 107), "webkit": small("webkit", 100)}
	r, err := compare.Geometry(o, nil, dump.DefaultTolerance)
	require.NoError(t, err)
	require.NoError(t, w.Add(Case{ID: json.RawMessage(`"wide"`), Report: r, Dumps: o}))
	require.NoError(t, w.Close())
	b, err := os.ReadFile(filepath.Join(dir, "cases", "000001.html"))
	require.NoError(t, err)
	page := string(b)
	assert.Contains(t, page, `<dd id="causes">1 for 2 non-unanimous items:<ol><li data-node="2"><b>firefox text at HTML&gt;BODY&gt;DIV</b> explains 2</li></ol></dd>`)
	assert.Equal(t, 3, strings.Count(page, `class="box st-outvoted cause" data-node="2"`)+
		strings.Count(page, `class="box st-outvoted outlier cause" data-node="2"`), "the cause box in each of the three panels")
	assert.Contains(t, page, `class="box st-outvoted outlier cause" data-node="2"`, "firefox's own panel")
	assert.Equal(t, 3, strings.Count(page, " cause\""), "no other box is a cause")
}

// An item an engine's runs differed on is drawn as unstable, not outvoted, and the
// case's votes and index row count it apart. A unit test of the writer on hand-built
// dumps.
func TestCasePageShowsUnstable(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	o := map[string]*dump.Dump{"chromium": small("chromium", 100), "firefox": small("firefox", 107), "webkit": small("webkit", 100)}
	u := compare.Unstable{"firefox": {"2:bounding.w", "2:rects[0].w"}}
	r, err := compare.GeometryUnstable(o, nil, dump.DefaultTolerance, u)
	require.NoError(t, err)
	require.NoError(t, w.Add(Case{ID: json.RawMessage(`"flaky"`), Report: r, Dumps: o, Unstable: u}))
	require.NoError(t, w.Close())
	b, err := os.ReadFile(filepath.Join(dir, "cases", "000001.html"))
	require.NoError(t, err)
	page := string(b)
	assert.Contains(t, page, `<dd id="votes">`)
	assert.Contains(t, page, `unstable 2</dd>`)
	assert.Equal(t, 3, strings.Count(page, `class="box st-unstable" data-node="2"`), "the node in each of the three panels")
	assert.NotContains(t, page, "box st-outvoted")
	assert.NotContains(t, page, `id="causes"`)
	idx, err := os.ReadFile(filepath.Join(dir, "cases.js"))
	require.NoError(t, err)
	assert.Contains(t, string(idx), `"unstable":2`)
}

// A failed row says in the index how many items failed, the largest delta, and a
// reason naming the worst item (compare gives no reason for a plain fail). A unit
// test of the writer on hand-built dumps.
func TestIndexRowOfAFailedCaseSaysWhy(t *testing.T) {
	w, _ := writtenCase(t, 100, 100, 100, 103)
	require.Len(t, w.rows, 1)
	row := w.rows[0]
	require.Equal(t, string(compare.Fail), row.Verdict)
	assert.Positive(t, row.Failed)
	assert.InDelta(t, 3, row.MaxDelta, 0.01)
	assert.Regexp(t, `^\d+ items? outside tolerance; the largest: \S+ \(node \d+\) \S+ \+3\.00 px$`, row.Reason)
}
