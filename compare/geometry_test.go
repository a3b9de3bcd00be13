package compare

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/vote"
)

// spec is one hand-built node: one fragment equal to its bounding box.
type spec struct {
	parent     int
	tag        string
	x, y, w, h float64
}

func build(engine string, nodes ...spec) *dump.Dump {
	d := &dump.Dump{Engine: engine, EngineVersion: "1.0", Viewport: dump.Viewport}
	for i, s := range nodes {
		depth := 0
		if s.parent >= 0 {
			depth = d.Nodes[s.parent].Depth + 1
		}
		style := dump.Style{}
		for _, p := range dump.StyleProperties {
			style[p] = "0px"
		}
		style["display"] = "block"
		r := dump.Rect{X: s.x, Y: s.y, W: s.w, H: s.h}
		d.Nodes = append(d.Nodes, dump.Node{Index: i, Parent: s.parent, Tag: s.tag, Depth: depth,
			Bounding: r, Rects: []dump.Rect{r}, Style: style})
	}
	return d
}

// base is HTML > BODY > DIV > P > SPAN, each nested inside the last.
func base(engine string) *dump.Dump {
	return build(engine,
		spec{-1, "HTML", 0, 0, 800, 100},
		spec{0, "BODY", 0, 0, 800, 100},
		spec{1, "DIV", 10, 10, 200, 50},
		spec{2, "P", 20, 15, 100, 20},
		spec{3, "SPAN", 25, 18, 30, 10},
	)
}

// per node: bounding w,h + rects.count + rects[0] w,h + offset x,y.
const itemsPerNode = 7

// shift moves node i and all its descendants by dx, dy, as a wrong offset would.
func shift(d *dump.Dump, i int, dx, dy float64) {
	inside := map[int]bool{i: true}
	for k := range d.Nodes {
		if k != i && !inside[d.Nodes[k].Parent] {
			continue
		}
		inside[k] = true
		n := &d.Nodes[k]
		n.Bounding.X += dx
		n.Bounding.Y += dy
		for j := range n.Rects {
			n.Rects[j].X += dx
			n.Rects[j].Y += dy
		}
	}
}

func mustDumps(t *testing.T, want, got *dump.Dump) *Report {
	t.Helper()
	r, err := Dumps(want, got, dump.DefaultTolerance)
	require.NoError(t, err)
	return r
}

func TestIdenticalPasses(t *testing.T) {
	r := mustDumps(t, base("chromium"), base("candidate"))
	assert.Equal(t, Pass, r.Verdict)
	assert.Equal(t, Axis{Compared: 5 * itemsPerNode, Pass: true}, r.Layout)
	assert.Equal(t, Axis{Compared: 5 * len(dump.StyleProperties), Pass: true}, r.Style)
	assert.Empty(t, r.Findings)
	assert.Zero(t, r.SumAbsDelta)
}

func TestShapeDivergenceStopsGeometry(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*dump.Dump)
		want   dump.Divergence
	}{
		{"tag", func(d *dump.Dump) { d.Nodes[3].Tag = "DIV" },
			dump.Divergence{Index: 3, NodeDelta: 0, Want: "P depth 3 parent 2", Got: "DIV depth 3 parent 2"}},
		{"extra node", func(d *dump.Dump) {
			d.Nodes = append(d.Nodes, dump.Node{Index: 5, Parent: 1, Tag: "B", Depth: 2, Rects: []dump.Rect{}})
		}, dump.Divergence{Index: 5, NodeDelta: 1, Want: "end", Got: "B depth 2 parent 1"}},
		{"missing node", func(d *dump.Dump) { d.Nodes = d.Nodes[:2] },
			dump.Divergence{Index: 2, NodeDelta: -3, Want: "DIV depth 2 parent 1", Got: "end"}},
		{"reparented", func(d *dump.Dump) { d.Nodes[4].Parent, d.Nodes[4].Depth = 2, 3 },
			dump.Divergence{Index: 4, NodeDelta: 0, Want: "SPAN depth 4 parent 3", Got: "SPAN depth 3 parent 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := base("candidate")
			got.Nodes[2].Bounding.W = 999 // a geometry difference that must not be reported
			tt.mutate(got)
			r := mustDumps(t, base("chromium"), got)
			assert.Equal(t, Fail, r.Verdict)
			require.NotNil(t, r.Shape)
			assert.Equal(t, tt.want, *r.Shape)
			assert.Zero(t, r.Layout.Compared)
			assert.Zero(t, r.Style.Compared)
			assert.Empty(t, r.Findings)
			assert.Contains(t, r.Reason, "parse divergence")
		})
	}
}

func TestToleranceAndSign(t *testing.T) {
	tests := []struct {
		name    string
		delta   float64
		within  bool
		verdict Verdict
	}{
		{"under 1/60 wider", 0.016, true, Pass},
		{"under 1/60 narrower", -0.016, true, Pass},
		{"exactly one app unit", 1.0 / 60, true, Pass},
		{"over 1/60 wider", 0.017, false, Fail},
		{"over 1/60 narrower", -0.5, false, Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := base("candidate")
			// Width at 100 plus one app unit is where float rounding bites (see dump.slack).
			got.Nodes[3].Bounding.W += tt.delta
			r := mustDumps(t, base("chromium"), got)
			assert.Equal(t, tt.verdict, r.Verdict)
			require.Len(t, r.Findings, 1)
			f := r.Findings[0]
			assert.Equal(t, "bounding.w", f.Property)
			assert.Equal(t, 3, f.Node)
			assert.Equal(t, "P", f.Tag)
			assert.Equal(t, tt.within, f.Within)
			assert.InDelta(t, tt.delta, f.Delta, 1e-12, "delta is got-want with its sign")
			assert.InDelta(t, abs(tt.delta), r.MaxAbsDelta, 1e-12)
			assert.Equal(t, !tt.within, r.Layout.Failed == 1)
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestCustomTolerance(t *testing.T) {
	got := base("candidate")
	got.Nodes[2].Bounding.H += 0.4
	r, err := Dumps(base("chromium"), got, 0.5)
	require.NoError(t, err)
	assert.Equal(t, Pass, r.Verdict)
	r, err = Dumps(base("chromium"), got, 0)
	require.NoError(t, err)
	assert.Equal(t, Fail, r.Verdict)
	_, err = Dumps(base("chromium"), got, -1)
	assert.ErrorContains(t, err, "tolerance")
}

// Moving the DIV moves its P and SPAN too, in absolute terms; only the DIV's own
// offset is wrong, so only it is reported.
func TestWrongOffsetReportedOnce(t *testing.T) {
	got := base("candidate")
	shift(got, 2, 0, 3)
	r := mustDumps(t, base("chromium"), got)
	want := []Finding{{Node: 2, Tag: "DIV", Property: "offset.y", Want: 10, Got: 13, Delta: 3, Within: false}}
	if diff := cmp.Diff(want, r.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	assert.Equal(t, 1, r.Layout.Failed)
	assert.Equal(t, Fail, r.Verdict)
}

// A boxless node (display:contents) between two boxed ones: its child's offset is
// taken against the nearest boxed ancestor, so shifting that ancestor is still one
// finding, not two.
func TestOffsetSkipsBoxlessAncestor(t *testing.T) {
	mk := func(engine string) *dump.Dump {
		d := base(engine)
		d.Nodes[3].Rects = []dump.Rect{}
		d.Nodes[3].Bounding = dump.Rect{}
		return d
	}
	got := mk("candidate")
	shift(got, 2, 7, 0)
	got.Nodes[3].Bounding = dump.Rect{} // still boxless after the shift
	got.Nodes[3].Rects = []dump.Rect{}
	r := mustDumps(t, mk("chromium"), got)
	want := []Finding{{Node: 2, Tag: "DIV", Property: "offset.x", Want: 10, Got: 17, Delta: 7}}
	if diff := cmp.Diff(want, r.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestFragmentCountMismatch(t *testing.T) {
	got := base("candidate")
	got.Nodes[4].Rects = append(got.Nodes[4].Rects, dump.Rect{X: 0, Y: 30, W: 5, H: 10})
	got.Nodes[4].Rects[0].W = 77 // not paired up: counts differ
	r := mustDumps(t, base("chromium"), got)
	want := []Finding{{Node: 4, Tag: "SPAN", Property: "rects.count", Want: 1, Got: 2, Delta: 1}}
	if diff := cmp.Diff(want, r.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	assert.Equal(t, Fail, r.Verdict)
	assert.Equal(t, 5*itemsPerNode-2, r.Layout.Compared, "node 4's fragment w,h are not compared")
	assert.Zero(t, r.SumAbsDelta, "a count is not pixels")
}

func TestFragmentSizesPairwise(t *testing.T) {
	want, got := base("chromium"), base("candidate")
	two := []dump.Rect{{X: 25, Y: 18, W: 30, H: 10}, {X: 0, Y: 28, W: 12, H: 10}}
	want.Nodes[4].Rects = append([]dump.Rect(nil), two...)
	got.Nodes[4].Rects = append([]dump.Rect(nil), two...)
	got.Nodes[4].Rects[1].H = 9
	r := mustDumps(t, want, got)
	want2 := []Finding{{Node: 4, Tag: "SPAN", Property: "rects[1].h", Want: 10, Got: 9, Delta: -1}}
	if diff := cmp.Diff(want2, r.Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestStyleOnItsOwnAxis(t *testing.T) {
	got := base("candidate")
	got.Nodes[3].Style["display"] = "inline"
	r := mustDumps(t, base("chromium"), got)
	assert.Equal(t, Fail, r.Verdict)
	assert.True(t, r.Layout.Pass)
	assert.Zero(t, r.Layout.Failed)
	assert.False(t, r.Style.Pass)
	assert.Equal(t, 1, r.Style.Failed)
	assert.Empty(t, r.Findings)
	assert.Equal(t, []StyleFinding{{Node: 3, Tag: "P", Property: "style.display", Want: "block", Got: "inline"}},
		r.StyleFindings)
}

func TestOverflowedDiscarded(t *testing.T) {
	for _, name := range []string{"want", "got"} {
		t.Run(name, func(t *testing.T) {
			want, got := base("chromium"), base("candidate")
			got.Nodes[2].Bounding.W = 1 // would fail if scored
			if name == "want" {
				want.Overflowed = true
			} else {
				got.Overflowed = true
			}
			r := mustDumps(t, want, got)
			assert.Equal(t, Discarded, r.Verdict)
			assert.Contains(t, r.Reason, "overflowed")
			assert.Zero(t, r.Layout.Compared)
			assert.Empty(t, r.Findings)
		})
	}
}

func TestRefused(t *testing.T) {
	got := base("candidate")
	got.Viewport = dump.Size{Width: 1024, Height: 768}
	_, err := Dumps(base("chromium"), got, dump.DefaultTolerance)
	assert.ErrorContains(t, err, "viewport mismatch")

	got = base("candidate")
	got.EngineVersion = ""
	_, err = Dumps(base("chromium"), got, dump.DefaultTolerance)
	assert.ErrorContains(t, err, "engine_version")

	want := base("chromium")
	want.EngineVersion = ""
	_, err = Geometry(map[string]*dump.Dump{"chromium": want}, base("candidate"), dump.DefaultTolerance)
	assert.ErrorContains(t, err, "chromium")
	assert.ErrorContains(t, err, "engine_version")

	_, err = Geometry(map[string]*dump.Dump{"chromium": base("chromium"), "firefox": nil}, base("c"), dump.DefaultTolerance)
	assert.ErrorContains(t, err, "firefox: dump is null")
}

func oracle3() map[string]*dump.Dump {
	return map[string]*dump.Dump{"chromium": base("chromium"), "firefox": base("firefox"), "webkit": base("webkit")}
}

func mustGeometry(t *testing.T, oracle map[string]*dump.Dump, got *dump.Dump) *Report {
	t.Helper()
	r, err := Geometry(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	return r
}

func TestVoteUnanimous(t *testing.T) {
	o := oracle3()
	o["firefox"].Nodes[2].Bounding.W += 0.01 // quantization noise
	r := mustGeometry(t, o, base("candidate"))
	assert.Equal(t, Pass, r.Verdict)
	assert.Equal(t, []string{"chromium", "firefox", "webkit"}, r.Engines)
	assert.Equal(t, vote.Unanimous, r.ShapeVote)
	total := 5 * (itemsPerNode + len(dump.StyleProperties))
	assert.Equal(t, map[vote.Kind]int{vote.Unanimous: total}, r.Votes)
	assert.Empty(t, r.Outliers)
}

func TestVoteMajorityNamesOutlier(t *testing.T) {
	o := oracle3()
	o["firefox"].Nodes[3].Bounding.W = 90
	o["firefox"].Nodes[1].Style["display"] = "flex"

	r := mustGeometry(t, o, base("candidate")) // the candidate sides with the majority
	assert.Equal(t, Pass, r.Verdict)
	assert.Equal(t, []Outlier{
		{Engine: "firefox", Property: "bounding.w", Count: 1},
		{Engine: "firefox", Property: "style.display", Count: 1},
	}, r.Outliers)
	assert.Equal(t, 2, r.Votes[vote.Majority])

	got := base("candidate") // the candidate sides with the outlier
	got.Nodes[3].Bounding.W = 90
	r = mustGeometry(t, o, got)
	assert.Equal(t, Fail, r.Verdict)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, Finding{Node: 3, Tag: "P", Property: "bounding.w", Want: 100, Got: 90, Delta: -10}, r.Findings[0])
}

func TestVoteSplitIsUntrusted(t *testing.T) {
	o := oracle3()
	o["chromium"].Nodes[3].Bounding.W = 100
	o["firefox"].Nodes[3].Bounding.W = 101
	o["webkit"].Nodes[3].Bounding.W = 102
	got := base("candidate")
	got.Nodes[3].Bounding.W = 250 // differs from everyone, but there is no truth to fail it on
	r := mustGeometry(t, o, got)
	assert.Equal(t, Pass, r.Verdict)
	assert.Equal(t, 1, r.Layout.Untrusted)
	assert.Equal(t, 5*itemsPerNode-1, r.Layout.Compared)
	assert.Empty(t, r.Findings)
	assert.Equal(t, 1, r.Votes[vote.Split])
	assert.Empty(t, r.Outliers)
}

// a~b and b~c but not a~c is Split too (vote.Vote's rule), not a majority.
func TestVoteNonTransitiveChainIsUntrusted(t *testing.T) {
	o := oracle3()
	o["chromium"].Nodes[2].Bounding.H = 50
	o["firefox"].Nodes[2].Bounding.H = 50.015
	o["webkit"].Nodes[2].Bounding.H = 50.03
	r := mustGeometry(t, o, base("candidate"))
	assert.Equal(t, 1, r.Layout.Untrusted)
	assert.Equal(t, 1, r.Votes[vote.Split])
}

func TestVoteTwoEngines(t *testing.T) {
	o := map[string]*dump.Dump{"chromium": base("chromium"), "webkit": base("webkit")}
	got := base("candidate")
	got.Nodes[2].Bounding.W = 300
	r := mustGeometry(t, o, got)
	assert.Equal(t, Fail, r.Verdict, "two engines that agree are a reference")
	assert.Equal(t, map[vote.Kind]int{vote.Agree: 5 * (itemsPerNode + len(dump.StyleProperties))}, r.Votes)

	o["webkit"].Nodes[2].Bounding.W = 150
	r = mustGeometry(t, o, got)
	assert.Equal(t, Pass, r.Verdict, "two engines that disagree are no reference")
	assert.Equal(t, 1, r.Layout.Untrusted)
	assert.Equal(t, 1, r.Votes[vote.Disagree])
	assert.Empty(t, r.Outliers, "two engines name no outlier")
}

func TestVoteShape(t *testing.T) {
	o := oracle3()
	o["webkit"].Nodes[4].Tag = "B"
	r := mustGeometry(t, o, base("candidate"))
	assert.Equal(t, Pass, r.Verdict)
	assert.Equal(t, vote.Majority, r.ShapeVote)
	assert.Equal(t, []string{"chromium", "firefox"}, r.Engines, "the shape outlier does not vote")
	assert.Equal(t, []Outlier{{Engine: "webkit", Property: "shape", Count: 1}}, r.Outliers)

	o["firefox"].Nodes[4].Tag = "I"
	r = mustGeometry(t, o, base("candidate"))
	assert.Equal(t, Untrustworthy, r.Verdict)
	assert.Equal(t, vote.Split, r.ShapeVote)
	assert.Zero(t, r.Layout.Compared)
}

func TestVoteEveryItemSplit(t *testing.T) {
	o := map[string]*dump.Dump{"chromium": base("chromium"), "webkit": base("webkit")}
	for i := range o["webkit"].Nodes {
		n := &o["webkit"].Nodes[i]
		// Offsets compound, so move each node further than its parent.
		step := float64(i+1) * 5
		n.Bounding.W, n.Bounding.H, n.Bounding.X, n.Bounding.Y = n.Bounding.W+5, n.Bounding.H+5, n.Bounding.X+step, n.Bounding.Y+step
		n.Rects = append(n.Rects, dump.Rect{})
		for p := range n.Style {
			n.Style[p] = "x"
		}
	}
	r := mustGeometry(t, o, base("candidate"))
	assert.Equal(t, Untrustworthy, r.Verdict)
}

func TestNoOracleDumps(t *testing.T) {
	r := mustGeometry(t, map[string]*dump.Dump{}, base("candidate"))
	assert.Equal(t, Untrustworthy, r.Verdict)
	assert.Equal(t, "no oracle dumps", r.Reason)
}

func TestOracleOnly(t *testing.T) {
	o := oracle3()
	o["chromium"].Nodes[1].Bounding.H = 0
	r := mustGeometry(t, o, nil)
	assert.Equal(t, NoCandidate, r.Verdict)
	assert.Equal(t, []Outlier{{Engine: "chromium", Property: "bounding.h", Count: 1}}, r.Outliers)
	assert.Zero(t, r.Layout.Compared)
}

func TestWorst(t *testing.T) {
	r := &Report{Findings: []Finding{
		{Node: 0, Delta: 0.01, Within: true},
		{Node: 1, Delta: -2, Within: false},
		{Node: 2, Delta: 0.015, Within: true},
		{Node: 3, Delta: 5, Within: false},
	}}
	got := r.Worst(3)
	if diff := cmp.Diff([]int{3, 1, 2}, nodesOf(got)); diff != "" {
		t.Errorf("Worst order (-want +got):\n%s", diff)
	}
	assert.Equal(t, []int{1, 3}, nodesOf(r.Failures()))
}

func nodesOf(fs []Finding) []int {
	var out []int
	for _, f := range fs {
		out = append(out, f.Node)
	}
	return out
}

// The report's JSON shape is what cmd/compare --json prints; lock its field names.
func TestReportJSON(t *testing.T) {
	got := base("candidate")
	got.Nodes[2].Bounding.W += 1
	r := mustDumps(t, base("chromium"), got)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	want := []string{"causes", "engines", "findings", "layout", "max_abs_delta", "shape_vote", "style", "sum_abs_delta", "verdict"}
	if diff := cmp.Diff(want, keys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("report keys (-want +got):\n%s", diff)
	}
}
