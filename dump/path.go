package dump

import (
	"slices"
	"strconv"
	"strings"
)

// Path is node i's tag path from the root, as compare names a cause's box
// ("HTML>BODY>P"); a tag shared by several siblings gets its 1-based position among
// them ("DIV>P[2]"). "" for an index out of range.
func (d *Dump) Path(i int) string {
	if i < 0 || i >= len(d.Nodes) {
		return ""
	}
	var parts []string
	for n := i; n >= 0; n = d.Nodes[n].Parent {
		parts = append(parts, d.step(n))
		if len(parts) > len(d.Nodes) {
			break // a malformed parent chain; Validate rules it out
		}
	}
	slices.Reverse(parts)
	return strings.Join(parts, ">")
}

// step is node n's part of a path: its tag, with its position among the siblings
// of that tag when it has any.
func (d *Dump) step(n int) string {
	node := d.Nodes[n]
	if node.Parent < 0 {
		return node.Tag
	}
	same, pos := 0, 0
	for j := node.Parent + 1; j < len(d.Nodes); j++ { // children follow their parent
		if d.Nodes[j].Parent == node.Parent && d.Nodes[j].Tag == node.Tag {
			same++
			if j == n {
				pos = same
			}
		}
	}
	if same > 1 {
		return node.Tag + "[" + strconv.Itoa(pos) + "]"
	}
	return node.Tag
}
