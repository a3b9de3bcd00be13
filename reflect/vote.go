package reflect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/vote"
)

// Voted votes the oracle engines' states per observation and field (attr_value and
// idl_value, each exactly: reflection has no quantization to tolerate) and scores a
// candidate's state against each majority value. got may be nil to only vote the
// engines. Items the engines split on (or, with two engines, disagree on) are
// untrusted: counted, not scored.
//
// An error means the input is refused: a state without engine_version, or states
// that observed different probes.
func Voted(oracle map[string]*State, got *State) (*compare.Report, error) {
	r := &compare.Report{Reflection: &compare.Axis{}, Votes: map[vote.Kind]int{}}
	if len(oracle) == 0 {
		r.Verdict, r.Reason = compare.Untrustworthy, "no oracle states"
		return r, nil
	}
	var ref *State
	for _, name := range slices.Sorted(maps.Keys(oracle)) {
		s := oracle[name]
		if err := s.check(); err != nil {
			return nil, err
		}
		if ref == nil {
			ref = s
		} else if err := sameProbes(ref, s); err != nil {
			return nil, err
		}
		r.Engines = append(r.Engines, name)
	}
	if got != nil {
		if err := sameProbes(ref, got); err != nil {
			return nil, fmt.Errorf("candidate: %w", err)
		}
	}
	outliers := map[[2]string]int{}
	for i, o := range ref.Observations {
		for _, field := range []string{"attr_value", "idl_value"} {
			values := map[string]string{}
			for name, s := range oracle {
				values[name] = fieldJSON(s.Observations[i], field)
			}
			res := vote.Vote(values, func(a, b string) bool { return a == b })
			if len(values) > 1 {
				r.Votes[res.Kind]++
			}
			property := field + "(" + o.Attr + ")"
			if field == "idl_value" {
				property = field + "(" + o.IDL + ")"
			}
			if res.Kind == vote.Majority {
				outliers[[2]string{res.Outlier, property}]++
			}
			if got == nil {
				continue
			}
			if !res.Trusted() {
				r.Reflection.Untrusted++
				continue
			}
			r.Reflection.Compared++
			want, have := values[res.Representative()], fieldJSON(got.Observations[i], field)
			if want != have {
				r.Reflection.Failed++
				r.ReflectionFindings = append(r.ReflectionFindings, compare.ReflectionFinding{
					Probe: i, Selector: o.Selector, Property: property, Want: want, Got: have})
			}
		}
	}
	for k, n := range outliers {
		r.Outliers = append(r.Outliers, compare.Outlier{Engine: k[0], Property: k[1], Count: n})
	}
	sort.Slice(r.Outliers, func(i, j int) bool {
		a, b := r.Outliers[i], r.Outliers[j]
		if a.Engine != b.Engine {
			return a.Engine < b.Engine
		}
		return a.Property < b.Property
	})
	if len(r.Votes) == 0 {
		r.Votes = nil
	}
	switch {
	case got == nil:
		r.Verdict = compare.NoCandidate
	case r.Reflection.Compared == 0 && r.Reflection.Untrusted > 0:
		r.Verdict, r.Reason = compare.Untrustworthy, "the oracle engines split on every observation"
	case r.Reflection.Failed > 0:
		r.Verdict = compare.Fail
	default:
		r.Verdict, r.Reflection.Pass = compare.Pass, true
	}
	return r, nil
}

func (s *State) check() error {
	if s == nil {
		return errors.New("reflect: null state")
	}
	if s.EngineVersion == "" {
		return fmt.Errorf("reflect: state %q has no engine_version", s.Engine)
	}
	return nil
}

// sameProbes requires two states to have observed the same probes in the same order.
func sameProbes(a, b *State) error {
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

// fieldJSON is a field's value as compact JSON, the form compared exactly.
func fieldJSON(o Observation, field string) string {
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
