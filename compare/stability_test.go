package compare

// Unit tests of run comparison (UnstableGeometry, UnstableReflection, UnstableTraces)
// and of how the vote treats unstable items, on hand-built answers (no browser).

import (
	"testing"

	"github.com/layout-oracle/oracle/dump"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnstableGeometry(t *testing.T) {
	tol := dump.DefaultTolerance
	runs := func(mod func(d *dump.Dump)) []*dump.Dump {
		b := base("chromium")
		mod(b)
		return []*dump.Dump{base("chromium"), b, base("chromium")}
	}
	items, err := UnstableGeometry(runs(func(*dump.Dump) {}), tol)
	require.NoError(t, err)
	assert.Nil(t, items, "identical runs")

	items, err = UnstableGeometry(runs(func(d *dump.Dump) { d.Nodes[3].Bounding.W += 0.01 }), tol)
	require.NoError(t, err)
	assert.Nil(t, items, "within 1/60 px across runs is stable")

	items, err = UnstableGeometry(runs(func(d *dump.Dump) {
		d.Nodes[3].Bounding.W += 0.5
		d.Nodes[2].Style["display"] = "flex"
	}), tol)
	require.NoError(t, err)
	assert.Equal(t, []string{"2:style.display", "3:bounding.w"}, items)

	// The edge is the vote's: 1/60 exactly is within, a chain a~b~c with a !~ c is not.
	a, b, c := base("chromium"), base("chromium"), base("chromium")
	b.Nodes[4].Bounding.H += 0.01
	c.Nodes[4].Bounding.H += 0.02
	items, err = UnstableGeometry([]*dump.Dump{a, b, c}, tol)
	require.NoError(t, err)
	assert.Equal(t, []string{"4:bounding.h"}, items)

	items, err = UnstableGeometry(runs(func(d *dump.Dump) { d.Nodes[4].Rects = append(d.Nodes[4].Rects, d.Nodes[4].Rects[0]) }), tol)
	require.NoError(t, err)
	assert.Contains(t, items, "4:rects.count")

	items, err = UnstableGeometry(runs(func(d *dump.Dump) { d.Nodes[4].Tag = "B" }), tol)
	require.NoError(t, err)
	assert.Equal(t, []string{"shape"}, items)

	items, err = UnstableGeometry(runs(func(d *dump.Dump) { d.Overflowed = true }), tol)
	require.NoError(t, err)
	assert.Equal(t, []string{"overflowed"}, items)

	items, err = UnstableGeometry([]*dump.Dump{base("chromium")}, tol)
	require.NoError(t, err)
	assert.Nil(t, items, "one run is stable by definition")

	_, err = UnstableGeometry(runs(func(d *dump.Dump) { d.EngineVersion = "" }), tol)
	assert.Error(t, err)
}

func TestUnstableReflection(t *testing.T) {
	a := state("chromium", str("5"), `"5"`, "false")
	items, err := UnstableReflection([]*reflection.State{a, state("chromium", str("5"), ` "5" `, "false")})
	require.NoError(t, err)
	assert.Nil(t, items)

	items, err = UnstableReflection([]*reflection.State{a, state("chromium", str("5"), `"5"`, "true"),
		state("chromium", str("6"), `"5"`, "true")})
	require.NoError(t, err)
	assert.Equal(t, []string{"0:attr_value(value)", "1:idl_value(disabled)"}, items)

	b := state("chromium", str("5"), `"5"`, "false")
	b.Observations[1].IDL = "other"
	_, err = UnstableReflection([]*reflection.State{a, b})
	assert.Error(t, err)
}

func TestUnstableTraces(t *testing.T) {
	tol := trace.DefaultBufferTolerance
	x := `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":2},{"seq":2,"kind":"value","label":"c","value":3}]`
	y := `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":7},{"seq":2,"kind":"value","label":"c","value":3}]`
	z := `[{"seq":0,"kind":"value","label":"a","value":1}]`
	items, err := UnstableTraces([]*trace.Trace{mustTrace(t, "c", x), mustTrace(t, "c", x)}, tol)
	require.NoError(t, err)
	assert.Nil(t, items)

	items, err = UnstableTraces([]*trace.Trace{mustTrace(t, "c", x), mustTrace(t, "c", x), mustTrace(t, "c", y)}, tol)
	require.NoError(t, err)
	assert.Equal(t, []string{"1:record"}, items)

	items, err = UnstableTraces([]*trace.Trace{mustTrace(t, "c", x), mustTrace(t, "c", z)}, tol)
	require.NoError(t, err)
	assert.Equal(t, []string{"count"}, items)

	timed := mustTrace(t, "c", x)
	timed.TimedOut = true
	items, err = UnstableTraces([]*trace.Trace{mustTrace(t, "c", x), timed}, tol)
	require.NoError(t, err)
	assert.Equal(t, []string{"timed_out"}, items)
}

// An item unstable in one engine is neither voted (no outlier, no split) nor scored,
// and is counted apart.
func TestGeometryUnstableItemIsNoVerdict(t *testing.T) {
	o := oracle3()
	o["firefox"].Nodes[3].Bounding.W = 90 // would be outvoted
	got := base("candidate")
	got.Nodes[3].Bounding.W = 80 // would fail
	got.Nodes[2].Style["display"] = "flex"

	r := mustGeometry(t, o, got)
	require.Equal(t, Fail, r.Verdict, "without the unstable list the case fails")
	require.NotEmpty(t, r.Outliers)

	u := Unstable{"firefox": {"3:bounding.w"}, "webkit": {"2:style.display"}}
	r, err := GeometryUnstable(o, got, dump.DefaultTolerance, u)
	require.NoError(t, err)
	assert.Equal(t, Pass, r.Verdict)
	assert.Empty(t, r.Outliers)
	assert.Empty(t, r.Failures())
	assert.Empty(t, r.StyleFindings)
	assert.Empty(t, r.Causes)
	assert.Equal(t, 2, r.Votes[vote.Unstable])
	assert.Zero(t, r.Votes[vote.Majority])
	assert.Equal(t, 1, r.Layout.Unstable)
	assert.Equal(t, 1, r.Style.Unstable)
	assert.Zero(t, r.Layout.Untrusted)
	total := 5 * (itemsPerNode + len(dump.StyleProperties))
	assert.Equal(t, total-2, r.Layout.Compared+r.Style.Compared)

	// The per-node outcomes (the HTML report) list it as unstable, not outvoted.
	out, err := nodeOutcomesUnstable(o, got, dump.DefaultTolerance, u)
	require.NoError(t, err)
	assert.Equal(t, NodeUnstable, out.Nodes[3].Status)
	assert.Empty(t, out.Nodes[3].Outvoted)
	require.Len(t, out.Nodes[3].Items, 1)
	assert.Equal(t, vote.Unstable, out.Nodes[3].Items[0].Vote)
	assert.Equal(t, "90", out.Nodes[3].Items[0].Values["firefox"])
	assert.Empty(t, out.Causes)

	// An engine whose runs differ in shape makes every item unstable.
	r, err = GeometryUnstable(o, got, dump.DefaultTolerance, Unstable{"webkit": {"shape"}})
	require.NoError(t, err)
	assert.Equal(t, Untrustworthy, r.Verdict)
	assert.Equal(t, vote.Unstable, r.ShapeVote)

	// An engine not voting (dropped as a shape outlier) does not make items unstable.
	o["webkit"].Nodes[4].Tag = "B"
	r, err = GeometryUnstable(o, got, dump.DefaultTolerance, Unstable{"webkit": {"3:bounding.w"}})
	require.NoError(t, err)
	assert.Zero(t, r.Votes[vote.Unstable])
}

func TestGeometryUnstableFragmentCount(t *testing.T) {
	o := oracle3()
	o["chromium"].Nodes[4].Rects = append(o["chromium"].Nodes[4].Rects, dump.Rect{W: 5, H: 5})
	r, err := GeometryUnstable(o, base("candidate"), dump.DefaultTolerance, Unstable{"chromium": {"4:rects.count"}})
	require.NoError(t, err)
	assert.Equal(t, Pass, r.Verdict)
	assert.Empty(t, r.Outliers)
	assert.Equal(t, 1, r.Layout.Unstable)
}

func TestReflectionUnstableFieldIsNoVerdict(t *testing.T) {
	oracle := map[string]*reflection.State{
		"chromium": state("chromium", str("5"), `"5"`, "false"),
		"firefox":  state("firefox", str("5"), `"5"`, "true"),
		"webkit":   state("webkit", str("5"), `"5"`, "false"),
	}
	got := state("candidate", str("5"), `"5"`, "true")
	r, err := reflectionVote(oracle, got)
	require.NoError(t, err)
	require.Equal(t, Fail, r.Verdict)

	r, err = ReflectionUnstable(oracle, got, Unstable{"firefox": {"1:idl_value(disabled)"}})
	require.NoError(t, err)
	assert.Equal(t, Pass, r.Verdict)
	assert.Empty(t, r.Outliers)
	assert.Empty(t, r.ReflectionFindings)
	assert.Equal(t, &Axis{Compared: 3, Unstable: 1, Pass: true}, r.Reflection)
	assert.Equal(t, map[vote.Kind]int{vote.Unanimous: 3, vote.Unstable: 1}, r.Votes)

	r, err = ReflectionUnstable(oracle, got, Unstable{"webkit": {"*"}})
	require.NoError(t, err)
	assert.Equal(t, Untrustworthy, r.Verdict)
}

func TestTraceVoteMarkUnstable(t *testing.T) {
	x := `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":2}]`
	y := `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":3}]`
	traces := map[string]*trace.Trace{"chromium": mustTrace(t, "c", x), "firefox": mustTrace(t, "f", y), "webkit": mustTrace(t, "w", x)}
	v := Traces(traces, trace.DefaultBufferTolerance)
	require.Equal(t, map[string][]int{"firefox": {1}}, v.Outliers())

	v.markUnstable(Unstable{"firefox": {"1:record"}})
	assert.Empty(t, v.Outliers())
	assert.Empty(t, v.Splits(), "an unstable record is not a split")
	assert.Equal(t, vote.Unstable, v.Records[1].Kind)
	assert.Equal(t, vote.Unanimous, v.Records[0].Kind)

	v = Traces(traces, trace.DefaultBufferTolerance)
	v.markUnstable(Unstable{"webkit": {"count"}})
	assert.Equal(t, vote.Unstable, v.Whole.Kind)
	assert.Equal(t, vote.Unstable, v.Records[0].Kind)
}
