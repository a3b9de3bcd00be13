package compare

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/vote"
)

// reflectionFinding is one probe field whose candidate value differs from the vote.
type reflectionFinding struct {
	Probe    int    `json:"probe"` // index in the request's probes
	Selector string `json:"selector"`
	Property string `json:"property"` // "attr_value(value)" or "idl_value(htmlFor)"
	Want     string `json:"want"`     // the JSON value
	Got      string `json:"got"`
}

// ReflectionUnstable scores a candidate's reflection state against the oracle engines' vote:
// per observation and field (reflect.Fields), the engines vote exactly on the
// field's JSON (reflect's rule for two states) and the candidate is scored against
// the majority value. got may be nil to only vote the engines. Items the engines
// split on (or, with two engines, disagree on) are untrusted: counted, not scored.
//
// An error means the input is refused: a state without engine_version, or states
// that observed different probes.
//
// unstable is the engines' unstable fields (a response's "unstable",
// "<probe>:<property>"): a field unstable in any engine is not voted
// (vote.Unstable, counted in Votes and Reflection.Unstable) and not scored; an engine
// unstable as a whole ("*") makes the case Untrustworthy.
func ReflectionUnstable(oracle map[string]*reflection.State, got *reflection.State, unstable Unstable) (*Report, error) {
	r := &Report{Reflection: &Axis{}, Votes: map[vote.Kind]int{}}
	if len(oracle) == 0 {
		r.Verdict, r.Reason = Untrustworthy, "no oracle states"
		return r, nil
	}
	var ref *reflection.State
	for _, name := range slices.Sorted(maps.Keys(oracle)) {
		s := oracle[name]
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if ref == nil {
			ref = s
		} else if err := reflection.SameProbes(ref, s); err != nil {
			return nil, err
		}
		r.Engines = append(r.Engines, name)
	}
	if got != nil {
		if err := reflection.SameProbes(ref, got); err != nil {
			return nil, fmt.Errorf("candidate: %w", err)
		}
	}
	us := unstable.set()
	if e := us.wholeIn(r.Engines); e != "" {
		r.Votes = nil
		r.Verdict, r.Reason = Untrustworthy, e+"'s answer is unstable as a whole"
		return r, nil
	}
	outliers := map[[2]string]int{}
	for i, o := range ref.Observations {
		for _, field := range reflection.Fields {
			property := o.Property(field)
			if us.any(r.Engines, strconv.Itoa(i)+":"+property) {
				if len(oracle) > 1 {
					r.Votes[vote.Unstable]++
				}
				r.Reflection.Unstable++
				continue
			}
			values := map[string]string{}
			for name, s := range oracle {
				values[name] = s.Observations[i].FieldJSON(field)
			}
			res := vote.Vote(values, func(a, b string) bool { return a == b })
			if len(values) > 1 {
				r.Votes[res.Kind]++
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
			want, have := values[res.Representative()], got.Observations[i].FieldJSON(field)
			if want != have {
				r.Reflection.Failed++
				r.ReflectionFindings = append(r.ReflectionFindings, reflectionFinding{
					Probe: i, Selector: o.Selector, Property: property, Want: want, Got: have})
			}
		}
	}
	r.setOutliers(outliers)
	switch {
	case got == nil:
		r.Verdict = NoCandidate
	case r.Reflection.Compared == 0 && r.Reflection.Untrusted > 0:
		r.Verdict, r.Reason = Untrustworthy, "the oracle engines split on every observation"
	case r.Reflection.Compared == 0 && r.Reflection.Unstable > 0:
		r.Verdict, r.Reason = Untrustworthy, "every observation was unstable or split"
	case r.Reflection.Failed > 0:
		r.Verdict = Fail
	default:
		r.Verdict, r.Reflection.Pass = Pass, true
	}
	return r, nil
}
