package compare

import (
	"fmt"
	"strconv"

	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

// traceVote is the engines' vote on a set of traces of one case.
type traceVote struct {
	// Whole is the vote on the whole trace, two traces agreeing when trace.Compare
	// finds them Equal. It is the only vote when the record counts differ.
	Whole vote.Result `json:"whole"`
	// CountsAgree: every trace has the same number of records, so Records holds one
	// vote per position.
	CountsAgree bool `json:"counts_agree"`
	// Records is the vote per record position, two records agreeing when
	// trace.CompareRecords finds nothing. Nil when the counts differ: there is no
	// sound way to pair the records up.
	Records []recordVote `json:"records,omitempty"`
}

// recordVote is the vote on one record position.
type recordVote struct {
	Seq int `json:"seq"`
	vote.Result
}

// Traces votes on traces, one per engine name (nil traces are left out), with
// vote.Vote's pairwise-agreement clustering over trace.Compare (whole traces) and
// trace.CompareRecords (per record): Unanimous, Majority with the Outlier named on a
// 2-1, Split on a three-way disagreement (Agree/Disagree/Single with fewer
// engines). No candidate trace is scored: traces are compared among the engines.
func Traces(traces map[string]*trace.Trace, tol trace.BufferTolerance) traceVote {
	ts := make(map[string]*trace.Trace, len(traces))
	for name, t := range traces {
		if t != nil {
			ts[name] = t
		}
	}
	r := traceVote{Whole: vote.Vote(ts, func(a, b *trace.Trace) bool { return trace.Compare(a, b, tol).Equal })}
	n := -1
	r.CountsAgree = true
	for _, t := range ts {
		if n >= 0 && len(t.Records) != n {
			r.CountsAgree = false
		}
		n = len(t.Records)
	}
	if !r.CountsAgree || n <= 0 {
		return r
	}
	r.Records = make([]recordVote, n)
	for i := 0; i < n; i++ {
		recs := make(map[string]*trace.Record, len(ts))
		for name, t := range ts {
			recs[name] = &t.Records[i]
		}
		r.Records[i] = recordVote{Seq: i, Result: vote.Vote(recs, func(a, b *trace.Record) bool {
			return len(trace.CompareRecords(i, a, b, tol)) == 0
		})}
	}
	return r
}

// Outliers lists, per engine, the record positions where it was outvoted 2-1.
func (r traceVote) Outliers() map[string][]int {
	out := map[string][]int{}
	for _, rv := range r.Records {
		if rv.Outlier != "" {
			out[rv.Outlier] = append(out[rv.Outlier], rv.Seq)
		}
	}
	return out
}

// Splits lists the record positions where no majority formed (Split or Disagree;
// not Unstable, which was not voted).
func (r traceVote) Splits() []int {
	var out []int
	for _, rv := range r.Records {
		if !rv.Trusted() && rv.Kind != vote.Unstable {
			out = append(out, rv.Seq)
		}
	}
	return out
}

// maxTraceFindings bounds a case's listed candidate findings, as trace.Compare
// bounds its own.
const maxTraceFindings = 200

// ScoreTraces scores a candidate's trace against the oracle engines' vote, record
// by record (docs/traces.md): the engines vote
// each record position as Traces does, and the candidate's record is compared with
// trace.CompareRecords to the majority's. got may be nil to only vote the engines.
//
// Only engines that applied the same emulation set vote (ComparableEngines); the
// others are listed in NotComparable, never outvoted. A candidate whose set is not
// the voters' is NotComparable, not scored. When the voters' record counts differ
// only the whole-trace vote is taken: a majority of equal traces makes every record
// its own, otherwise nothing is trusted. Records some voter's runs answered
// differently (unstable) are neither voted nor scored.
//
// An error means the input is refused: a trace that breaks trace.Validate.
func ScoreTraces(oracle map[string]*trace.Trace, got *trace.Trace, tol trace.BufferTolerance, unstable Unstable) (*Report, error) {
	r := &Report{Trace: &Axis{}, Votes: map[vote.Kind]int{}}
	sets := map[string][]string{}
	ts := map[string]*trace.Trace{}
	for name, t := range oracle {
		if t == nil {
			continue
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		sets[name], ts[name] = t.Emulated, t
	}
	if got != nil {
		if err := got.Validate(); err != nil {
			return nil, fmt.Errorf("candidate: %w", err)
		}
	}
	if len(ts) == 0 {
		r.Votes = nil
		r.Verdict, r.Reason = Untrustworthy, "no oracle traces"
		return r, nil
	}
	voters, apart := ComparableEngines(sets)
	r.Engines, r.Emulated = voters, emulationSet(sets[voters[0]])
	for _, e := range apart {
		r.NotComparable = append(r.NotComparable, notComparableEngine{Engine: e, Emulated: append([]string{}, emulationSet(sets[e])...)})
		delete(ts, e)
	}
	us := unstable.set()
	if e := us.wholeIn(voters); e != "" {
		r.Votes = nil
		r.Verdict, r.Reason = Untrustworthy, e+"'s answer is unstable as a whole"
		return r, nil
	}
	v := Traces(ts, tol)
	votersUnstable := Unstable{}
	for _, e := range voters {
		if items, ok := unstable[e]; ok {
			votersUnstable[e] = items
		}
	}
	v.markUnstable(votersUnstable)
	r.TraceVote = &v
	voted := len(ts) > 1
	outliers := map[[2]string]int{}
	// ref[i] is the voted record at position i; nil when untrusted or unstable.
	var ref []*trace.Record
	unstableAt := map[int]bool{}
	if v.CountsAgree {
		ref = make([]*trace.Record, len(v.Records))
		for i, rv := range v.Records {
			rec := &ts[voters[0]].Records[i]
			if rv.Kind == vote.Unstable {
				unstableAt[i] = true
				if voted {
					r.Votes[vote.Unstable]++
				}
				r.Trace.Unstable++
				continue
			}
			if voted {
				r.Votes[rv.Kind]++
			}
			if rv.Kind == vote.Majority {
				outliers[[2]string{rv.Outlier, rec.Kind + ":" + rec.Label}]++
			}
			if rv.Trusted() {
				ref[i] = &ts[rv.Representative()].Records[i]
			}
		}
	} else {
		// Counts differ: one item, the whole trace.
		r.Votes[v.Whole.Kind]++
		if v.Whole.Kind == vote.Majority {
			outliers[[2]string{v.Whole.Outlier, itemTraceCount}]++
		}
		if v.Whole.Trusted() {
			recs := ts[v.Whole.Representative()].Records
			ref = make([]*trace.Record, len(recs))
			for i := range recs {
				ref[i] = &recs[i]
			}
		}
	}
	r.setOutliers(outliers)
	switch {
	case got == nil:
		r.Verdict = NoCandidate
		return r, nil
	case !sameEmulation(got.Emulated, r.Emulated):
		r.Verdict, r.Reason = NotComparable, fmt.Sprintf("the candidate applied emulation %s, the voting engines %s",
			EmulationText(got.Emulated), EmulationText(r.Emulated))
		return r, nil
	case ref == nil:
		r.Verdict, r.Reason = Untrustworthy, "the oracle engines' record counts split"
		return r, nil
	case len(got.Records) != len(ref):
		r.Verdict, r.Reason = Fail, fmt.Sprintf("record count: want %d, got %d", len(ref), len(got.Records))
		r.TraceFindings = []trace.Finding{{Seq: -1, Kind: trace.MismatchCount, A: strconv.Itoa(len(ref)), B: strconv.Itoa(len(got.Records))}}
		return r, nil
	}
	for i, want := range ref {
		switch {
		case unstableAt[i]:
		case want == nil:
			r.Trace.Untrusted++
		default:
			r.Trace.Compared++
			if fs := trace.CompareRecords(i, want, &got.Records[i], tol); len(fs) > 0 {
				r.Trace.Failed++
				r.TraceFindings = append(r.TraceFindings, fs[:min(len(fs), maxTraceFindings-len(r.TraceFindings))]...)
			}
		}
	}
	switch {
	case r.Trace.Compared == 0 && r.Trace.Untrusted > 0:
		r.Verdict, r.Reason = Untrustworthy, "the oracle engines split on every record"
	case r.Trace.Compared == 0 && r.Trace.Unstable > 0:
		r.Verdict, r.Reason = Untrustworthy, "every record was unstable or split"
	case r.Trace.Failed > 0:
		r.Verdict = Fail
	default:
		r.Verdict, r.Trace.Pass = Pass, true
	}
	return r, nil
}
