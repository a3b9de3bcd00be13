package reflection

// Unit tests of Compare, the rule for two states, on hand-built states (no browser).

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func obsState(engine string, attr *string, idl string) *State {
	return &State{Engine: engine, EngineVersion: "1", Observations: []Observation{
		{Selector: "#a", Attr: "value", AttrValue: attr, IDL: "value", IDLValue: json.RawMessage(idl)}}}
}

func TestCompareIsExactPerFieldOnCompactJSON(t *testing.T) {
	five := "5"
	diffs, err := Compare(obsState("chromium", &five, `"5"`), obsState("webkit", &five, ` "5" `))
	require.NoError(t, err)
	assert.Empty(t, diffs, "spacing in the JSON is not a difference")

	diffs, err = Compare(obsState("chromium", &five, `"5"`), obsState("webkit", nil, `5`))
	require.NoError(t, err)
	assert.Equal(t, []difference{
		{Probe: 0, Selector: "#a", Property: "attr_value(value)", A: `"5"`, B: `null`},
		{Probe: 0, Selector: "#a", Property: "idl_value(value)", A: `"5"`, B: `5`},
	}, diffs)
	assert.Equal(t, `#a attr_value(value): "5" vs null`, diffs[0].String())
}

func TestCompareRefusesWhatCannotBeCompared(t *testing.T) {
	a := obsState("chromium", nil, `""`)
	b := obsState("firefox", nil, `""`)
	b.Observations[0].Attr = "type"
	_, err := Compare(a, b)
	assert.ErrorContains(t, err, "observation 0")
	b = obsState("firefox", nil, `""`)
	b.EngineVersion = ""
	_, err = Compare(a, b)
	assert.ErrorContains(t, err, "no engine_version")
	_, err = Compare(a, nil)
	assert.ErrorContains(t, err, "null state")
}
