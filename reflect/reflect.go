// Package reflection (folder reflect/) holds the reflection answer of docs/dump-format.md
// ("Reflection protocol"): content-attribute and reflected-IDL state per probe, the
// in-page walk that reads it, and how two states compare (Compare: exactly, per
// field). Voting on the engines' states and scoring a candidate is package compare's
// (Reflection).
package reflection

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/layout-oracle/oracle/inpage"
)

// WalkJS reads every probe (the oracle runs the case's script first). Every engine evaluates exactly
// this text: inpage/reflect/walk.js.
var WalkJS = inpage.ReflectWalk

// Probe names one element (a bare #id), its content attribute and IDL property.
type Probe struct {
	Selector string `json:"selector"`
	Attr     string `json:"attr"`
	IDL      string `json:"idl,omitempty"` // defaults to Attr
}

// State is one engine's reflection dump of one case.
type State struct {
	Engine        string        `json:"engine"`
	EngineVersion string        `json:"engine_version"`
	Observations  []Observation `json:"observations"`
}

// Observation is one probe's reading. AttrValue is null when the attribute is absent;
// IDLValue is canonicalized ($num, $undefined, ...) and kept as the page's JSON.
type Observation struct {
	Selector  string          `json:"selector"`
	Attr      string          `json:"attr"`
	AttrValue *string         `json:"attr_value"`
	IDL       string          `json:"idl"`
	IDLValue  json.RawMessage `json:"idl_value"`
}

// bareID is a selector of the one form the spec's cases use: '#' and an identifier,
// with no combinator, class, attribute or pseudo part.
var bareID = regexp.MustCompile(`^#[A-Za-z0-9_\-\x{80}-\x{10FFFF}]+$`)

// CheckSelector accepts a bare #id and rejects anything else, naming the rule: the
// candidate side implements only #id lookup, so a general selector would score
// engines on something the candidate cannot answer.
func CheckSelector(s string) error {
	if !bareID.MatchString(s) {
		return fmt.Errorf("selector %q is not a bare #id (the reflection protocol's scope: '#' and an id, nothing else)", s)
	}
	return nil
}

// MaxStateBytes bounds one engine's observations as the answer line carries them
// (JSON-escaped): WalkJS's second argument. Past it that engine's answer is an error.
const MaxStateBytes = 4 << 20

// walkResult is what WalkJS returns.
type walkResult struct {
	Observations []Observation `json:"observations"`
	ProbeError   string        `json:"probeError"`
	OverLimit    string        `json:"overLimit"`
}

// ParseWalk turns WalkJS's result into observations, or the case's error.
func ParseWalk(raw json.RawMessage) ([]Observation, error) {
	var res walkResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("reflection walk returned malformed JSON: %v", err)
	}
	switch {
	case res.OverLimit != "":
		return nil, fmt.Errorf("the reflection state exceeded %d bytes (values and probes, as the answer carries them)", MaxStateBytes)
	case res.ProbeError != "":
		return nil, fmt.Errorf("%s", res.ProbeError)
	case res.Observations == nil:
		return nil, fmt.Errorf("reflection walk returned no observations")
	}
	return res.Observations, nil
}
