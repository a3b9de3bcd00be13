package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/vote"
)

// NodeOutcomes places each outvoted, split and failed item on its node, and its
// tallies agree with Voted's counters on the same case (hand-built dumps: a unit
// test of the comparison, no engine involved).
func TestNodeOutcomesPlaceEachVote(t *testing.T) {
	o := oracle3()
	shift(o["firefox"], 3, 2, 0)                 // firefox outvoted on node 3's offset.x
	o["chromium"].Nodes[2].Bounding.H = 50       // node 2's height splits three ways
	o["firefox"].Nodes[2].Bounding.H = 51        //
	o["webkit"].Nodes[2].Bounding.H = 52         //
	o["webkit"].Nodes[1].Style["float"] = "left" // webkit outvoted on node 1's style
	got := base("candidate")
	got.Nodes[4].Bounding.W = 31 // the candidate fails node 4's width
	got.Nodes[2].Bounding.H = 50

	out, err := NodeOutcomes(o, got, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Equal(t, []string{"chromium", "firefox", "webkit"}, out.Engines)
	require.Len(t, out.Nodes, 5)
	var status []NodeStatus
	for _, n := range out.Nodes {
		status = append(status, n.Status)
	}
	assert.Equal(t, []NodeStatus{NodeOK, NodeOutvoted, NodeSplit, NodeOutvoted, NodeFailed}, status)
	assert.Equal(t, []string{"webkit"}, out.Nodes[1].Outvoted)
	assert.Equal(t, []string{"firefox"}, out.Nodes[3].Outvoted)

	it := out.Nodes[4].Items
	require.Len(t, it, 1)
	assert.Equal(t, "bounding.w", it[0].Property)
	assert.Equal(t, "30", it[0].Want)
	assert.Equal(t, "31", it[0].Values["candidate"])
	require.NotNil(t, it[0].Delta)
	assert.InDelta(t, 1, *it[0].Delta, 1e-12)
	assert.True(t, it[0].Failed)

	// The same case through Voted: per-engine outvoted counts, failures and
	// untrusted items are the same numbers.
	r := mustGeometry(t, o, got)
	outvoted, failed, split := map[string]int{}, 0, 0
	for _, n := range out.Nodes {
		for _, it := range n.Items {
			if it.Vote == vote.Majority {
				outvoted[it.Outlier]++
			}
			if it.Failed {
				failed++
			}
			if it.Vote == vote.Split {
				split++
			}
		}
	}
	want := map[string]int{}
	for _, ol := range r.Outliers {
		want[ol.Engine] += ol.Count
	}
	assert.Equal(t, want, outvoted)
	assert.Equal(t, r.Layout.Failed+r.Style.Failed, failed)
	assert.Equal(t, r.Layout.Untrusted+r.Style.Untrusted, split)
}

// A shape outlier is dropped from the per-node vote, and a candidate with another
// shape is not scored node by node; with no majority shape there are no nodes.
func TestNodeOutcomesShape(t *testing.T) {
	o := oracle3()
	o["webkit"].Nodes = o["webkit"].Nodes[:4]
	got := base("candidate")
	got.Nodes[4].Tag = "B"
	out, err := NodeOutcomes(o, got, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Equal(t, "webkit", out.ShapeOutlier)
	assert.Equal(t, []string{"chromium", "firefox"}, out.Engines)
	require.NotNil(t, out.Shape)
	assert.Equal(t, 4, out.Shape.Index)
	for _, n := range out.Nodes {
		assert.Equal(t, NodeOK, n.Status)
	}

	o["firefox"].Nodes = o["firefox"].Nodes[:3]
	out, err = NodeOutcomes(o, nil, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Nil(t, out.Nodes)

	_, err = NodeOutcomes(map[string]*dump.Dump{"chromium": {}}, nil, dump.DefaultTolerance)
	assert.Error(t, err)
}
