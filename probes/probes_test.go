package probes

import (
	"testing"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProbeNamesAreUniqueAndSelectable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range all {
		assert.False(t, seen[p.Name], "duplicate probe %s", p.Name)
		seen[p.Name] = true
		assert.NotEmpty(t, p.Description, p.Name)
	}
	got, err := Select([]string{"box-model", "audio-offline-oscillator"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "audio-offline-oscillator", got[0].Name, "all's order, not the argument's")
	_, err = Select([]string{"nope"})
	assert.ErrorContains(t, err, `unknown probe "nope"`)
	every, err := Select(nil)
	require.NoError(t, err)
	assert.Equal(t, all, every, "no names selects every probe")
}

func TestSelfCheckCasesAreProbes(t *testing.T) {
	// One definition each: the startup self-check's cases are probes here.
	kinds := map[kind]bool{}
	for _, c := range SelfChecks() {
		got, err := Select([]string{c.Name})
		require.NoError(t, err, c.Name)
		p := got[0]
		assert.Equal(t, c.Request.Op, p.Request.Op)
		assert.Equal(t, c.Request.HTML, p.Request.HTML, "same definition, not a copy of the text")
		assert.Equal(t, c.Request.Script, p.Request.Script)
		assert.Equal(t, c.Request.Probes, p.Request.Probes)
		assert.Empty(t, p.Profile, "a self-check case runs under every profile")
		assert.Equal(t, c.Expect == nil, p.Expect == nil, "the probe checks what the self-check checks")
		kinds[p.kind()] = true
	}
	assert.Equal(t, map[kind]bool{kindGeometry: true, kindTrace: true, kindReflect: true}, kinds)
}

func TestGeometryVoteFromItemVotes(t *testing.T) {
	engines := []string{"chromium", "firefox", "webkit"}
	assert.Equal(t, vote.Unanimous, geometryVote(&compare.Report{Votes: map[vote.Kind]int{vote.Unanimous: 5}}, engines).Kind)
	assert.Equal(t, vote.Result{Kind: vote.Majority, Majority: []string{"chromium", "webkit"}, Outlier: "firefox"},
		geometryVote(&compare.Report{Votes: map[vote.Kind]int{vote.Majority: 2},
			Outliers: []compare.Outlier{{Engine: "firefox", Property: "bounding.w", Count: 2}}}, engines))
	assert.Equal(t, vote.Split, geometryVote(&compare.Report{Outliers: []compare.Outlier{
		{Engine: "firefox", Property: "bounding.w"}, {Engine: "webkit", Property: "offset.y"}}}, engines).Kind)
	assert.Equal(t, vote.Split, geometryVote(&compare.Report{Votes: map[vote.Kind]int{vote.Split: 1}}, engines).Kind)
	assert.Equal(t, vote.Split, geometryVote(&compare.Report{Verdict: compare.Untrustworthy}, engines).Kind)
	assert.Equal(t, vote.Agree, geometryVote(&compare.Report{}, engines[:2]).Kind)
}
