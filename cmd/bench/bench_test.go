package main

// Unit tests of the bench command's own pure code: the case generator, the
// percentile math, the /proc parsing, the growth check and the table. No browser, no
// oracle, nothing timed.

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestGenerateCasesDeterministic(t *testing.T) {
	a, b := generateCases(7, 200), generateCases(7, 200)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed and n gave different cases")
	}
	if !reflect.DeepEqual(generateCases(7, 50), a[:50]) {
		t.Fatal("a shorter run is not a prefix of a longer one")
	}
	if reflect.DeepEqual(generateCases(8, 50), a[:50]) {
		t.Fatal("another seed gave the same cases")
	}
	if generateCase(7, 123).HTML != a[123].HTML {
		t.Fatal("generateCase(i) differs from case i of generateCases")
	}
}

func TestGenerateCasesVaried(t *testing.T) {
	cases := generateCases(1, 500)
	kinds := map[string]int{}
	ids := map[string]bool{}
	htmls := map[string]bool{}
	scripts := 0
	for _, c := range cases {
		kinds[c.Kind]++
		if ids[c.ID] {
			t.Fatalf("duplicate id %s", c.ID)
		}
		ids[c.ID] = true
		htmls[c.HTML] = true
		if c.Script != "" {
			scripts++
		}
		if !strings.HasPrefix(c.HTML, "<!doctype html>") {
			t.Fatalf("%s: no doctype (quirks mode would vary by engine)", c.ID)
		}
	}
	for _, k := range []string{"blocks", "inline", "flex", "table", "mixed", "script"} {
		if kinds[k] == 0 {
			t.Errorf("no %s case in 500", k)
		}
	}
	if scripts != 50 {
		t.Errorf("%d script cases in 500, want 50 (1 in 10)", scripts)
	}
	if len(htmls) < 490 {
		t.Errorf("only %d distinct html of 500", len(htmls))
	}
	for _, want := range []string{"display:flex", "<table", "<span", "float:"} {
		n := 0
		for _, c := range cases {
			if strings.Contains(c.HTML, want) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no case contains %q", want)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3} // unsorted on purpose
	for _, tc := range []struct{ p, want float64 }{{50, 3}, {20, 1}, {21, 2}, {99, 5}, {100, 5}, {1, 1}} {
		if got := percentile(xs, tc.p); got != tc.want {
			t.Errorf("p%g = %g, want %g", tc.p, got, tc.want)
		}
	}
	if !reflect.DeepEqual(xs, []float64{5, 1, 4, 2, 3}) {
		t.Error("percentile sorted its input in place")
	}
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	if got := percentile(hundred, 99); got != 99 {
		t.Errorf("p99 of 1..100 = %g, want 99", got)
	}
	if got := percentile(hundred, 50); got != 50 {
		t.Errorf("p50 of 1..100 = %g, want 50", got)
	}
	if !math.IsNaN(percentile(nil, 50)) || !math.IsNaN(percentile(xs, 0)) {
		t.Error("no samples or p=0 should be NaN")
	}
}

func TestSummarize(t *testing.T) {
	l := summarize([]time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 20 * time.Millisecond})
	if l.N != 3 || l.Median != 20 || l.P99 != 30 || l.Mean != 20 {
		t.Errorf("summary %+v", l)
	}
}

func TestFillRatiosAndTable(t *testing.T) {
	engines := []string{"chromium", "webkit"}
	rows := []*wayResult{
		{Key: "a", Way: "oracle", Cases: 500, WallS: 10, CasesPerS: 50, Latency: map[string]latency{
			"chromium": {N: 500, Median: 12, P99: 40}, "webkit": {N: 500, Median: 9, P99: 30}, latencyAll: {N: 500, Median: 100, P99: 200}}},
		{Key: "b", Way: "per case", Cases: 20, WallS: 40, CasesPerS: 0.5, Extrapolated: true, Latency: map[string]latency{
			"chromium": {N: 20, Median: 1000, P99: 1200}}},
		{Key: "d-walk", Way: "bare", Cases: 500, WallS: 5, CasesPerS: 100, Latency: map[string]latency{
			"chromium": {N: 500, Median: 10, P99: 20}, "webkit": {N: 500, Median: 3, P99: 6}}},
	}
	fillRatios(rows, engines)
	if rows[0].RatioVsBaseline != 100 {
		t.Errorf("ratio %g, want 100", rows[0].RatioVsBaseline)
	}
	if rows[0].OverheadVsBare["chromium"] != 1.2 || rows[0].OverheadVsBare["webkit"] != 3 {
		t.Errorf("overhead %v", rows[0].OverheadVsBare)
	}
	if rows[1].RatioVsBaseline != 0 || rows[1].OverheadVsBare != nil || rows[2].RatioVsBaseline != 0 {
		t.Error("the baseline and bare rows got ratios against themselves")
	}
	g := goals(append(rows, &wayResult{Key: "c", OverheadVsBare: map[string]float64{"chromium": 1.5, "webkit": 2.5}}), engines)
	if len(g) != 3 || !g[0].Met || !g[1].Met || g[2].Met {
		t.Errorf("goals %+v", g)
	}

	var buf bytes.Buffer
	writeTable(&buf, rows, engines)
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header and 3 rows:\n%s", out)
	}
	for _, want := range []string{"chromium med/p99 ms", "12.0 / 40.0", "100x", "0.50*", "cr 1.20x wk 3.00x", "1000 / 1200"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Columns are aligned: "cases" starts at the same offset on every line.
	col := strings.Index(lines[0], "cases")
	for _, l := range lines[1:] {
		if l[col-2:col] != "  " {
			t.Errorf("misaligned line %q", l)
		}
	}
}

// With a fresh-document bare row, overhead is measured against it (the fastest correct
// round trip), and its goal is 1.2x; the walk row is compared like any other.
func TestOverheadIsAgainstTheFreshDocumentRow(t *testing.T) {
	engines := []string{"firefox"}
	rows := []*wayResult{
		{Key: "c", Latency: map[string]latency{"firefox": {N: 10, Median: 130}}},
		{Key: "d-walk", Latency: map[string]latency{"firefox": {N: 10, Median: 50}}},
		{Key: "d-fresh", Latency: map[string]latency{"firefox": {N: 10, Median: 100}}},
	}
	fillRatios(rows, engines)
	if x := rows[0].OverheadVsBare["firefox"]; x != 1.3 || rows[0].BareRef != "d-fresh" {
		t.Errorf("c against %q: %g, want 1.3 against d-fresh", rows[0].BareRef, x)
	}
	if x := rows[1].OverheadVsBare["firefox"]; x != 0.5 {
		t.Errorf("d-walk against d-fresh: %g, want 0.5", x)
	}
	if rows[2].OverheadVsBare != nil {
		t.Error("d-fresh got a ratio against itself")
	}
	g := goals(rows, engines)
	if len(g) != 1 || g[0].Limit != "<= 1.2" || g[0].Met {
		t.Errorf("goals %+v, want one unmet <= 1.2", g)
	}
}

func TestFmtNum(t *testing.T) {
	for x, want := range map[float64]string{1234.5: "1234", 12.345: "12.3", 1.2345: "1.23", math.NaN(): "-"} {
		if got := fmtNum(x); got != want {
			t.Errorf("fmtNum(%g) = %q, want %q", x, got, want)
		}
	}
}

func TestProcParsing(t *testing.T) {
	kib, ok := parseVmRSS(strings.NewReader("Name:\tnode\nVmPeak:\t 9 kB\nVmRSS:\t  123456 kB\nThreads: 3\n"))
	if !ok || kib != 123456 {
		t.Errorf("VmRSS %d %v", kib, ok)
	}
	if _, ok := parseVmRSS(strings.NewReader("Name:\tkthreadd\n")); ok {
		t.Error("a kernel thread has no VmRSS")
	}
}

func TestGrowthCheck(t *testing.T) {
	mk := func(cases, total, oracle int) rssSample {
		return rssSample{Cases: cases, Total: total, KiB: map[string]int{"oracle": oracle}}
	}
	flat := []rssSample{mk(0, 100, 10), mk(1000, 500, 20), mk(2000, 600, 20), mk(3000, 610, 21), mk(10000, 800, 25)}
	ref, fails := growthCheck(flat, 10000, 0.2, 0.5)
	if ref.Cases != 2000 || len(fails) != 0 {
		t.Errorf("ref %d, failures %v", ref.Cases, fails)
	}
	grow := append(flat[:4:4], mk(10000, 1000, 25))
	if _, fails := growthCheck(grow, 10000, 0.2, 0.5); len(fails) != 1 || !strings.Contains(fails[0], "total") {
		t.Errorf("failures %v", fails)
	}
	leak := append(flat[:4:4], mk(10000, 700, 40))
	if _, fails := growthCheck(leak, 10000, 0.2, 0.5); len(fails) != 1 || !strings.Contains(fails[0], "oracle") {
		t.Errorf("failures %v", fails)
	}
}

func TestSampleCases(t *testing.T) {
	cases := generateCases(1, 100)
	s := sampleCases(cases, 20)
	if len(s) != 20 || s[0].ID != cases[0].ID || s[1].ID != cases[5].ID {
		t.Errorf("sample %v", []string{s[0].ID, s[1].ID})
	}
	if len(sampleCases(cases, 500)) != 100 {
		t.Error("a sample larger than the cases should be all of them")
	}
}

func TestRunBadUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"--ways", "z"}, &out, &errb); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if code := run([]string{"--cases", "0"}, &out, &errb); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}

// --oracle-flag F (repeatable) passes a flag to the oracle, as in every command
// that starts one; --oracle-args "F...", the spelling until this release, still
// works (cli.SplitAlias, tested there) and says it is deprecated. Each run stops
// at a bad --ways, before any oracle is built or started.
func TestOracleFlagSpellings(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run([]string{"--oracle-flag=--pages=1", "--oracle-flag", "--store=off", "--ways", "z"}, &out, &errb))
	assert.NotContains(t, errb.String(), "deprecated")

	errb.Reset()
	assert.Equal(t, 2, run([]string{"--oracle-args", "--pages=1 --store=off", "--ways", "z"}, &out, &errb))
	assert.True(t, strings.HasPrefix(errb.String(), "bench: --oracle-args \"F...\" is deprecated, use --oracle-flag F, repeated\n"), errb.String())

	errb.Reset()
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errb))
	assert.Contains(t, errb.String(), "-oracle-flag")
	assert.NotContains(t, errb.String(), "-oracle-args")
}
