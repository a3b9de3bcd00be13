package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
)

// Unit tests of our own scoring rules on hand-built dumps (no engine is faked: the
// dumps are inputs to pure functions).

func TestStyleEqualLengths(t *testing.T) {
	tol := dump.DefaultTolerance
	for _, c := range []struct {
		a, b string
		eq   bool
	}{
		{"64.0156px", "64px", true},          // Blink's 1/64 px in a resolved length
		{"64.0167px", "64px", false},         // just past 1/60
		{"-0.01px", "0px", true},             // sign kept, within tolerance
		{"0px 2.5px", "0.01px 2.51px", true}, // a list of lengths, each within
		{"0px 2.5px", "0px 2.6px", false},
		{"0px, 2.5px", "0px 2.5px", false}, // the text between lengths is exact
		{"calc(10px + 5%)", "calc(10.01px + 5%)", true},
		{"calc(10px + 5%)", "calc(10px + 6%)", false}, // only px lengths are numeric
		{"1px 2px", "1px", false},
		{"10px", "10em", false},
		{"auto", "0px", false},
		{"a10px", "a10.01px", false}, // not a length: inside an identifier
		{"1e2px", "100.01px", true},
		{"1e400px", "1e400px ", false},
		{"1e400px", "1e400.0px", false}, // infinities are never within
		{"block", "flow-root", false},
	} {
		assert.Equal(t, c.eq, StyleEqual(c.a, c.b, tol), "%q vs %q", c.a, c.b)
		assert.Equal(t, c.eq, StyleEqual(c.b, c.a, tol), "%q vs %q", c.b, c.a)
	}
}

// threeEngines is base() from three engines.
func threeEngines() map[string]*dump.Dump {
	return map[string]*dump.Dump{"chromium": base("chromium"), "firefox": base("firefox"), "webkit": base("webkit")}
}

func TestStyleLengthWithinToleranceIsNotAFailure(t *testing.T) {
	oracle := threeEngines()
	for _, d := range oracle {
		d.Nodes[2].Style["width"] = "200px"
	}
	got := base("candidate")
	got.Nodes[2].Style["width"] = "200.0156px"
	r, err := Geometry(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Equal(t, Pass, r.Verdict, r.Reason)
	assert.Empty(t, r.StyleFindings)

	got.Nodes[2].Style["width"] = "200.5px"
	r, err = Geometry(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Equal(t, Fail, r.Verdict)
	require.Len(t, r.StyleFindings, 1)
	assert.Equal(t, "style.width", r.StyleFindings[0].Property)
}

func TestAxesScoreOnlyTheirItems(t *testing.T) {
	oracle := threeEngines()
	styleBad := base("candidate")
	styleBad.Nodes[3].Style["display"] = "inline"
	layoutBad := base("candidate")
	layoutBad.Nodes[3].Bounding.H += 3
	layoutBad.Nodes[3].Rects[0].H += 3

	score := func(got *dump.Dump, axes Axes) *Report {
		r, err := GeometryWith(oracle, got, Options{Tolerance: dump.DefaultTolerance, Axes: axes})
		require.NoError(t, err)
		return r
	}
	nodes := 5
	// The style failure: counted on all and style, invisible on layout.
	r := score(styleBad, axesAll)
	assert.Equal(t, Fail, r.Verdict)
	assert.Empty(t, r.Axes)
	r = score(styleBad, axesStyle)
	assert.Equal(t, Fail, r.Verdict)
	assert.Equal(t, axesStyle, r.Axes)
	assert.Zero(t, r.Layout.Compared)
	assert.Equal(t, nodes*len(dump.StyleProperties), r.Style.Compared)
	r = score(styleBad, axesLayout)
	assert.Equal(t, Pass, r.Verdict, r.Reason)
	assert.Equal(t, axesLayout, r.Axes)
	assert.Zero(t, r.Style.Compared)
	assert.Equal(t, nodes*itemsPerNode, r.Layout.Compared)
	assert.Empty(t, r.StyleFindings)
	assert.Empty(t, r.Causes)

	// The layout failure: counted on all and layout, invisible on style.
	r = score(layoutBad, axesLayout)
	assert.Equal(t, Fail, r.Verdict)
	require.NotEmpty(t, r.Causes)
	assert.Equal(t, "P", r.Causes[0].Tag)
	r = score(layoutBad, axesStyle)
	assert.Equal(t, Pass, r.Verdict, r.Reason)
	assert.Empty(t, r.Findings)
	assert.Empty(t, r.Causes)
	assert.Zero(t, r.SumAbsDelta)

	// NodeOutcomes keeps only the axis's items.
	out, err := NodeOutcomesWith(oracle, styleBad, Options{Tolerance: dump.DefaultTolerance, Axes: axesStyle})
	require.NoError(t, err)
	require.Len(t, out.Nodes[3].Items, 1)
	assert.Equal(t, "style.display", out.Nodes[3].Items[0].Property)
	out, err = NodeOutcomesWith(oracle, styleBad, Options{Tolerance: dump.DefaultTolerance, Axes: axesLayout})
	require.NoError(t, err)
	assert.Empty(t, out.Nodes[3].Items)

	_, err = GeometryWith(oracle, styleBad, Options{Tolerance: dump.DefaultTolerance, Axes: "geometry"})
	assert.ErrorContains(t, err, `axes "geometry": want layout, style or all`)
}

func TestParseAxes(t *testing.T) {
	for in, want := range map[string]Axes{"": axesAll, "all": axesAll, "layout": axesLayout, "style": axesStyle} {
		a, err := ParseAxes(in)
		require.NoError(t, err)
		assert.Equal(t, want, a)
	}
	_, err := ParseAxes("Layout")
	assert.Error(t, err)
}

func TestCandidateErrorWithoutGroundTruthIsUntrustworthy(t *testing.T) {
	vote := func(oracle map[string]*dump.Dump) *Report {
		r, err := Geometry(oracle, nil, dump.DefaultTolerance)
		require.NoError(t, err)
		return r
	}
	// The engines agree: the candidate's error is a failure.
	r := CandidateError(vote(threeEngines()), "exit status 1")
	assert.Equal(t, Fail, r.Verdict)
	assert.Equal(t, "candidate error: exit status 1", r.Reason)

	// One engine: its dump is the reference.
	r = CandidateError(vote(map[string]*dump.Dump{"webkit": base("webkit")}), "timeout")
	assert.Equal(t, Fail, r.Verdict)

	// Every engine errored: no dumps.
	r = CandidateError(vote(map[string]*dump.Dump{}), "timeout")
	assert.Equal(t, Untrustworthy, r.Verdict)
	assert.Equal(t, "candidate error: timeout; no ground truth: no oracle dumps", r.Reason)

	// No majority shape.
	split := threeEngines()
	split["firefox"].Nodes[4].Tag = "B"
	split["webkit"].Nodes[4].Tag = "I"
	r = CandidateError(vote(split), "timeout")
	assert.Equal(t, Untrustworthy, r.Verdict)
	assert.Contains(t, r.Reason, "disagree on shape")

	// Every item split: sizes, offsets, fragment counts and style three ways apart.
	allSplit := threeEngines()
	k := 0.0
	for _, d := range allSplit {
		k++
		for i := range d.Nodes {
			n := &d.Nodes[i]
			n.Bounding.W, n.Bounding.H = k*10+float64(i), k*10+float64(i)
			n.Bounding.X, n.Bounding.Y = k*k*3*float64(i+1), k*k*3*float64(i+1) // offsets 3, 12, 27 px
			n.Rects = nil
			for range int(k) { // 1, 2 and 3 fragments: rects.count splits too
				n.Rects = append(n.Rects, n.Bounding)
			}
			for p := range n.Style {
				n.Style[p] = d.Engine
			}
		}
	}
	gt := vote(allSplit)
	assert.False(t, gt.hasGroundTruth())
	r = CandidateError(gt, "crash")
	assert.Equal(t, Untrustworthy, r.Verdict)

	// Overflow: the case is discarded whatever the candidate did.
	over := threeEngines()
	for _, d := range over {
		d.Overflowed = true
	}
	r = CandidateError(vote(over), "crash")
	assert.Equal(t, Discarded, r.Verdict)
}
