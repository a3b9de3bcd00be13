// Package compare scores a run: for each kind of answer, the oracle engines vote per
// item (package vote, with the answer package's rule for two values) and a candidate
// is scored against the majority value, in a Report. One verb per kind:
//
//   - Geometry (docs/dump-format.md, "Comparison"): shape first (dump.Shape), then sizes
//     and relative offsets within a tolerance (dump.Within), the style subset on its
//     own axis (StyleEqual: px lengths within the tolerance, the rest exactly);
//     GeometryWith scores one axis or both (Options.Axes). Dumps is Geometry against
//     one reference dump.
//   - Reflection: attr_value and idl_value per probe, exactly (reflection.Fields).
//   - Traces: the engines' vote on their traces (trace.Compare, trace.CompareRecords);
//     no candidate trace is scored.
//
// How two answers of a kind agree (the tolerance and shape rule, the exact fields,
// the buffer tolerance) is defined with the answer, in package dump, reflect or
// trace.
package compare

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/vote"
)

// Dumps compares a candidate dump against one reference dump: Geometry with a
// single oracle engine, whose value is every item's reference.
func Dumps(want, got *dump.Dump, tol float64) (*Report, error) {
	if want == nil || got == nil {
		return nil, errors.New("compare: nil dump")
	}
	return Geometry(map[string]*dump.Dump{"want": want}, got, tol)
}

// Geometry scores a candidate's dump against the oracle engines' vote. oracle maps engine
// name to that engine's dump; got may be nil to only vote the oracle engines
// (Verdict NoCandidate, with Votes and Outliers filled in).
//
// The engines first vote on shape: a Majority drops the outlier engine from every
// later vote, and no majority makes the case Untrustworthy. Then, per node and
// property, they vote with dump.Within(a-b, tol) as agreement (StyleEqual for style,
// exact equality for fragment counts), and the candidate is scored against the Representative's
// value. Items whose vote is not Trusted are counted as Untrusted and not scored.
//
// An error means the input is refused: a dump fails dump.Validate (e.g. no
// engine_version), or the dumps' viewports differ.
func Geometry(oracle map[string]*dump.Dump, got *dump.Dump, tol float64) (*Report, error) {
	return GeometryUnstable(oracle, got, tol, nil)
}

// GeometryUnstable is Geometry with the engines' unstable items (a response's
// "unstable"): an item unstable in any voting engine is not voted (its vote is
// vote.Unstable, counted in Votes and the axis's Unstable), names no outlier, and the
// candidate is not scored on it. An engine unstable in shape or overflow (or "*")
// makes the case Untrustworthy.
func GeometryUnstable(oracle map[string]*dump.Dump, got *dump.Dump, tol float64, unstable Unstable) (*Report, error) {
	return GeometryWith(oracle, got, Options{Tolerance: tol, Unstable: unstable})
}

// GeometryWith is Geometry with every option: the tolerance, the engines' unstable
// items (as GeometryUnstable) and the axes scored. An axis not in opts.Axes is
// neither voted nor scored: its counters stay zero and it gives no findings and no
// causes; Report.Axes names the axes when they are not all.
func GeometryWith(oracle map[string]*dump.Dump, got *dump.Dump, opts Options) (*Report, error) {
	tol, unstable := opts.Tolerance, opts.Unstable
	if _, err := ParseAxes(string(opts.Axes)); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if math.IsNaN(tol) || math.IsInf(tol, 0) || tol < 0 {
		return nil, fmt.Errorf("compare: tolerance %v must be a finite number >= 0", tol)
	}
	if err := check(oracle, got); err != nil {
		return nil, err
	}
	r := &Report{}
	if opts.Axes != "" && opts.Axes != axesAll {
		r.Axes = opts.Axes
	}
	if over := overflowed(oracle, got); len(over) > 0 {
		r.Verdict, r.Reason = Discarded, "overflowed: "+strings.Join(over, ", ")
		return r, nil
	}
	if len(oracle) == 0 {
		r.Verdict, r.Reason = Untrustworthy, "no oracle dumps"
		return r, nil
	}

	us := unstable.set()
	if e := us.wholeIn(slices.Sorted(maps.Keys(oracle))); e != "" {
		r.ShapeVote = vote.Unstable
		r.Verdict, r.Reason = Untrustworthy, e+"'s answer is unstable as a whole (its runs differ in shape or overflow)"
		return r, nil
	}
	shape := vote.Vote(oracle, func(a, b *dump.Dump) bool { return dump.Shape(a, b) == nil })
	r.ShapeVote = shape.Kind
	if !shape.Trusted() {
		r.Verdict, r.Reason = Untrustworthy, "oracle engines disagree on shape ("+string(shape.Kind)+")"
		return r, nil
	}
	c := newComparison(r, oracle, shape.Majority, got, tol)
	c.unstable, c.axes = us, opts.Axes
	if shape.Kind == vote.Majority {
		c.outliers[[2]string{shape.Outlier, "shape"}]++
	}
	r.Engines = shape.Majority
	if got != nil {
		if d := dump.Shape(oracle[shape.Representative()], got); d != nil {
			r.Verdict, r.Shape = Fail, d
			r.Reason = fmt.Sprintf("parse divergence: shape differs at node %d", d.Index)
			c.finishOutliers()
			return r, attribute(r, oracle, got, opts)
		}
	}
	c.run()
	c.finish()
	return r, attribute(r, oracle, got, opts)
}

// attribute fills r.Causes when some item is not unanimous or the candidate
// failed; it votes the case again node by node (NodeOutcomes), so a case all
// engines agree on costs nothing more.
func attribute(r *Report, oracle map[string]*dump.Dump, got *dump.Dump, opts Options) error {
	if r.Verdict != Fail && r.ShapeVote != vote.Majority &&
		r.Votes[vote.Majority]+r.Votes[vote.Split]+r.Votes[vote.Disagree] == 0 {
		return nil
	}
	out, err := NodeOutcomesWith(oracle, got, opts)
	if err != nil {
		return err
	}
	r.Causes = out.Causes
	return nil
}

// check refuses what cannot be compared at all.
func check(oracle map[string]*dump.Dump, got *dump.Dump) error {
	var first *dump.Dump
	var firstName string
	viewport := func(name string, d *dump.Dump) error {
		if first == nil {
			first, firstName = d, name
			return nil
		}
		if d.Viewport != first.Viewport {
			return fmt.Errorf("viewport mismatch: %s is %vx%v, %s is %vx%v", firstName,
				first.Viewport.Width, first.Viewport.Height, name, d.Viewport.Width, d.Viewport.Height)
		}
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(oracle)) {
		d := oracle[name]
		if d == nil {
			return fmt.Errorf("%s: dump is null", name)
		}
		if err := d.Validate(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := viewport(name, d); err != nil {
			return err
		}
	}
	if got != nil {
		if err := got.Validate(); err != nil {
			return fmt.Errorf("candidate: %w", err)
		}
		return viewport("candidate", got)
	}
	return nil
}

func overflowed(oracle map[string]*dump.Dump, got *dump.Dump) []string {
	var over []string
	for _, name := range slices.Sorted(maps.Keys(oracle)) {
		if oracle[name].Overflowed {
			over = append(over, name)
		}
	}
	if got != nil && got.Overflowed {
		over = append(over, "candidate")
	}
	return over
}

// side is one dump plus its precomputed relative offsets.
type side struct {
	engine string
	d      *dump.Dump
	off    []point
}

// point is an optional 2D value; ok is false where the node generates no box.
type point struct {
	x, y float64
	ok   bool
}

// opt is an optional number: a fragment past an engine's fragment count, or the
// offset of a node without a box, is absent, and agrees only with absent.
type opt struct {
	v  float64
	ok bool
}

// offsets is each node's bounding origin minus the bounding origin of its nearest
// ancestor that generates a box (the parent, whenever the parent has one), or minus
// the viewport origin when no ancestor does. The spec says "parent"; skipping boxless
// ancestors (display:none, display:contents) is what keeps the spec's other rule,
// that comparison never uses absolute coordinates: a boxless parent's bounding is
// zeroed, so its child's offset would otherwise be the child's absolute position.
// A node with no box has no offset.
func offsets(d *dump.Dump) []point {
	boxed := make([]int, len(d.Nodes)) // nearest self-or-ancestor with a box, or -1
	out := make([]point, len(d.Nodes))
	for i, n := range d.Nodes {
		ref := -1
		if n.Parent >= 0 {
			ref = boxed[n.Parent]
		}
		boxed[i] = ref
		if len(n.Rects) == 0 {
			continue
		}
		boxed[i] = i
		var ox, oy float64
		if ref >= 0 {
			ox, oy = d.Nodes[ref].Bounding.X, d.Nodes[ref].Bounding.Y
		}
		out[i] = point{n.Bounding.X - ox, n.Bounding.Y - oy, true}
	}
	return out
}

// comparison is one case in progress: the voting oracle engines and the candidate.
type comparison struct {
	r        *Report
	tol      float64
	voters   []*side // sorted by engine name
	got      *side   // nil: vote the oracle only
	outliers map[[2]string]int
	unstable *unstableSet // nil: every item stable
	axes     Axes         // what is voted and scored; "" is all
	engines  []string     // the voters' names, for unstable

	// Scratch maps for the per-item votes, reused across items.
	nums  map[string]opt
	strs  map[string]string
	ints  map[string]int
	agree func(a, b opt) bool
}

func newComparison(r *Report, oracle map[string]*dump.Dump, engines []string, got *dump.Dump, tol float64) *comparison {
	c := &comparison{
		r: r, tol: tol, outliers: map[[2]string]int{},
		nums: map[string]opt{}, strs: map[string]string{}, ints: map[string]int{},
	}
	c.agree = func(a, b opt) bool { return a.ok == b.ok && (!a.ok || dump.Within(a.v-b.v, tol)) }
	for _, e := range engines {
		c.voters = append(c.voters, &side{engine: e, d: oracle[e], off: offsets(oracle[e])})
	}
	c.engines = engines
	if got != nil {
		c.got = &side{engine: "candidate", d: got, off: offsets(got)}
	}
	if len(engines) > 1 {
		r.Votes = map[vote.Kind]int{}
	}
	return c
}

// run compares every node. Shapes are equal by now, so node i is the same element
// in every dump.
func (c *comparison) run() {
	for i := range c.voters[0].d.Nodes {
		if c.axes.Layout() {
			c.num(i, "bounding.w", func(s *side) (float64, bool) { return s.d.Nodes[i].Bounding.W, true })
			c.num(i, "bounding.h", func(s *side) (float64, bool) { return s.d.Nodes[i].Bounding.H, true })
			c.fragments(i)
			c.num(i, "offset.x", func(s *side) (float64, bool) { return s.off[i].x, s.off[i].ok })
			c.num(i, "offset.y", func(s *side) (float64, bool) { return s.off[i].y, s.off[i].ok })
		}
		if c.axes.Style() {
			c.style(i)
		}
	}
}

// fragments votes the fragment count exactly, then, where the candidate has the
// reference's count, each fragment's w and h pairwise. A count mismatch is one
// failed rects.count finding; its fragments are not paired up.
func (c *comparison) fragments(i int) {
	count := func(s *side) int { return len(s.d.Nodes[i].Rects) }
	if c.skipUnstable(i, "rects.count", &c.r.Layout) {
		return // its fragments cannot be paired up either
	}
	for _, s := range c.voters {
		c.ints[s.engine] = count(s)
	}
	res := vote.Vote(c.ints, func(a, b int) bool { return a == b })
	c.tally(res, "rects.count", &c.r.Layout)
	if !res.Trusted() {
		return
	}
	want := c.ints[res.Representative()]
	if c.got != nil {
		c.r.Layout.Compared++
		if n := count(c.got); n != want {
			c.r.Layout.Failed++
			c.r.Findings = append(c.r.Findings, Finding{Node: i, Tag: c.tag(i), Property: "rects.count",
				Want: float64(want), Got: float64(n), Delta: float64(n - want)})
			return
		}
	}
	for j := 0; j < want; j++ {
		frag := func(s *side) (dump.Rect, bool) {
			if r := s.d.Nodes[i].Rects; j < len(r) {
				return r[j], true
			}
			return dump.Rect{}, false
		}
		c.num(i, fmt.Sprintf("rects[%d].w", j), func(s *side) (float64, bool) { r, ok := frag(s); return r.W, ok })
		c.num(i, fmt.Sprintf("rects[%d].h", j), func(s *side) (float64, bool) { r, ok := frag(s); return r.H, ok })
	}
}

// num votes one geometry property of node i and scores the candidate against the
// majority value.
func (c *comparison) num(i int, prop string, get func(*side) (float64, bool)) {
	if c.skipUnstable(i, prop, &c.r.Layout) {
		return
	}
	for _, s := range c.voters {
		v, ok := get(s)
		c.nums[s.engine] = opt{v, ok}
	}
	res := vote.Vote(c.nums, c.agree)
	c.tally(res, prop, &c.r.Layout)
	if !res.Trusted() || c.got == nil {
		return
	}
	want := c.nums[res.Representative()]
	got, ok := get(c.got)
	if !want.ok || !ok {
		return // no box on one side: the rects.count finding already says so
	}
	d := got - want.v
	in := dump.Within(d, c.tol)
	c.r.Layout.Compared++
	if !in {
		c.r.Layout.Failed++
	}
	c.r.SumAbsDelta += math.Abs(d)
	c.r.MaxAbsDelta = math.Max(c.r.MaxAbsDelta, math.Abs(d))
	if d != 0 {
		c.r.Findings = append(c.r.Findings, Finding{Node: i, Tag: c.tag(i), Property: prop,
			Want: want.v, Got: got, Delta: d, Within: in})
	}
}

// style votes and compares node i's style subset (StyleEqual), on the style axis.
func (c *comparison) style(i int) {
	for _, p := range dump.StyleProperties {
		for _, s := range c.voters {
			c.strs[s.engine] = s.d.Nodes[i].Style[p]
		}
		prop := "style." + p
		if c.skipUnstable(i, prop, &c.r.Style) {
			continue
		}
		res := vote.Vote(c.strs, func(a, b string) bool { return StyleEqual(a, b, c.tol) })
		c.tally(res, prop, &c.r.Style)
		if !res.Trusted() || c.got == nil {
			continue
		}
		want, got := c.strs[res.Representative()], c.got.d.Nodes[i].Style[p]
		c.r.Style.Compared++
		if !StyleEqual(want, got, c.tol) {
			c.r.Style.Failed++
			c.r.StyleFindings = append(c.r.StyleFindings, StyleFinding{Node: i, Tag: c.tag(i),
				Property: prop, Want: want, Got: got})
		}
	}
}

// skipUnstable counts item (i, prop) as unstable, and reports so, when some voting
// engine's runs differed on it: it is then neither voted nor scored.
func (c *comparison) skipUnstable(i int, prop string, axis *Axis) bool {
	if c.unstable == nil || !c.unstable.any(c.engines, ItemRef{i, prop}.String()) {
		return false
	}
	if c.r.Votes != nil {
		c.r.Votes[vote.Unstable]++
	}
	axis.Unstable++
	return true
}

// tally records one vote among the oracle engines.
func (c *comparison) tally(res vote.Result, prop string, axis *Axis) {
	if c.r.Votes != nil {
		c.r.Votes[res.Kind]++
	}
	if res.Kind == vote.Majority {
		c.outliers[[2]string{res.Outlier, prop}]++
	}
	if !res.Trusted() {
		axis.Untrusted++
	}
}

func (c *comparison) tag(i int) string { return c.voters[0].d.Nodes[i].Tag }

func (c *comparison) finish() {
	r := c.r
	r.Layout.Pass = r.Layout.Failed == 0
	r.Style.Pass = r.Style.Failed == 0
	switch {
	case c.got == nil:
		r.Verdict = NoCandidate
	case r.Layout.Compared+r.Style.Compared == 0 && r.Layout.Untrusted+r.Style.Untrusted+r.Layout.Unstable+r.Style.Unstable > 0:
		r.Verdict, r.Reason = Untrustworthy, "the oracle engines split on every item"
		if r.Layout.Unstable+r.Style.Unstable > 0 {
			r.Reason = "every item was unstable or split"
		}
	case r.Layout.Pass && r.Style.Pass:
		r.Verdict = Pass
	default:
		r.Verdict = Fail
	}
	c.finishOutliers()
}

func (c *comparison) finishOutliers() {
	for k, n := range c.outliers {
		c.r.Outliers = append(c.r.Outliers, Outlier{Engine: k[0], Property: k[1], Count: n})
	}
	sort.Slice(c.r.Outliers, func(i, j int) bool {
		a, b := c.r.Outliers[i], c.r.Outliers[j]
		if a.Engine != b.Engine {
			return a.Engine < b.Engine
		}
		return a.Property < b.Property
	})
}
