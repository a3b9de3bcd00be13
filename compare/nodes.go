package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/vote"
)

// NodeStatus is the worst thing that happened to one node's items in a case.
type NodeStatus string

const (
	NodeOK NodeStatus = "ok"
	// NodeOutvoted: some engine was the outlier of a Majority on one of the node's items.
	NodeOutvoted NodeStatus = "outvoted"
	// NodeSplit: the oracle engines gave no majority on one of its items (Split, Disagree).
	NodeSplit NodeStatus = "split"
	// NodeFailed: the candidate is outside tolerance (or differs, for style and
	// fragment counts) on one of its trusted items.
	NodeFailed NodeStatus = "failed"
	// NodeUnstable: a voting engine's runs differed on one of its items, which was
	// therefore not voted (NodeOutcomesUnstable).
	NodeUnstable NodeStatus = "unstable"
)

// rank orders statuses from harmless to worst.
var rank = map[NodeStatus]int{NodeOK: 0, NodeUnstable: 1, NodeOutvoted: 2, NodeSplit: 3, NodeFailed: 4}

// NodeItem is one voted item of a node that was not a unanimous pass.
type NodeItem struct {
	Property string    `json:"property"` // as in Finding: "bounding.w", "rects.count", "style.display"
	Vote     vote.Kind `json:"vote"`
	Outlier  string    `json:"outlier,omitempty"`
	// Values holds each voting engine's value (and "candidate"'s), as text; a
	// missing fragment or the offset of a boxless node is "none".
	Values map[string]string `json:"values"`
	Want   string            `json:"want,omitempty"`  // the majority's value, when trusted
	Delta  *float64          `json:"delta,omitempty"` // candidate - want, for numbers
	Failed bool              `json:"failed,omitempty"`
}

// NodeOutcome is one node's part in a case's vote.
type NodeOutcome struct {
	Node     int        `json:"node"`
	Tag      string     `json:"tag"`
	Status   NodeStatus `json:"status"`
	Outvoted []string   `json:"outvoted,omitempty"` // engines outvoted on any of its items
	Items    []NodeItem `json:"items,omitempty"`    // only those that were not unanimous passes
}

// Outcomes is a case's vote per node, for drawing it (package report).
type Outcomes struct {
	// Engines are the oracle engines whose dumps voted per item (a shape outlier is
	// dropped first, as in Geometry).
	Engines      []string `json:"engines,omitempty"`
	ShapeOutlier string   `json:"shape_outlier,omitempty"`
	// Shape is the candidate's divergence from the majority shape; its nodes are
	// then not scored.
	Shape *dump.Divergence `json:"shape,omitempty"`
	// Nodes follow the voting engines' node order; nil when the engines have no
	// majority shape.
	Nodes []NodeOutcome `json:"nodes,omitempty"`
	// Causes attribute every item listed in Nodes (and a shape divergence) to
	// root causes (Attribute).
	Causes []Cause `json:"causes,omitempty"`
	// UnstableWhole names an engine whose runs differed in shape or overflow: no
	// item was voted (NodeOutcomesUnstable).
	UnstableWhole string `json:"unstable_whole,omitempty"`

	shapeAt int // where the shape outlier's tree first differs
}

// NodeOutcomes votes a case node by node, as Geometry does item by item (the same
// vote.Vote, Within, offsets, StyleEqual and exact count votes), but keeps where each
// outvoted, split and failed item is instead of only counting it. got may be nil.
// The error is Geometry's: a dump refused by Validate or a viewport mismatch.
func NodeOutcomes(oracle map[string]*dump.Dump, got *dump.Dump, tol float64) (*Outcomes, error) {
	return nodeOutcomesUnstable(oracle, got, tol, nil)
}

// nodeOutcomesUnstable is NodeOutcomes with the engines' unstable items, as
// GeometryUnstable takes them: an item unstable in a voting engine is listed with
// vote.Unstable and its values, is not scored, and is attributed to no cause.
func nodeOutcomesUnstable(oracle map[string]*dump.Dump, got *dump.Dump, tol float64, unstable Unstable) (*Outcomes, error) {
	return NodeOutcomesWith(oracle, got, Options{Tolerance: tol, Unstable: unstable})
}

// NodeOutcomesWith is NodeOutcomes with every option, as GeometryWith takes them:
// an axis not in opts.Axes is not voted, so its items are not listed and explain
// nothing.
func NodeOutcomesWith(oracle map[string]*dump.Dump, got *dump.Dump, opts Options) (*Outcomes, error) {
	tol, unstable, axes := opts.Tolerance, opts.Unstable, opts.Axes
	if _, err := ParseAxes(string(axes)); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if math.IsNaN(tol) || math.IsInf(tol, 0) || tol < 0 {
		return nil, fmt.Errorf("compare: tolerance %v must be a finite number >= 0", tol)
	}
	if err := check(oracle, got); err != nil {
		return nil, err
	}
	out := &Outcomes{}
	if len(oracle) == 0 {
		return out, nil
	}
	us := unstable.set()
	if out.UnstableWhole = us.wholeIn(slices.Sorted(maps.Keys(oracle))); out.UnstableWhole != "" {
		return out, nil
	}
	shape := vote.Vote(oracle, func(a, b *dump.Dump) bool { return dump.Shape(a, b) == nil })
	if !shape.Trusted() {
		return out, nil
	}
	out.Engines, out.ShapeOutlier = shape.Majority, shape.Outlier
	if shape.Outlier != "" {
		out.shapeAt = dump.Shape(oracle[shape.Representative()], oracle[shape.Outlier]).Index
	}
	var sides []*side
	for _, e := range shape.Majority {
		sides = append(sides, &side{engine: e, d: oracle[e], off: offsets(oracle[e])})
	}
	var cand *side
	if got != nil {
		if out.Shape = dump.Shape(oracle[shape.Representative()], got); out.Shape == nil {
			cand = &side{engine: "candidate", d: got, off: offsets(got)}
		}
	}
	ref := sides[0].d
	out.Nodes = make([]NodeOutcome, len(ref.Nodes))
	// Scratch values and agreement rules, reused for every item.
	nums, strs := map[string]opt{}, map[string]string{}
	agree := func(a, b opt) bool { return a.ok == b.ok && (!a.ok || dump.Within(a.v-b.v, tol)) }
	exactEq := func(a, b string) bool { return a == b }
	styleEq := func(a, b string) bool { return StyleEqual(a, b, tol) }
	for i := range ref.Nodes {
		n := &out.Nodes[i]
		n.Node, n.Tag, n.Status = i, ref.Nodes[i].Tag, NodeOK
		// isUnstable lists item prop as unstable, with the engines' values, when a
		// voting engine's runs differed on it.
		isUnstable := func(prop string, text func(*side) string) bool {
			if us == nil || !us.any(out.Engines, ItemRef{i, prop}.String()) {
				return false
			}
			it := NodeItem{Property: prop, Vote: vote.Unstable, Values: map[string]string{}}
			for _, s := range sides {
				it.Values[s.engine] = text(s)
			}
			n.add(it)
			return true
		}
		numItem := func(prop string, get func(*side) (float64, bool)) {
			if !axes.has(prop) {
				return
			}
			if isUnstable(prop, func(s *side) string { v, ok := get(s); return optText(opt{v, ok}) }) {
				return
			}
			clear(nums)
			for _, s := range sides {
				v, ok := get(s)
				nums[s.engine] = opt{v, ok}
			}
			res := vote.Vote(nums, agree)
			it := NodeItem{Property: prop, Vote: res.Kind, Outlier: res.Outlier}
			var cv opt
			if res.Trusted() && cand != nil {
				want := nums[res.Representative()]
				cv.v, cv.ok = get(cand)
				if want.ok && cv.ok {
					d := cv.v - want.v
					it.Delta = &d
					it.Failed = !dump.Within(d, tol)
				}
			}
			if !kept(it) {
				return // formatting every unanimous item's values is most of the cost
			}
			it.Values = map[string]string{}
			for e, v := range nums {
				it.Values[e] = optText(v)
			}
			if res.Trusted() {
				it.Want = optText(nums[res.Representative()])
				if cand != nil {
					it.Values["candidate"] = optText(cv)
				}
			}
			n.add(it)
		}
		exact := func(prop string, get func(*side) string) bool {
			if !axes.has(prop) || isUnstable(prop, get) {
				return false
			}
			clear(strs)
			for _, s := range sides {
				strs[s.engine] = get(s)
			}
			eq := exactEq
			if strings.HasPrefix(prop, "style.") {
				eq = styleEq
			}
			res := vote.Vote(strs, eq)
			it := NodeItem{Property: prop, Vote: res.Kind, Outlier: res.Outlier}
			var g string
			if res.Trusted() {
				it.Want = strs[res.Representative()]
				if cand != nil {
					g = get(cand)
					it.Failed = !eq(g, it.Want)
				}
			}
			if kept(it) {
				it.Values = maps.Clone(strs)
				if res.Trusted() && cand != nil {
					it.Values["candidate"] = g
				}
				n.add(it)
			}
			return true
		}
		numItem("bounding.w", func(s *side) (float64, bool) { return s.d.Nodes[i].Bounding.W, true })
		numItem("bounding.h", func(s *side) (float64, bool) { return s.d.Nodes[i].Bounding.H, true })
		count := func(s *side) string { return strconv.Itoa(len(s.d.Nodes[i].Rects)) }
		voted := exact("rects.count", count)
		// Fragments are voted up to the majority's count, and the candidate's only
		// when its count matches, as Geometry does; not at all when the count is unstable.
		counts := map[string]int{}
		for _, s := range sides {
			counts[s.engine] = len(s.d.Nodes[i].Rects)
		}
		if cv := vote.Vote(counts, func(a, b int) bool { return a == b }); voted && cv.Trusted() {
			want := counts[cv.Representative()]
			saved := cand
			if cand != nil && len(cand.d.Nodes[i].Rects) != want {
				cand = nil
			}
			for j := 0; j < want; j++ {
				frag := func(s *side) (dump.Rect, bool) {
					if r := s.d.Nodes[i].Rects; j < len(r) {
						return r[j], true
					}
					return dump.Rect{}, false
				}
				numItem(fmt.Sprintf("rects[%d].w", j), func(s *side) (float64, bool) { r, ok := frag(s); return r.W, ok })
				numItem(fmt.Sprintf("rects[%d].h", j), func(s *side) (float64, bool) { r, ok := frag(s); return r.H, ok })
			}
			cand = saved
		}
		numItem("offset.x", func(s *side) (float64, bool) { return s.off[i].x, s.off[i].ok })
		numItem("offset.y", func(s *side) (float64, bool) { return s.off[i].y, s.off[i].ok })
		for _, p := range dump.StyleProperties {
			exact("style."+p, func(s *side) string { return s.d.Nodes[i].Style[p] })
		}
		slices.Sort(n.Outvoted)
	}
	out.Causes = attributeCauses(out, ref)
	return out, nil
}

// kept reports whether an item is listed: anything but a unanimous pass.
func kept(it NodeItem) bool { return itemStatus(it) != NodeOK }

func itemStatus(it NodeItem) NodeStatus {
	switch {
	case it.Failed:
		return NodeFailed
	case it.Vote == vote.Split || it.Vote == vote.Disagree:
		return NodeSplit
	case it.Vote == vote.Majority:
		return NodeOutvoted
	case it.Vote == vote.Unstable:
		return NodeUnstable
	}
	return NodeOK
}

// add keeps it when it is not a unanimous pass, and raises the node's status.
func (n *NodeOutcome) add(it NodeItem) {
	st := itemStatus(it)
	if st == NodeOK {
		return
	}
	if it.Vote == vote.Majority && !slices.Contains(n.Outvoted, it.Outlier) {
		n.Outvoted = append(n.Outvoted, it.Outlier)
	}
	if rank[st] > rank[n.Status] {
		n.Status = st
	}
	n.Items = append(n.Items, it)
}

func optText(o opt) string {
	if !o.ok {
		return "none"
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}
