package reflection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// How two states compare: exactly, per probe and field (attr_value, idl_value), on
// the fields' compact JSON; reflection has no quantization to tolerate. Package
// compare votes these fields across engines and scores a candidate with them.

// Fields are the two compared fields of an observation, in report order.
var Fields = []string{"attr_value", "idl_value"}

// Validate refuses a state that cannot be compared: null, or without engine_version.
func (s *State) Validate() error {
	if s == nil {
		return errors.New("reflect: null state")
	}
	if s.EngineVersion == "" {
		return fmt.Errorf("reflect: state %q has no engine_version", s.Engine)
	}
	return nil
}

// SameProbes requires two states to have observed the same probes in the same order.
func SameProbes(a, b *State) error {
	if len(a.Observations) != len(b.Observations) {
		return fmt.Errorf("reflect: %s has %d observations, %s has %d", a.Engine, len(a.Observations), b.Engine, len(b.Observations))
	}
	for i := range a.Observations {
		x, y := a.Observations[i], b.Observations[i]
		if x.Selector != y.Selector || x.Attr != y.Attr || x.IDL != y.IDL {
			return fmt.Errorf("reflect: observation %d is %s %s/%s in %s but %s %s/%s in %s",
				i, x.Selector, x.Attr, x.IDL, a.Engine, y.Selector, y.Attr, y.IDL, b.Engine)
		}
	}
	return nil
}

// FieldJSON is a field's value as compact JSON, the form compared exactly.
func (o Observation) FieldJSON(field string) string {
	var raw []byte
	if field == "attr_value" {
		raw, _ = json.Marshal(o.AttrValue)
	} else {
		raw = o.IDLValue
		if len(raw) == 0 {
			raw = []byte("null")
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// Property names a field of o as reports do: "attr_value(value)", "idl_value(htmlFor)".
func (o Observation) Property(field string) string {
	if field == "idl_value" {
		return field + "(" + o.IDL + ")"
	}
	return field + "(" + o.Attr + ")"
}

// difference is one field two states answer differently.
type difference struct {
	Probe    int    `json:"probe"` // index in the request's probes
	Selector string `json:"selector"`
	Property string `json:"property"` // "attr_value(value)" or "idl_value(htmlFor)"
	A        string `json:"a"`        // the JSON value
	B        string `json:"b"`
}

func (d difference) String() string {
	return fmt.Sprintf("%s %s: %s vs %s", d.Selector, d.Property, d.A, d.B)
}

// Compare compares two states field by field, exactly. It returns every field they
// answer differently (none: they agree), or an error when they cannot be compared:
// a state fails Validate, or the two observed different probes.
func Compare(a, b *State) ([]difference, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := SameProbes(a, b); err != nil {
		return nil, err
	}
	var out []difference
	for i, x := range a.Observations {
		for _, field := range Fields {
			if va, vb := x.FieldJSON(field), b.Observations[i].FieldJSON(field); va != vb {
				out = append(out, difference{Probe: i, Selector: x.Selector, Property: x.Property(field), A: va, B: vb})
			}
		}
	}
	return out, nil
}
