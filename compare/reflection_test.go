package compare

// Unit tests of the reflection vote and scoring on hand-built states (no browser).

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func str(s string) *string { return &s }

// state builds an engine's state of probes #a value/value and #a disabled/disabled.
func state(engine string, value *string, idlValue, disabled string) *reflection.State {
	return &reflection.State{Engine: engine, EngineVersion: "1.0", Observations: []reflection.Observation{
		{Selector: "#a", Attr: "value", AttrValue: value, IDL: "value", IDLValue: json.RawMessage(idlValue)},
		{Selector: "#a", Attr: "disabled", AttrValue: nil, IDL: "disabled", IDLValue: json.RawMessage(disabled)},
	}}
}

func TestReflectionUnanimousAndCandidateScoredExactly(t *testing.T) {
	oracle := map[string]*reflection.State{
		"chromium": state("chromium", str("5"), `"5"`, "false"),
		"firefox":  state("firefox", str("5"), `"5"`, "false"),
		"webkit":   state("webkit", str("5"), ` "5" `, "false"), // spacing is not a difference
	}
	r, err := reflectionVote(oracle, state("candidate", str("5"), `"5"`, "false"))
	require.NoError(t, err)
	assert.Equal(t, Pass, r.Verdict)
	assert.Equal(t, &Axis{Compared: 4, Pass: true}, r.Reflection)
	assert.Equal(t, map[vote.Kind]int{vote.Unanimous: 4}, r.Votes)

	r, err = reflectionVote(oracle, state("candidate", str("5"), `5`, `{"$undefined":true}`))
	require.NoError(t, err)
	assert.Equal(t, Fail, r.Verdict)
	if diff := cmp.Diff([]reflectionFinding{
		{Probe: 0, Selector: "#a", Property: "idl_value(value)", Want: `"5"`, Got: `5`},
		{Probe: 1, Selector: "#a", Property: "idl_value(disabled)", Want: `false`, Got: `{"$undefined":true}`},
	}, r.ReflectionFindings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestReflectionNamesTheOutlierAndExcludesSplits(t *testing.T) {
	oracle := map[string]*reflection.State{
		"chromium": state("chromium", str("5"), `"5"`, "false"),
		"firefox":  state("firefox", str("5"), `"5"`, "true"),
		"webkit":   state("webkit", nil, `"5"`, `{"$undefined":true}`),
	}
	r, err := reflectionVote(oracle, state("candidate", nil, `"5"`, "true"))
	require.NoError(t, err)
	// attr_value(value): 2-1, webkit outlier; candidate's null fails against "5".
	// disabled idl: false / true / $undefined is a three-way split: untrusted.
	assert.Equal(t, Fail, r.Verdict)
	assert.Equal(t, &Axis{Compared: 3, Failed: 1, Untrusted: 1}, r.Reflection)
	assert.Equal(t, []Outlier{{Engine: "webkit", Property: "attr_value(value)", Count: 1}}, r.Outliers)
	assert.Equal(t, map[vote.Kind]int{vote.Unanimous: 2, vote.Majority: 1, vote.Split: 1}, r.Votes)
	require.Len(t, r.ReflectionFindings, 1)
	assert.Equal(t, `"5"`, r.ReflectionFindings[0].Want)
	assert.Equal(t, `null`, r.ReflectionFindings[0].Got, "absent attribute (null) is not the empty string")
}

func TestReflectionRefusesMismatchedProbesAndMissingVersion(t *testing.T) {
	a := state("chromium", str("5"), `"5"`, "false")
	b := state("firefox", str("5"), `"5"`, "false")
	b.Observations[1].IDL = "disabledd"
	_, err := reflectionVote(map[string]*reflection.State{"chromium": a, "firefox": b}, nil)
	assert.ErrorContains(t, err, "observation 1")
	c := state("webkit", str("5"), `"5"`, "false")
	c.EngineVersion = ""
	_, err = reflectionVote(map[string]*reflection.State{"webkit": c}, nil)
	assert.ErrorContains(t, err, "no engine_version")
	r, err := reflectionVote(map[string]*reflection.State{"chromium": a}, nil)
	require.NoError(t, err)
	assert.Equal(t, NoCandidate, r.Verdict)
}

// reflectionVote is ReflectionUnstable with no unstable field.
func reflectionVote(oracle map[string]*reflection.State, got *reflection.State) (*Report, error) {
	return ReflectionUnstable(oracle, got, nil)
}
