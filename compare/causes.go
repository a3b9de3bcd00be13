package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/vote"
)

// CauseKind says what a cause box's difference is (docs/compare.md, "Attribution").
type CauseKind string

const (
	CauseShape  CauseKind = "shape"  // parse: the element tree differs
	CauseStyle  CauseKind = "style"  // a computed-style value differs
	CauseText   CauseKind = "text"   // style equal; a text-only box differs along its inline axis
	CauseLayout CauseKind = "layout" // style equal; geometry differs
)

// ItemRef names one voted item: a node and a property as in Finding ("shape" for
// a shape divergence).
type ItemRef struct {
	Node     int    `json:"node"`
	Property string `json:"property"`
}

// Cause is one root cause of a case's non-unanimous items: the box whose own
// difference explains Items.
type Cause struct {
	Node int       `json:"node"`
	Tag  string    `json:"tag"`
	Path string    `json:"path"` // "HTML>BODY>P[2]"
	Kind CauseKind `json:"kind"`
	// Engines are the engines outvoted on it ("candidate" for a candidate failure),
	// or, when Split, every voting engine.
	Engines []string `json:"engines"`
	Split   bool     `json:"split,omitempty"`
	// Items are every non-unanimous item it accounts for, its own first; Explains
	// is their number. Over a case's causes, Explains sums to its non-unanimous items.
	Items    []ItemRef `json:"items"`
	Explains int       `json:"explains"`
}

// Label is the cause in one phrase: "firefox text at HTML>BODY>P[2]".
func (c Cause) Label() string {
	who := strings.Join(c.Engines, "+")
	if c.Split {
		who += " split"
	}
	return fmt.Sprintf("%s %s at %s", who, c.Kind, c.Path)
}

// Explained is the number of non-unanimous items the causes account for.
func Explained(cs []Cause) int {
	n := 0
	for _, c := range cs {
		n += c.Explains
	}
	return n
}

// path is node i's tag path from the root ("HTML>BODY>P[2]"): dump.Dump.Path, whose
// Find goes back from a path to its node.
func path(d *dump.Dump, i int) string { return d.Path(i) }

// axis classifies a property for attribution.
type axis int

const (
	axisWidth  axis = iota // bounding.w, rects[i].w, rects.count, style.width: inline axis in horizontal writing
	axisHeight             // bounding.h, rects[i].h, style.height
	axisOffset             // offset.x, offset.y
	axisStyle              // every other style property
)

// propAxis: style.width and style.height are getComputedStyle's resolved values, the
// used size in px for a rendered box, so they follow the geometry and count as sizes.
func propAxis(p string) axis {
	switch {
	case p == "bounding.w" || p == "style.width" || p == "rects.count" || strings.HasSuffix(p, "].w"):
		return axisWidth
	case p == "bounding.h" || p == "style.height" || strings.HasSuffix(p, "].h"):
		return axisHeight
	case strings.HasPrefix(p, "offset."):
		return axisOffset
	}
	return axisStyle
}

// horizontalStyle and verticalStyle are the style properties that set a box's
// x and width, and its y and height: only these explain its geometry.
var (
	horizontalStyle = styleSet("min-width", "max-width", "padding-left", "padding-right",
		"border-left-width", "border-right-width", "margin-left", "margin-right")
	verticalStyle = styleSet("min-height", "max-height", "padding-top", "padding-bottom",
		"border-top-width", "border-bottom-width", "margin-top", "margin-bottom")
	// blockMargins move a box but never size it (a horizontal margin narrows an
	// auto-width block; a vertical one never changes a height).
	blockMargins = map[string]bool{"style.margin-top": true, "style.margin-bottom": true}
)

// styleSet is the set of "style."+name for names, plus the properties that set
// both axes (box-sizing, display, position, float).
func styleSet(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range append(names, "box-sizing", "display", "position", "float") {
		m["style."+n] = true
	}
	return m
}

// setsAxis says style property prop (a "style." item) sets geometry item geo's
// axis: horizontalStyle for widths, rects.count and offset.x, verticalStyle for
// heights and offset.y.
func setsAxis(prop, geo string) bool {
	switch propAxis(geo) {
	case axisWidth:
		return horizontalStyle[prop]
	case axisHeight:
		return verticalStyle[prop] && !blockMargins[prop]
	case axisOffset:
		if geo == "offset.x" {
			return horizontalStyle[prop]
		}
		return verticalStyle[prop]
	}
	return false
}

// attrItem is one non-unanimous item being attributed.
type attrItem struct {
	node int
	prop string
	ax   axis
	sig  string // its engines: only items with the same engines explain each other
	cand bool   // the candidate fails it: it is explained among the candidate's items
	by   int    // the item that explains it, or -1: a root
	// want and got are the majority's value and the differing side's (the
	// candidate's, else the outvoted engine's), as NodeItem.Values writes them;
	// "" when neither applies (a split).
	want, got string
}

// differing is the value of the side that differs on it: the candidate's when it
// fails it, else the outvoted engine's.
func differing(it NodeItem) string {
	switch {
	case it.Failed:
		return it.Values["candidate"]
	case it.Vote == vote.Majority:
		return it.Values[it.Outlier]
	}
	return ""
}

// proportional says style item j (a margin or padding) can be a percentage of
// width item k: the differing side's j/k ratio is the majority's. Unknown values
// (not px numbers) do not rule it out.
func proportional(j, k attrItem) bool {
	px := func(v string) (float64, bool) {
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
		return f, err == nil
	}
	wj, ok1 := px(j.want)
	gj, ok2 := px(j.got)
	wk, ok3 := px(k.want)
	gk, ok4 := px(k.got)
	if !(ok1 && ok2 && ok3 && ok4) || wk == 0 || gk == 0 {
		return true
	}
	return math.Abs(gj/gk-wj/wk) <= 0.005*math.Max(math.Abs(wj/wk), 0.01)
}

// sameEngines says item k may explain item j: both failed by the candidate
// (whatever engine is outvoted on either: the candidate's failures are attributed
// among its own items), or, for an item the candidate does not fail, the same
// engines.
func sameEngines(j, k attrItem) bool {
	if j.cand || k.cand {
		return j.cand && k.cand
	}
	return j.sig == k.sig
}

// attributeCauses assigns each non-unanimous item of o to one root cause, on ref (a
// voting engine's dump: node i is the same element in every voting dump). The rule
// is docs/compare.md's "Attribution": an item is explained by another item with the
// same engines (for an item the candidate fails: another item the candidate fails,
// whatever engine is outvoted on either) when
//
//   - same node: a rects or style size item by the node's bounding item of its axis;
//     a size or offset item by the node's own (non-size) style item that sets its
//     axis (setsAxis);
//   - an offset by any item of the nearest earlier node in tree order (an ancestor,
//     or a preceding sibling's subtree), except an ancestor's own offset; failing
//     that, by the node's own size (a box aligned by its end moves when it grows);
//   - a height by a descendant's height or offset.y (auto heights grow from content);
//   - a width by a descendant's width or offset.x when the box shrinks to fit
//     (inline-level, table, float, absolutely positioned), else by an ancestor's
//     width (block widths come from the containing block); an inline's width also by
//     the nearest earlier item (its line breaks follow the content before it);
//   - a style item by an ancestor's same property (inheritance), or a margin or
//     padding by an ancestor's width in proportion (a percentage: proportional).
//
// A style item never explains a geometry item off its axis, nor when it is the
// root's or inherited from the root down a chain of the same property.
// Among candidates the first in that order wins, and each item follows its
// explainer to a root; a loop's root is its first style item, else its first item
// in tree order. Roots are
// grouped per (node, engines) into one Cause.
func attributeCauses(o *Outcomes, ref *dump.Dump) []Cause {
	var causes []Cause
	if o == nil || ref == nil {
		return nil
	}
	if o.ShapeOutlier != "" {
		causes = append(causes, shapeCause(ref, o.ShapeOutlier, o.shapeAt))
	}
	if o.Shape != nil {
		causes = append(causes, shapeCause(ref, "candidate", o.Shape.Index))
	}
	if len(o.Nodes) != len(ref.Nodes) {
		return causes
	}
	var items []attrItem
	first := make([]int, len(o.Nodes)+1) // node i's items are items[first[i]:first[i+1]]
	for i, n := range o.Nodes {
		first[i] = len(items)
		for _, it := range n.Items {
			if it.Vote == vote.Unstable {
				continue // not voted: no engine differs on it, so it explains nothing
			}
			items = append(items, attrItem{node: i, prop: it.Property, ax: propAxis(it.Property), sig: itemSig(it, o.Engines), cand: it.Failed, by: -1, want: it.Want, got: differing(it)})
		}
	}
	first[len(o.Nodes)] = len(items)
	if len(items) == 0 {
		return causes
	}
	a := &attribution{ref: ref, items: items, first: first, end: subtreeEnds(ref)}
	// Style first: whether a style item's inheritance chain reaches the root
	// decides whether it may explain geometry.
	a.fromRoot = make([]bool, len(items))
	for j := range items {
		if items[j].ax == axisStyle {
			items[j].by = a.explainer(j)
		}
	}
	for j := range items {
		if items[j].ax != axisStyle {
			continue
		}
		k := j
		for steps := 0; items[k].by >= 0 && items[items[k].by].ax == axisStyle && items[items[k].by].prop == items[k].prop && steps < len(items); steps++ {
			k = items[k].by
		}
		a.fromRoot[j] = ref.Nodes[items[k].node].Parent < 0
	}
	for j := range items {
		if items[j].ax != axisStyle {
			items[j].by = a.explainer(j)
		}
	}
	// Follow each item to its root, memoized.
	root := make([]int, len(items))
	for j := range root {
		root[j] = -1
	}
	for j := range items {
		var path []int
		onPath := map[int]bool{}
		k := j
		for root[k] < 0 && items[k].by >= 0 && !onPath[k] {
			onPath[k] = true
			path = append(path, k)
			k = items[k].by
		}
		r := root[k]
		switch {
		case r >= 0:
		case onPath[k]: // a cycle through k: its first style item, else its first item
			r = k
			for c := items[k].by; c != k; c = items[c].by {
				if loopFirst(items[c], c, items[r], r) {
					r = c
				}
			}
		default:
			r = k
		}
		root[k] = r
		for _, p := range path {
			root[p] = r
		}
	}
	// One cause per (node, engines, style or geometry) of the roots, in tree
	// order: a box whose style and geometry are both wrong, the one not explaining
	// the other, has two causes.
	type key struct {
		node  int
		sig   string
		style bool
	}
	at := map[key]int{}
	for pass := range 2 { // roots first, so each cause lists its own root items first
		for j := range items {
			if (root[j] == j) != (pass == 0) {
				continue
			}
			r := items[root[j]]
			k := key{r.node, r.sig, r.ax == axisStyle}
			ci, ok := at[k]
			if !ok {
				ci = len(causes)
				at[k] = ci
				causes = append(causes, a.newCause(r, o))
			}
			c := &causes[ci]
			c.Items = append(c.Items, ItemRef{items[j].node, items[j].prop})
			c.Explains++
			if root[j] == j {
				c.Kind = strongest(c.Kind, a.kind(j))
			}
		}
	}
	// Order by node; in Items, the cause's roots, its node's other items, then the rest.
	slices.SortStableFunc(causes, func(x, y Cause) int { return x.Node - y.Node })
	for ci := range causes {
		c := &causes[ci]
		slices.SortStableFunc(c.Items, func(x, y ItemRef) int {
			return b2i(x.Node != c.Node) - b2i(y.Node != c.Node)
		})
	}
	return causes
}

// loopFirst orders a loop's items for choosing its root: style items first (a
// computed value is upstream of the geometry it feeds), then tree order.
func loopFirst(x attrItem, xi int, y attrItem, yi int) bool {
	if (x.ax == axisStyle) != (y.ax == axisStyle) {
		return x.ax == axisStyle
	}
	return xi < yi
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shapeCause is a parse divergence at node i of ref (i may be past ref's end, when
// the other tree has more nodes).
func shapeCause(ref *dump.Dump, engine string, i int) Cause {
	c := Cause{Node: i, Kind: CauseShape, Engines: []string{engine}, Items: []ItemRef{{i, "shape"}}, Explains: 1}
	if i >= 0 && i < len(ref.Nodes) {
		c.Tag, c.Path = ref.Nodes[i].Tag, path(ref, i)
	}
	return c
}

// itemSig is the engines an item differs in: the outvoted engine, or all voting
// engines on a split, plus "candidate" when the candidate fails it.
func itemSig(it NodeItem, engines []string) string {
	var who []string
	switch it.Vote {
	case vote.Majority:
		who = append(who, it.Outlier)
	case vote.Split, vote.Disagree:
		who = append(who, "split:"+strings.Join(engines, "+"))
	}
	if it.Failed {
		who = append(who, "candidate")
	}
	return strings.Join(who, ",")
}

// kindOrder ranks kinds when a cause box has several root items.
var kindOrder = map[CauseKind]int{"": 0, CauseLayout: 1, CauseText: 2, CauseStyle: 3, CauseShape: 4}

func strongest(a, b CauseKind) CauseKind {
	if kindOrder[b] > kindOrder[a] {
		return b
	}
	return a
}

type attribution struct {
	ref   *dump.Dump
	items []attrItem
	first []int
	end   []int // node i's subtree is nodes i..end[i] (document order)
	// fromRoot[j]: style item j is the root's, or inherited down a chain of the
	// same property from the root: it explains no geometry.
	fromRoot []bool
}

// subtreeEnds gives each node's last descendant's index (itself when a leaf).
func subtreeEnds(d *dump.Dump) []int {
	end := make([]int, len(d.Nodes))
	for i := len(d.Nodes) - 1; i >= 0; i-- {
		end[i] = max(end[i], i)
		if p := d.Nodes[i].Parent; p >= 0 && p < i {
			end[p] = max(end[p], end[i])
		}
	}
	return end
}

func (a *attribution) newCause(r attrItem, o *Outcomes) Cause {
	c := Cause{Node: r.node, Tag: a.ref.Nodes[r.node].Tag, Path: path(a.ref, r.node)}
	for _, e := range strings.Split(r.sig, ",") {
		if rest, ok := strings.CutPrefix(e, "split:"); ok {
			c.Split = true
			c.Engines = append(c.Engines, strings.Split(rest, "+")...)
		} else if e != "" {
			c.Engines = append(c.Engines, e)
		}
	}
	return c
}

// kind of root item j: a style property is style; a size along the inline axis
// of a box whose content is only text (no element child with a box) is text;
// anything else is layout.
func (a *attribution) kind(j int) CauseKind {
	it := a.items[j]
	switch it.ax {
	case axisStyle:
		return CauseStyle
	case axisWidth, axisHeight:
		inline := axisWidth
		if wm := a.ref.Nodes[it.node].Style["writing-mode"]; strings.HasPrefix(wm, "vertical") || strings.HasPrefix(wm, "sideways") {
			inline = axisHeight
		}
		if it.ax == inline && !a.hasBoxedChild(it.node) {
			return CauseText
		}
	}
	return CauseLayout
}

func (a *attribution) hasBoxedChild(n int) bool {
	for j := n + 1; j < len(a.ref.Nodes) && a.isAncestor(n, j); j++ {
		if a.ref.Nodes[j].Parent == n && len(a.ref.Nodes[j].Rects) > 0 {
			return true
		}
	}
	return false
}

// isAncestor reports whether node anc is a proper ancestor of node n.
func (a *attribution) isAncestor(anc, n int) bool {
	return anc < n && n <= a.end[anc]
}

// shrinks reports whether node n's width comes from its content.
func (a *attribution) shrinks(n int) bool {
	s := a.ref.Nodes[n].Style
	d := s["display"]
	return strings.HasPrefix(d, "inline") || strings.HasPrefix(d, "table") || d == "list-item inline" ||
		(s["float"] != "" && s["float"] != "none") || s["position"] == "absolute" || s["position"] == "fixed"
}

// find returns the first item of node n with the same engines as item j that ok
// accepts, or -1. A style item explains a geometry item only where its property
// sets that item's axis (setsAxis) and it is not inherited from the root.
func (a *attribution) find(n, j int, ok func(attrItem) bool) int {
	it := a.items[j]
	for k := a.first[n]; k < a.first[n+1]; k++ {
		o := a.items[k]
		if it.ax != axisStyle && o.ax == axisStyle && (a.fromRoot[k] || !setsAxis(o.prop, it.prop)) {
			continue
		}
		if k != j && sameEngines(it, o) && ok(o) {
			return k
		}
	}
	return -1
}

// explainer returns the item that explains item j, or -1 (a root).
func (a *attribution) explainer(j int) int {
	it := a.items[j]
	n := it.node
	isAx := func(x ...axis) func(attrItem) bool {
		return func(o attrItem) bool { return slices.Contains(x, o.ax) }
	}
	is := func(props ...string) func(attrItem) bool {
		return func(o attrItem) bool { return slices.Contains(props, o.prop) }
	}
	// Same node.
	if it.ax == axisWidth && it.prop != "bounding.w" {
		if k := a.find(n, j, is("bounding.w")); k >= 0 {
			return k
		}
	}
	if it.ax == axisHeight && it.prop != "bounding.h" {
		if k := a.find(n, j, is("bounding.h")); k >= 0 {
			return k
		}
	}
	if it.ax != axisStyle {
		if k := a.find(n, j, isAx(axisStyle)); k >= 0 {
			return k
		}
	}
	// Other nodes.
	nearestEarlier := func(ok func(m int) func(attrItem) bool) int {
		for m := n - 1; m >= 0; m-- {
			if k := a.find(m, j, ok(m)); k >= 0 {
				return k
			}
		}
		return -1
	}
	nearestAncestor := func(ok func(attrItem) bool) int {
		for m := a.ref.Nodes[n].Parent; m >= 0; m = a.ref.Nodes[m].Parent {
			if k := a.find(m, j, ok); k >= 0 {
				return k
			}
		}
		return -1
	}
	firstDescendant := func(ok func(attrItem) bool) int {
		for m := n + 1; m < len(a.ref.Nodes) && a.isAncestor(n, m); m++ {
			if k := a.find(m, j, ok); k >= 0 {
				return k
			}
		}
		return -1
	}
	notAncestorOffset := func(m int) func(attrItem) bool {
		return func(o attrItem) bool { return o.ax != axisOffset || !a.isAncestor(m, n) }
	}
	notAncestor := func(m int) func(attrItem) bool {
		return func(attrItem) bool { return !a.isAncestor(m, n) }
	}
	switch it.ax {
	case axisOffset:
		if k := nearestEarlier(notAncestorOffset); k >= 0 {
			return k
		}
		return a.find(n, j, isAx(axisWidth, axisHeight))
	case axisHeight:
		return firstDescendant(func(o attrItem) bool { return o.ax == axisHeight || o.prop == "offset.y" })
	case axisWidth:
		if a.shrinks(n) {
			if k := firstDescendant(func(o attrItem) bool { return o.ax == axisWidth || o.prop == "offset.x" }); k >= 0 {
				return k
			}
			if strings.HasPrefix(a.ref.Nodes[n].Style["display"], "inline") {
				if k := nearestEarlier(notAncestor); k >= 0 {
					return k
				}
			}
			return nearestAncestor(isAx(axisWidth))
		}
		return nearestAncestor(isAx(axisWidth))
	case axisStyle:
		prop := it.prop
		if k := nearestAncestor(is(prop)); k >= 0 {
			return k
		}
		if strings.HasPrefix(prop, "style.margin-") || strings.HasPrefix(prop, "style.padding-") {
			return nearestAncestor(func(o attrItem) bool { return o.ax == axisWidth && proportional(it, o) })
		}
	}
	return -1
}
