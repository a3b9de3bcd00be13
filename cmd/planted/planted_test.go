package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/testutil"
)

// buildBinaries builds the oracle, triage, bench and this command into dir.
func buildBinaries(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("go", "build", "-o", dir+"/", "../oracle", "../triage", "../bench", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// The harness against the real engines, small: 30 generated cases, two CSS
// defects and the crash, three reductions. Each planted defect must own a top
// entry whose reduced case reproduced, and the crash must have an entry.
func TestPlantedDefectsAreFound(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	buildBinaries(t, dir)
	corpus := filepath.Join(dir, "gen30.ndjson")
	gen, err := exec.Command(filepath.Join(dir, "bench"), "--emit-cases", "--cases", "30").Output()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(corpus, gen, 0o644))
	ds, err := pickDefects("p-tall,cell-padding,crash")
	require.NoError(t, err)
	var log bytes.Buffer
	cfg := benchConfig{
		corpus: corpus, out: filepath.Join(dir, "out"), engine: "chromium", defects: ds,
		oracleBin: filepath.Join(dir, "oracle"), triageBin: filepath.Join(dir, "triage"), plantedBin: filepath.Join(dir, "planted"),
		reduce: 3, top: 8, parallel: 2, log: &log,
		triageFlags: []string{"--oracle-flag=--store=off", "--oracle-flag=--pages=1", "--parallel=2", "--reduce-timeout=40s"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res, err := runBench(ctx, cfg)
	var table bytes.Buffer
	if res != nil {
		printTable(&table, res, ds)
	}
	t.Logf("log:\n%s\ntable:\n%s", log.String(), table.String())
	require.NoError(t, err)
	for _, d := range ds {
		assert.Positive(t, res.Hits[d.Name], "%s changes no case of the corpus", d.Name)
	}
	assert.True(t, res.Found["p-tall"], "p-tall owns no top entry that reproduced")
	assert.True(t, res.Found["cell-padding"], "cell-padding owns no top entry that reproduced")
	assert.Positive(t, res.CrashRank, "no entry of the crash")
	assert.Equal(t, 1, res.TriageExit, "the candidate fails cases")
}

// The candidate-server protocol against the real engine: answers by id, a bad
// line gets an error line, and a case the crash matches (a reversed flex container) kills the server by
// SIGSEGV.
func TestStdioServer(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	buildBinaries(t, dir)
	cmd := exec.Command(filepath.Join(dir, "planted"), "stdio", "--defects", "p-tall,crash", "--oracle", filepath.Join(dir, "oracle"))
	cmd.Env = append(os.Environ(), "ORACLE_STORE=off")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	outPipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	_, err = in.Write([]byte(`{"id":"a","html":"<!doctype html><p>x</p>"}` + "\n" + `not json` + "\n" + `{"id":7,"html":"<!doctype html><div>y</div>"}` + "\n"))
	require.NoError(t, err)
	got := map[string]stdioAnswer{}
	sc := bufio.NewScanner(outPipe)
	sc.Buffer(nil, 64<<20)
	for len(got) < 3 && sc.Scan() {
		var a stdioAnswer
		require.NoError(t, json.Unmarshal(sc.Bytes(), &a), sc.Text())
		got[string(a.ID)] = a
	}
	require.Len(t, got, 3)
	assert.Contains(t, got["null"].Error, "bad request line")
	require.NotNil(t, got[`"a"`].Dump, got[`"a"`].Error)
	assert.Equal(t, "planted", got[`"a"`].Dump.Engine)
	b, err := json.Marshal(got[`"a"`].Dump)
	require.NoError(t, err)
	_, err = candidate.Decode(b) // the contract triage holds a candidate's dump to
	require.NoError(t, err)
	for _, n := range got[`"a"`].Dump.Nodes {
		if n.Tag == "P" {
			assert.InDelta(t, 23, n.Bounding.H, 0.01, "p-tall: one line of 23px")
		}
	}
	require.NotNil(t, got["7"].Dump, got["7"].Error)

	_, err = in.Write([]byte(`{"id":"boom","html":"<div style=\"display:flex;flex-direction:row-reverse\">z</div>"}` + "\n"))
	require.NoError(t, err)
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	ws := exit.Sys().(syscall.WaitStatus)
	assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGSEGV, "died by %v", err)
}

// The rest are unit tests of the harness's own code (no engine).

func node(i, parent int, tag string, x, y, w, h float64, style dump.Style) dump.Node {
	r := dump.Rect{X: x, Y: y, W: w, H: h}
	return dump.Node{Index: i, Parent: parent, Tag: tag, Bounding: r, Rects: []dump.Rect{r}, Style: style}
}

func TestDiffersOnTheSignature(t *testing.T) {
	base := &dump.Dump{Nodes: []dump.Node{
		node(0, -1, "HTML", 0, 0, 800, 100, dump.Style{"padding-top": "0px"}),
		node(1, 0, "P", 0, 16, 800, 18, dump.Style{"padding-top": "0px", "margin-top": "16px", "display": "block"}),
		node(2, 0, "TD", 0, 40, 50, 20, dump.Style{"padding-top": "1px", "padding-left": "1px"}),
	}}
	taller := &dump.Dump{Nodes: []dump.Node{base.Nodes[0], node(1, 0, "P", 0, 16, 800, 21, base.Nodes[1].Style), base.Nodes[2]}}
	assert.True(t, differs(base, taller, []string{"P"}, []string{"bounding.h"}))
	assert.False(t, differs(base, taller, []string{"P"}, []string{"bounding.w"}))
	assert.False(t, differs(base, taller, []string{"TD"}, nil), "another tag")
	assert.True(t, differs(base, taller, nil, nil))

	padded := &dump.Dump{Nodes: []dump.Node{base.Nodes[0], base.Nodes[1], node(2, 0, "TD", 0, 40, 50, 20, dump.Style{"padding-top": "3px", "padding-left": "1px"})}}
	assert.True(t, differs(base, padded, []string{"TD", "TH"}, []string{"padding"}), "folded sides")
	assert.False(t, differs(base, padded, []string{"TD"}, []string{"margin"}))

	moved := &dump.Dump{Nodes: []dump.Node{base.Nodes[0], node(1, 0, "P", 0, 12, 800, 18, base.Nodes[1].Style), base.Nodes[2]}}
	assert.True(t, differs(base, moved, []string{"P"}, []string{"offset.y"}))
	assert.False(t, differs(base, moved, []string{"P"}, []string{"offset.x", "display=block"}))

	within := &dump.Dump{Nodes: []dump.Node{base.Nodes[0], node(1, 0, "P", 0, 16, 800, 18.001, base.Nodes[1].Style), base.Nodes[2]}}
	assert.False(t, differs(base, within, nil, []string{"bounding.h"}), "within the tolerance")
	assert.True(t, differs(base, &dump.Dump{Nodes: base.Nodes[:2]}, []string{"P"}, []string{"bounding.h"}), "node counts differ")
}

func TestEntryReadsBothShapes(t *testing.T) {
	var es []Entry
	require.NoError(t, json.Unmarshal([]byte(`[
	{"signature":{"kind":"layout","tag":"P","properties":["bounding.h"],"sign":"+"},"cases":["a","b"],"reduced":{"html":"<p>","reproduced":true}},
	{"signature":{"kind":"style","tag":["TD","TH"],"properties":["padding"]},"variants":[],"cases":["c"],"reduced":null,"agreeing_engines":["chromium"]},
	{"signature":{"kind":"error","error":"exit"},"cases":["d"]},
	{"signature":{"kind":"layout","tag":"SPAN","tags":["SPAN","I"],"properties":["bounding.h"],"sign":"+"},"cases":["e"]}]`), &es))
	assert.Equal(t, []string{"P"}, es[0].Tags())
	assert.Equal(t, "layout P bounding.h +", es[0].Label())
	assert.Equal(t, []string{"TD", "TH"}, es[1].Tags())
	assert.Equal(t, "style TD,TH padding", es[1].Label())
	assert.Nil(t, es[2].Tags())
	assert.Equal(t, "candidate error: exit", es[2].Label())
	// triage's entries: tag is the first of tags, and every tag is the entry's.
	assert.Equal(t, []string{"SPAN", "I"}, es[3].Tags())
	assert.Equal(t, "layout SPAN,I bounding.h +", es[3].Label())
}

func TestByCasesAndScore(t *testing.T) {
	ds, err := pickDefects("p-tall,cell-padding,crash")
	require.NoError(t, err)
	base := &dump.Dump{Nodes: []dump.Node{
		node(0, -1, "P", 0, 0, 800, 18, dump.Style{}),
		node(1, -1, "TD", 0, 20, 50, 20, dump.Style{"padding-top": "1px"}),
	}}
	taller := &dump.Dump{Nodes: []dump.Node{node(0, -1, "P", 0, 0, 800, 21, dump.Style{}), base.Nodes[1]}}
	padded := &dump.Dump{Nodes: []dump.Node{base.Nodes[0], node(1, -1, "TD", 0, 20, 50, 20, dump.Style{"padding-top": "3px"})}}
	runs := func(p, c *dump.Dump, crashes ...string) *caseRuns {
		return &caseRuns{base: base, alone: map[string]*dump.Dump{"p-tall": p, "cell-padding": c}, crashes: crashes}
	}
	truth := map[string]*caseRuns{"a": runs(taller, base), "b": runs(taller, padded), "c": runs(base, base), "d": runs(base, base, "crash")}
	tall := []string{"bounding.h"}
	assert.Equal(t, []string{"p-tall"}, byCases(Entry{Cases: []string{"a", "b", "c"}}, ds, truth, nil, false), "2 of 3")
	assert.Nil(t, byCases(Entry{Cases: []string{"a", "c"}}, ds, truth, nil, false), "half is not most")
	assert.Equal(t, []string{"p-tall", "cell-padding"}, byCases(Entry{Cases: []string{"b"}}, ds, truth, nil, false), "every defect of most cases")
	var onP Entry
	require.NoError(t, json.Unmarshal([]byte(`{"signature":{"kind":"layout","tag":"P"},"cases":["b"]}`), &onP))
	assert.Equal(t, []string{"p-tall"}, byCases(onP, ds, truth, tall, false), "on the signature only")
	assert.Nil(t, byCases(onP, ds, truth, []string{"padding"}, false))
	assert.Equal(t, []string{"crash"}, byCases(Entry{Cases: []string{"d"}}, ds, truth, nil, true), "an error entry: the crash alone")

	res := &Result{Top: 2, Entries: []Explained{
		{Rank: 1, Defects: []string{"p-tall"}, Reduced: true, Reproduced: true},
		{Rank: 2, Defects: nil, Reduced: true, Reproduced: true},
		{Rank: 3, Defects: []string{"cell-padding"}, Reduced: true, Reproduced: true},
		{Rank: 4, Defects: []string{"crash"}},
		{Rank: 5, Inherited: true, Agreeing: []string{"chromium"}},
	}}
	score(res, ds)
	assert.Equal(t, 1, res.Inherited, "the unplanted engine's own difference")
	assert.True(t, res.Found["p-tall"])
	assert.False(t, res.Found["cell-padding"], "rank 3 is below the top 2")
	assert.Equal(t, 1, res.Noise)
	assert.Equal(t, 4, res.CrashRank)
	assert.Equal(t, 3, res.BestRank["cell-padding"])
	assert.Equal(t, 3, res.Reduced)
	assert.Equal(t, 3, res.Reproduced)

	_, err = pickDefects("p-tall,nope")
	assert.ErrorContains(t, err, `no planted defect "nope"`)
	assert.True(t, strings.Contains(plantScript(ds), "@layer planted"))
}
