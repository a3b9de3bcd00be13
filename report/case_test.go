package report

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/playwright"

	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// The items table lists each item the engines disagree on with every engine's
// value, the majority's, the outlier's delta and the candidate's value and delta;
// the outvoted engine's panel, not the majority's, is the highlighted one. A unit
// test of the writer on hand-built dumps (firefox's div 7 px wider, the
// candidate's 20 px).
func TestCasePageTablesTheOutvotedItems(t *testing.T) {
	_, page := writtenCase(t, 100, 107, 100, 120)

	assert.Contains(t, page, `<th>node</th><th>tag</th><th>item</th><th>vote</th><th>chromium</th><th>firefox</th><th>webkit</th><th>majority</th><th>outlier &minus; majority</th><th>candidate</th><th>candidate &minus; majority</th>`)
	for _, prop := range []string{"bounding.w", "rects[0].w"} {
		assert.Contains(t, page, `<tr class="item v-majority" data-node="2"><td>2</td><td>DIV</td><td>`+prop+`</td><td>majority: <b>firefox</b> outvoted</td>`+
			`<td>100</td><td class="outlier">107</td><td>100</td><td>100</td><td>&#43;7</td><td class="failed">120</td><td>&#43;20</td></tr>`, prop)
	}
	assert.Equal(t, 2, strings.Count(page, `<tr class="item`), "only the two items firefox was outvoted on")

	assert.Contains(t, page, `<section class="panel outlier" data-engine="firefox">`)
	assert.Contains(t, page, `<span class="badge">outvoted on 2 items</span>`)
	for _, e := range []string{"chromium", "webkit", "candidate"} {
		assert.Contains(t, page, `<section class="panel" data-engine="`+e+`">`, e)
	}
	assert.Equal(t, 1, strings.Count(page, `class="panel outlier"`))
	assert.Equal(t, 1, strings.Count(page, ` outlier cause"`), "the outlier's box in firefox's panel only")
}

// No items table where every engine agrees: a candidate's failure alone is listed
// under "outside tolerance", not here. A unit test of the writer.
func TestNoItemsTableWhenTheEnginesAgree(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	o := map[string]*dump.Dump{"chromium": small("chromium", 100), "firefox": small("firefox", 100), "webkit": small("webkit", 100)}
	cand := small("candidate", 120)
	r, err := compare.Geometry(o, cand, dump.DefaultTolerance)
	require.NoError(t, err)
	require.NoError(t, w.Add(Case{ID: json.RawMessage(`"agree"`), Report: r, Dumps: o, Candidate: cand}))
	require.NoError(t, w.Close())
	b, err := os.ReadFile(filepath.Join(dir, "cases", "000001.html"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), `id="items"`)
	assert.NotContains(t, string(b), `class="panel outlier"`)
	assert.Contains(t, string(b), "outside tolerance")
}

func TestTextDelta(t *testing.T) {
	for _, c := range []struct{ got, want, delta string }{
		{"43", "600", "-557"}, {"19px", "18px", "+1"}, {"10.5", "10.5", "0"},
		{"none", "18", ""}, {"auto", "18px", ""}, {"2em", "1em", ""}, {"block", "inline", ""},
	} {
		assert.Equal(t, c.delta, textDelta(c.got, c.want), "%s - %s", c.got, c.want)
	}
}

// demoCases are the requests `make demo` sends: the Makefile's demo-cases target.
func demoCases(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("make", "-s", "--no-print-directory", "demo-cases")
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err)
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}

// `make demo` asks for a screenshot on every geometry case of the bundled file and
// on nothing else, and sends every bundled case. A test of the Makefile's sed.
func TestDemoCasesAskForScreenshots(t *testing.T) {
	lines := demoCases(t)
	f, err := os.Open("../testdata/cases.ndjson")
	require.NoError(t, err)
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct{ ID string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		ids = append(ids, m.ID)
	}
	require.Len(t, lines, len(ids))
	geometry := 0
	for i, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		assert.Equal(t, ids[i], m["id"])
		op, _ := m["op"].(string)
		if op == "" || op == "geometry" {
			geometry++
			assert.Equal(t, true, m["screenshot"], "%s asks for its screenshot", ids[i])
		} else {
			assert.NotContains(t, m, "screenshot", "%s: a %s request takes none", ids[i], op)
		}
	}
	assert.Equal(t, 9, geometry)
}

// itemValue reads a numeric or style item ("bounding.h", "rects[0].w",
// "style.height") of node i out of d, as compare writes it; ok is false for the
// other items (offsets, counts).
func itemValue(d *dump.Dump, i int, prop string) (string, bool) {
	n := d.Nodes[i]
	f := func(v float64) (string, bool) { return strconv.FormatFloat(v, 'g', -1, 64), true }
	var r dump.Rect
	switch {
	case strings.HasPrefix(prop, "style."):
		return n.Style[strings.TrimPrefix(prop, "style.")], true
	case strings.HasPrefix(prop, "bounding."):
		r = n.Bounding
	case strings.HasPrefix(prop, "rects[") && strings.Contains(prop, "]."):
		k, err := strconv.Atoi(prop[len("rects["):strings.Index(prop, "]")])
		if err != nil || k >= len(n.Rects) {
			return "", false
		}
		r = n.Rects[k]
	default:
		return "", false
	}
	switch prop[strings.LastIndex(prop, ".")+1:] {
	case "x":
		return f(r.X)
	case "y":
		return f(r.Y)
	case "w":
		return f(r.W)
	case "h":
		return f(r.H)
	}
	return "", false
}

// The demo's cases through the three real engines, into a report, read back in the
// oracle's Chromium: the case the engines disagree on (quirks-mode today) has a
// table of the outvoted items whose values are those of the engines' own dumps;
// the outvoted engine's panel is framed and badged and fills its outvoted boxes,
// the majority's do not; every panel shows its engine's screenshot (make demo asks
// for them); and at the viewer's 800 px nothing is cut off at the right.
func TestDemoReportOfTheRealEngines(t *testing.T) {
	testutil.NeedsBrowsers(t)
	lines := demoCases(t)
	ctx := context.Background()
	o, err := oracle.Launch(ctx, oracle.Config{Routes: routes.Table, Pages: 1}, zerolog.Nop())
	require.NoError(t, err)
	var out strings.Builder
	err = o.Serve(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out)
	o.Close()
	require.NoError(t, err)

	dir := testutil.BrowserDir(t)
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	type answer struct {
		ID     json.RawMessage
		Dumps  map[string]*dump.Dump
		Errors map[string]string
	}
	var split *answer
	var splitReport *compare.Report
	page, best := "", 0
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a answer
		require.NoError(t, json.Unmarshal([]byte(l), &a))
		if a.Dumps == nil {
			continue // the reflection case
		}
		r, err := compare.Geometry(a.Dumps, nil, dump.DefaultTolerance)
		require.NoError(t, err, "%s", a.ID)
		require.NoError(t, w.Add(Case{ID: a.ID, Report: r, Dumps: a.Dumps, Errors: a.Errors}))
		for _, d := range a.Dumps {
			assert.NotEmpty(t, d.Screenshot, "%s %s: make demo asked for its screenshot", a.ID, d.Engine)
		}
		// The case with the most outvoted items.
		if n := sum(w.rows[len(w.rows)-1].Outvoted); n > best && len(a.Dumps) == 3 {
			split, splitReport, best = &a, r, n
			page = w.rows[len(w.rows)-1].Page
		}
	}
	require.NoError(t, w.Close())
	require.NotNil(t, split, "no bundled case has an engine outvoted (quirks-mode had firefox)")
	outlier := splitReport.Outliers[0].Engine
	wantRows := 0
	for _, ol := range splitReport.Outliers {
		require.Equal(t, outlier, ol.Engine, "one engine outvoted")
		wantRows += ol.Count
	}
	t.Logf("case %s: %s outvoted on %d items", split.ID, outlier, wantRows)

	d, err := playwright.Start(zerolog.Nop())
	require.NoError(t, err)
	defer d.Stop()
	e, err := d.Launch(playwright.Options{Engine: browser.Chromium}, zerolog.Nop())
	require.NoError(t, err)
	defer e.Close()
	var got struct {
		Head   []string
		Rows   [][]string
		Marked [][]bool // per row, per cell: the cell is marked the outlier's
		Panels []struct {
			Engine, Class, Badge, Outline string
			Filled, Outliers, Outvoted    int
			Shot                          []int
			Right                         float64
		}
		Width, ItemsRight float64
	}
	vctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	raw, err := e.Visit(vctx, "file://"+filepath.Join(dir, page), `async () => {
	  await Promise.all([...document.images].map(i => i.decode().catch(() => {})));
	  const cells = tr => [...tr.children];
	  const rows = [...document.querySelectorAll("#items tr")];
	  return {
	    head: cells(rows[0]).map(c => c.textContent),
	    rows: rows.slice(1).map(tr => cells(tr).map(c => c.textContent)),
	    marked: rows.slice(1).map(tr => cells(tr).map(c => c.classList.contains("outlier"))),
	    panels: [...document.querySelectorAll("section.panel")].map(s => ({
	      engine: s.dataset.engine, class: s.className,
	      badge: (s.querySelector(".badge") || {}).textContent || "",
	      outline: getComputedStyle(s.querySelector(".stage")).outlineColor + " " + getComputedStyle(s.querySelector(".stage")).outlineWidth,
	      filled: [...s.querySelectorAll("rect.box.st-outvoted")].filter(r => getComputedStyle(r).fill !== "none").length,
	      outvoted: s.querySelectorAll("rect.box.st-outvoted").length,
	      outliers: s.querySelectorAll("rect.box.outlier").length,
	      shot: [...s.querySelectorAll("img")].map(i => [i.naturalWidth, i.naturalHeight]).flat(),
	      right: s.getBoundingClientRect().right })),
	    width: document.documentElement.clientWidth,
	    itemsRight: document.querySelector(".scroll").getBoundingClientRect().right,
	  }; }`)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &got), "%s", raw)

	// The table: one row per outvoted item; each engine's cell is its dump's value.
	engines := []string{"chromium", "firefox", "webkit"}
	require.Equal(t, append(append([]string{"node", "tag", "item", "vote"}, engines...), "majority", "outlier − majority"), got.Head)
	require.Len(t, got.Rows, wantRows)
	perProp := map[string]int{}
	checked := 0
	for k, row := range got.Rows {
		node, err := strconv.Atoi(row[0])
		require.NoError(t, err)
		prop := row[2]
		perProp[prop]++
		assert.Equal(t, "majority: "+outlier+" outvoted", row[3])
		for j, eng := range engines {
			assert.Equal(t, eng == outlier, got.Marked[k][4+j], "%s %s: only the outlier's cell is marked", prop, eng)
			if v, ok := itemValue(split.Dumps[eng], node, prop); ok {
				assert.Equal(t, v, row[4+j], "node %d %s %s", node, prop, eng)
				checked++
			}
		}
		// The majority is a voter's value other than the outlier's; the delta is
		// the outlier's minus it.
		want := row[7]
		var majority []string
		for j, eng := range engines {
			if eng != outlier {
				majority = append(majority, row[4+j])
			}
		}
		assert.Contains(t, majority, want, "node %d %s", node, prop)
		assert.Equal(t, textDelta(row[4+slices.Index(engines, outlier)], want), row[8])
	}
	t.Logf("items table: %q", got.Rows)
	assert.Positive(t, checked, "some value read back from the dumps")
	for _, ol := range splitReport.Outliers {
		assert.Equal(t, ol.Count, perProp[ol.Property], ol.Property)
	}

	// The highlight is on the outlier's panel.
	require.Len(t, got.Panels, 3)
	for _, p := range got.Panels {
		assert.Equal(t, []int{800, 600}, p.Shot, "%s: its screenshot loads at 800x600", p.Engine)
		assert.LessOrEqual(t, p.Right, got.Width, "%s: the panel is not cut off", p.Engine)
		assert.Positive(t, p.Outvoted, "%s: outvoted nodes are outlined in every panel", p.Engine)
		if p.Engine == outlier {
			assert.Equal(t, "panel outlier", p.Class)
			badge := "outvoted on " + strconv.Itoa(wantRows) + " items"
			if wantRows == 1 {
				badge = "outvoted on 1 item"
			}
			assert.Equal(t, badge, p.Badge)
			assert.Equal(t, "rgb(224, 123, 0) 4px", p.Outline)
			assert.Equal(t, p.Outvoted, p.Filled, "every outvoted box filled in the outlier's panel")
			assert.Equal(t, p.Outvoted, p.Outliers)
		} else {
			assert.Equal(t, "panel", p.Class, p.Engine)
			assert.Empty(t, p.Badge, p.Engine)
			assert.Equal(t, "rgb(153, 153, 153) 1px", p.Outline, p.Engine)
			assert.Zero(t, p.Filled, "%s: no outvoted box filled in a majority panel", p.Engine)
			assert.Zero(t, p.Outliers, p.Engine)
		}
	}
	assert.LessOrEqual(t, got.ItemsRight, got.Width, "the table scrolls inside its box, not past the page")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// A node the candidate failed is filled in the candidate's panel only; the real
// engines' panels outline it thinly (it is not their fault). A unit test of the
// writer on hand-built dumps.
func TestTheCandidatesFailureIsFilledInItsPanelOnly(t *testing.T) {
	_, page := writtenCase(t, 100, 100, 100, 120)
	for _, e := range []string{"chromium", "firefox", "webkit", "candidate"} {
		start := strings.Index(page, `data-engine="`+e+`"`)
		require.GreaterOrEqual(t, start, 0, e)
		end := strings.Index(page[start:], "</section>")
		panel := page[start : start+end]
		assert.Contains(t, panel, "st-failed", e)
		assert.Equal(t, e == "candidate", strings.Contains(panel, " fails"), e)
	}
}

// writtenCase writes one case whose div is chromium, firefox and webkit px wide in
// the engines' dumps and cand px in the candidate's, and returns the writer (its
// index rows) and the case's page.
func writtenCase(t *testing.T, chromium, firefox, webkit, cand float64) (*Writer, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	o := map[string]*dump.Dump{"chromium": small("chromium", chromium), "firefox": small("firefox", firefox), "webkit": small("webkit", webkit)}
	c := small("candidate", cand)
	r, err := compare.Geometry(o, c, dump.DefaultTolerance)
	require.NoError(t, err)
	require.NoError(t, w.Add(Case{ID: json.RawMessage(`"wide"`), Report: r, Dumps: o, Candidate: c}))
	require.NoError(t, w.Close())
	b, err := os.ReadFile(filepath.Join(dir, "cases", "000001.html"))
	require.NoError(t, err)
	return w, string(b)
}
