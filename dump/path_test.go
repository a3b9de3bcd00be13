package dump

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Path names a node as compare names a cause's box, and Find goes back: the head's
// nodes come first in a walk, so the P is not Nodes[2].
func TestFindGoesBackFromACausesPath(t *testing.T) {
	d := &Dump{Nodes: []Node{
		{Index: 0, Parent: -1, Tag: "HTML"},
		{Index: 1, Parent: 0, Tag: "HEAD"},
		{Index: 2, Parent: 0, Tag: "BODY"},
		{Index: 3, Parent: 2, Tag: "P"},
		{Index: 4, Parent: 2, Tag: "DIV"},
		{Index: 5, Parent: 2, Tag: "P"},
	}}
	assert.Equal(t, "HTML>BODY>P[2]", d.Path(5))
	assert.Equal(t, "HTML>BODY>DIV", d.Path(4))
	i, ok := d.find("HTML>BODY>P[1]")
	assert.True(t, ok)
	assert.Equal(t, 3, i)
	_, ok = d.find("HTML>BODY>P")
	assert.False(t, ok, "two P siblings: each is named by its position")
	assert.Equal(t, "", d.Path(9))
}

// find is the index of the node whose Path is path, and whether there is one: the
// way back from a cause's name to its node ("HTML>BODY>P" is not Nodes[2] when the
// head is walked).
func (d *Dump) find(path string) (int, bool) {
	for i := range d.Nodes {
		if d.Path(i) == path {
			return i, true
		}
	}
	return -1, false
}
