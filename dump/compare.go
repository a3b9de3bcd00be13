package dump

import (
	"fmt"
	"math"
)

// How two dumps compare (docs/dump-format.md, "Comparison"): their shapes first, and only
// when those match, each geometry item within a tolerance. Package compare walks the
// items, votes them across engines and scores a candidate with these rules.

// DefaultTolerance is the spec's 1/60 px: Gecko's app unit, the coarsest engine
// quantization. Differences within it are quantization noise.
const DefaultTolerance = 1.0 / 60

// slack absorbs float rounding in got-want: one app unit on a coordinate near 100
// subtracts to 0.016666666666668561, a hair over 1.0/60, and must still be within.
// Coordinates are far below the magnitude where 1e-9 px would matter.
const slack = 1e-9

// Within is the exact verdict on one geometry item: |delta| is within tol.
func Within(delta, tol float64) bool { return math.Abs(delta) <= tol+slack }

// Divergence is a shape mismatch: the first node index where (tag, depth, parent)
// differs, or where one node list ends.
type Divergence struct {
	Index     int    `json:"index"`
	NodeDelta int    `json:"node_delta"` // len(got.Nodes) - len(want.Nodes)
	Want      string `json:"want"`       // "DIV depth 2 parent 1", or "end" past the last node
	Got       string `json:"got"`
}

// Shape compares the (tag, depth, parent) sequences and returns the first
// divergence, or nil when they match.
func Shape(want, got *Dump) *Divergence {
	w, g := want.Nodes, got.Nodes
	n := min(len(w), len(g))
	i := 0
	for i < n && w[i].Tag == g[i].Tag && w[i].Depth == g[i].Depth && w[i].Parent == g[i].Parent {
		i++
	}
	if i == n && len(w) == len(g) {
		return nil
	}
	return &Divergence{Index: i, NodeDelta: len(g) - len(w), Want: describe(w, i), Got: describe(g, i)}
}

func describe(nodes []Node, i int) string {
	if i >= len(nodes) {
		return "end"
	}
	n := nodes[i]
	return fmt.Sprintf("%s depth %d parent %d", n.Tag, n.Depth, n.Parent)
}
