package main

// The HTML report (--out) on real dumps, read in a real browser: the bundled cases
// go through the oracle's three engines (in process), compare writes the report, and
// the oracle's own Chromium engine opens it from disk. Structure is asserted, never
// pixels; a screenshot of each page kind lands in testdata/report/ (not committed).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
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

// oracleResponses serves lines through an in-process oracle on the three engines.
func oracleResponses(t *testing.T, lines []string) string {
	t.Helper()
	ctx := context.Background()
	o, err := oracle.Launch(ctx, oracle.Config{Routes: routes.Table, Pages: 1}, zerolog.Nop())
	require.NoError(t, err)
	defer o.Close()
	var out strings.Builder
	require.NoError(t, o.Serve(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out))
	return out.String()
}

// viewer is the oracle's own Chromium (Debian's build through playwright-go, as
// oracle.Launch finds it), used here to read the report.
type viewer struct{ e browser.Engine }

func newViewer(t *testing.T) *viewer {
	t.Helper()
	d, err := playwright.Start(zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { d.Stop() })
	e, err := d.Launch(playwright.Options{Engine: browser.Chromium}, zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return &viewer{e: e}
}

// eval opens path from disk and returns fn's JSON result, decoded into v.
func (w *viewer) eval(t *testing.T, path, fn string, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw, err := w.e.Visit(ctx, "file://"+path, fn)
	require.NoError(t, err, "open %s", path)
	require.NoError(t, json.Unmarshal(raw, v), "%s", raw)
}

// shoot saves the page as it is now under testdata/report/.
func (w *viewer) shoot(t *testing.T, name string) {
	t.Helper()
	s, ok := w.e.(interface {
		Screenshot(context.Context) ([]byte, error)
	})
	require.True(t, ok)
	png, err := s.Screenshot(context.Background())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll("testdata/report", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("testdata/report", name), png, 0o644))
}

type indexRow struct {
	N       int    `json:"n"`
	ID      string `json:"id"`
	Verdict string `json:"verdict"`
	Href    string `json:"href"`
}

const readIndex = `() => ({
  rows: [...document.querySelectorAll("#cases tbody tr")].map(tr => ({
    n: Number(tr.dataset.n), id: tr.querySelector("td.id").textContent,
    verdict: tr.querySelector("td.verdict").textContent, href: tr.querySelector("td.id a").href })),
  shown: document.getElementById("shown").textContent,
  page: document.getElementById("page").textContent })`

func TestHTMLReportInARealBrowser(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := testutil.BrowserDir(t)

	// The bundled cases, screenshots on some: panels show a screenshot where there
	// is one and a wireframe otherwise.
	withShot := map[string]bool{"fixed-blocks": true, "box-model": true, "inline-two-lines": true}
	f, err := os.Open("../../testdata/cases.ndjson")
	require.NoError(t, err)
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if withShot[m["id"].(string)] {
			m["screenshot"] = true
		}
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	f.Close()
	resp := oracleResponses(t, lines)
	oraclePath := filepath.Join(dir, "oracle.ndjson")
	require.NoError(t, os.WriteFile(oraclePath, []byte(resp), 0o644))

	// The candidate is Chromium's own dump with one box 7px too wide, so one node
	// fails; the quirks-mode case has Firefox really outvoted.
	dumps := map[string]map[string]*dump.Dump{}
	var cand strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(resp), "\n") {
		var r struct {
			ID    string                `json:"id"`
			Dumps map[string]*dump.Dump `json:"dumps"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		if len(r.Dumps) == 0 { // reflection and error cases: the candidate has nothing either
			b, _ := json.Marshal(map[string]any{"id": r.ID, "error": "no dump"})
			cand.Write(append(b, '\n'))
			continue
		}
		dumps[r.ID] = r.Dumps
		require.NotNil(t, r.Dumps["chromium"], "%s", l)
		c := *r.Dumps["chromium"]
		c.Nodes = append([]dump.Node(nil), c.Nodes...)
		if r.ID == "quirks-mode" {
			last := len(c.Nodes) - 1
			c.Nodes[last].Bounding.W += 7
			c.Nodes[last].Rects = append([]dump.Rect(nil), c.Nodes[last].Rects...)
			c.Nodes[last].Rects[0].W += 7
		}
		b, _ := json.Marshal(map[string]any{"id": r.ID, "dump": &c})
		cand.Write(append(b, '\n'))
	}
	require.Contains(t, dumps, "quirks-mode")
	candPath := filepath.Join(dir, "candidate.ndjson")
	require.NoError(t, os.WriteFile(candPath, []byte(cand.String()), 0o644))

	htmlDir := filepath.Join(dir, "report")
	code, stdout, stderr := runCmd(t, "", "--oracle", oraclePath, "--candidate", candPath, "--json", "--out", htmlDir)
	require.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stderr, "HTML report: "+filepath.Join(htmlDir, "index.html"))
	want := map[string]string{} // id -> verdict, from compare's own --json lines
	for _, l := range decodeJSONLines(t, stdout) {
		if l["totals"] == nil {
			want[fmt.Sprint(l["id"])] = l["verdict"].(string)
		}
	}
	require.Len(t, want, len(lines))
	assert.Equal(t, "fail", want["quirks-mode"])

	v := newViewer(t)

	// The index lists every case, with compare's verdict.
	var idx struct {
		Rows  []indexRow `json:"rows"`
		Shown string     `json:"shown"`
		Page  string     `json:"page"`
	}
	index := filepath.Join(htmlDir, "index.html")
	v.eval(t, index, readIndex, &idx)
	got := map[string]string{}
	for _, r := range idx.Rows {
		got[r.ID] = r.Verdict
	}
	assert.Equal(t, want, got)
	assert.Equal(t, fmt.Sprintf("%d of %d cases", len(want), len(want)), idx.Shown)
	v.shoot(t, "index.png")

	// Filtering by verdict and by engine happens in the page.
	var filtered struct {
		Fail    []string `json:"fail"`
		Firefox []string `json:"firefox"`
	}
	v.eval(t, index, `() => {
	  const ids = () => [...document.querySelectorAll("#cases tbody tr td.id")].map(td => td.textContent);
	  const set = (id, value) => { const s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event("change")); };
	  set("f-verdict", "fail"); const fail = ids();
	  set("f-verdict", ""); set("f-engine", "firefox"); const firefox = ids();
	  return { fail, firefox }; }`, &filtered)
	var wantFail []string
	for id, verdict := range want {
		if verdict == "fail" {
			wantFail = append(wantFail, id)
		}
	}
	assert.ElementsMatch(t, wantFail, filtered.Fail)
	assert.Contains(t, filtered.Firefox, "quirks-mode", "firefox is outvoted on quirks-mode")
	assert.NotContains(t, filtered.Firefox, "fixed-blocks")

	// The quirks-mode page: a panel per engine and the candidate, each highlighted
	// node drawn where that engine's dump puts it, the same colour in every panel.
	pages := map[string]string{}
	for _, r := range idx.Rows {
		pages[r.ID] = strings.TrimPrefix(r.Href, "file://")
	}
	page := pages["quirks-mode"]
	require.NotEmpty(t, page)
	type boxJSON struct {
		Node, Fragment int
		Status         string
		X, Y, W, H     float64
		Stroke         string
		Outlier        bool
	}
	var cp struct {
		Verdict string               `json:"verdict"`
		Panels  map[string][]boxJSON `json:"panels"`
		Shots   map[string]bool      `json:"shots"`
		Details string               `json:"details"`
		Hovered int                  `json:"hovered"`
	}
	v.eval(t, page, `() => {
	  const panels = {}, shots = {};
	  for (const p of document.querySelectorAll("section.panel")) {
	    const m = p.querySelector("svg").getScreenCTM(); // CSS px of the viewBox -> page px
	    shots[p.dataset.engine] = !!p.querySelector("img");
	    panels[p.dataset.engine] = [...p.querySelectorAll("rect.box:not(.st-ok)")].map(r => {
	      const b = r.getBoundingClientRect();
	      return { node: Number(r.dataset.node), fragment: Number(r.dataset.fragment),
	        status: [...r.classList].find(c => c.startsWith("st-")).slice(3), outlier: r.classList.contains("outlier"),
	        x: (b.x - m.e) / m.a, y: (b.y - m.f) / m.d, w: b.width / m.a, h: b.height / m.d,
	        stroke: getComputedStyle(r).stroke };
	    });
	  }
	  const first = document.querySelector("rect.box.st-failed");
	  first.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
	  return { verdict: document.getElementById("verdict").textContent, panels, shots,
	    details: document.getElementById("details").textContent,
	    hovered: document.querySelectorAll("rect.box.hover[data-node='" + first.dataset.node + "']").length };
	}`, &cp)
	v.shoot(t, "case.png")
	assert.Equal(t, "fail", cp.Verdict)
	require.Len(t, cp.Panels, 4, "chromium, firefox, webkit and the candidate")

	qd := dumps["quirks-mode"]
	var candDump *dump.Dump
	for _, l := range strings.Split(cand.String(), "\n") {
		if strings.Contains(l, `"id":"quirks-mode"`) {
			var r struct{ Dump *dump.Dump }
			require.NoError(t, json.Unmarshal([]byte(l), &r))
			candDump = r.Dump
		}
	}
	out, err := compare.NodeOutcomes(qd, candDump, dump.DefaultTolerance)
	require.NoError(t, err)
	wantStatus := map[int]string{}
	for _, n := range out.Nodes {
		if n.Status != compare.NodeOK {
			wantStatus[n.Node] = string(n.Status)
		}
	}
	require.NotEmpty(t, wantStatus)
	var sawFailed, sawOutvoted bool
	for name, boxes := range cp.Panels {
		d := qd[name]
		if name == "candidate" {
			d = candDump
		}
		gotStatus := map[int]string{}
		stroke := map[string]string{}
		for _, b := range boxes {
			gotStatus[b.Node] = b.Status
			r := d.Nodes[b.Node].Rects[b.Fragment]
			// The panel's box, scaled back to CSS px, is the dump's fragment (clipped to
			// the 800x600 viewport the panel shows).
			for _, c := range [][2]float64{{b.X, r.X}, {b.Y, r.Y}, {b.X + b.W, math.Min(r.X+r.W, 800)}, {b.Y + b.H, math.Min(r.Y+r.H, 600)}} {
				assert.InDelta(t, c[1], c[0], 0.75, "%s node %d fragment %d", name, b.Node, b.Fragment)
			}
			if s, ok := stroke[b.Status]; ok {
				assert.Equal(t, s, b.Stroke, "one colour per status")
			}
			stroke[b.Status] = b.Stroke
			sawFailed = sawFailed || b.Status == "failed"
			sawOutvoted = sawOutvoted || (b.Status == "outvoted" && name == "firefox" && b.Outlier)
		}
		// Every highlighted node with a box is drawn highlighted in every panel.
		for n, st := range wantStatus {
			if len(d.Nodes[n].Rects) > 0 {
				assert.Equal(t, st, gotStatus[n], "%s node %d", name, n)
			}
		}
		assert.Len(t, gotStatus, len(wantStatus), name)
	}
	assert.True(t, sawFailed, "the candidate's 7px is highlighted as failed")
	assert.True(t, sawOutvoted, "firefox's own panel marks it as the outlier")
	assert.Contains(t, cp.Details, "node ")
	assert.Contains(t, cp.Details, "bounding.w")
	assert.Equal(t, 4, cp.Hovered, "hover outlines the node in every panel")
	assert.False(t, cp.Shots["chromium"], "no screenshot was asked for quirks-mode: a wireframe")

	// A case with screenshots shows them.
	var shot struct {
		Imgs    int  `json:"imgs"`
		Loaded  bool `json:"loaded"`
		Aligned bool `json:"aligned"`
	}
	v.eval(t, pages["box-model"], `() => {
	  const imgs = [...document.querySelectorAll("section.panel img")];
	  // The boxes are drawn over the picture: the SVG covers exactly the image, and the
	  // viewBox fills it (no letterboxing), so a box sits on what it measured.
	  const aligned = imgs.every(i => {
	    const a = i.getBoundingClientRect(), svg = i.parentNode.querySelector("svg"), b = svg.getBoundingClientRect(), m = svg.getScreenCTM();
	    return Math.abs(a.x - b.x) < 0.5 && Math.abs(a.y - b.y) < 0.5 && Math.abs(a.width - b.width) < 0.5 && Math.abs(a.height - b.height) < 0.5 &&
	      Math.abs(m.a * 800 - a.width) < 0.5 && Math.abs(m.d * 600 - a.height) < 0.5 && Math.abs(m.e - a.x) < 0.5 && Math.abs(m.f - a.y) < 0.5;
	  });
	  return { imgs: imgs.length, aligned, loaded: imgs.every(i => i.complete && i.naturalWidth === 800 && i.naturalHeight === 600) };
	}`, &shot)
	assert.Equal(t, 4, shot.Imgs, "chromium, firefox, webkit and the candidate (chromium's dump)")
	assert.True(t, shot.Loaded, "every screenshot loads from disk at 800x600")
	assert.True(t, shot.Aligned, "the wireframe's 800x600 lies exactly on the screenshot")
	v.shoot(t, "case-screenshots.png")
}
