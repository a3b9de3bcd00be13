package compare

import (
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

// TraceVote is the engines' vote on a set of traces of one case.
type TraceVote struct {
	// Whole is the vote on the whole trace, two traces agreeing when trace.Compare
	// finds them Equal. It is the only vote when the record counts differ.
	Whole vote.Result `json:"whole"`
	// CountsAgree: every trace has the same number of records, so Records holds one
	// vote per position.
	CountsAgree bool `json:"counts_agree"`
	// Records is the vote per record position, two records agreeing when
	// trace.CompareRecords finds nothing. Nil when the counts differ: there is no
	// sound way to pair the records up.
	Records []RecordVote `json:"records,omitempty"`
}

// RecordVote is the vote on one record position.
type RecordVote struct {
	Seq int `json:"seq"`
	vote.Result
}

// Traces votes on traces, one per engine name (nil traces are left out), with
// vote.Vote's pairwise-agreement clustering over trace.Compare (whole traces) and
// trace.CompareRecords (per record): Unanimous, Majority with the Outlier named on a
// 2-1, Split on a three-way disagreement (Agree/Disagree/Single with fewer
// engines). No candidate trace is scored: traces are compared among the engines.
func Traces(traces map[string]*trace.Trace, tol trace.BufferTolerance) TraceVote {
	ts := make(map[string]*trace.Trace, len(traces))
	for name, t := range traces {
		if t != nil {
			ts[name] = t
		}
	}
	r := TraceVote{Whole: vote.Vote(ts, func(a, b *trace.Trace) bool { return trace.Compare(a, b, tol).Equal })}
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
	r.Records = make([]RecordVote, n)
	for i := 0; i < n; i++ {
		recs := make(map[string]*trace.Record, len(ts))
		for name, t := range ts {
			recs[name] = &t.Records[i]
		}
		r.Records[i] = RecordVote{Seq: i, Result: vote.Vote(recs, func(a, b *trace.Record) bool {
			return len(trace.CompareRecords(i, a, b, tol)) == 0
		})}
	}
	return r
}

// Outliers lists, per engine, the record positions where it was outvoted 2-1.
func (r TraceVote) Outliers() map[string][]int {
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
func (r TraceVote) Splits() []int {
	var out []int
	for _, rv := range r.Records {
		if !rv.Trusted() && rv.Kind != vote.Unstable {
			out = append(out, rv.Seq)
		}
	}
	return out
}
