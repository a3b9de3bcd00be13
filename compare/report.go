package compare

import (
	"math"
	"sort"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

// Verdict is a case's outcome.
type Verdict string

const (
	Pass Verdict = "pass"
	Fail Verdict = "fail"
	// Discarded: a dump overflowed, so a scrollbar may have stolen viewport width
	// by a platform-dependent amount. Never scored.
	Discarded Verdict = "discarded"
	// Untrustworthy: the oracle engines gave no ground truth to score against (no
	// dumps, no majority shape, or every item the candidate could be scored on split).
	Untrustworthy Verdict = "untrustworthy"
	// NoCandidate: only the oracle engines were voted; nothing was scored.
	NoCandidate Verdict = "no-candidate"
	// NotComparable: the candidate's trace applied another emulation set than the
	// engines that voted (SameEmulation), so it was not scored.
	NotComparable Verdict = "not-comparable"
)

// Finding is one compared geometry item whose delta is not exactly zero. Items that
// compare exactly equal are counted in Axis.Compared but not listed.
type Finding struct {
	Node     int     `json:"node"`
	Tag      string  `json:"tag"`
	Property string  `json:"property"` // "bounding.w", "rects[1].h", "offset.x", "rects.count"
	Want     float64 `json:"want"`
	Got      float64 `json:"got"`
	Delta    float64 `json:"delta"`  // got - want, sign kept; for rects.count, fragments
	Within   bool    `json:"within"` // the exact verdict: |delta| within tolerance
}

// StyleFinding is one style-subset property whose value differs (StyleEqual: px
// lengths within the tolerance, the rest exactly); a property absent from a dump
// compares as "".
type StyleFinding struct {
	Node     int    `json:"node"`
	Tag      string `json:"tag"`
	Property string `json:"property"` // "style.display"
	Want     string `json:"want"`
	Got      string `json:"got"`
}

// Axis counts one attribution axis: layout (geometry) or style.
type Axis struct {
	Compared int `json:"compared"`
	Failed   int `json:"failed"`
	// Untrusted counts items the oracle engines split on (or, with two engines,
	// disagreed on). They are excluded from Compared and Failed.
	Untrusted int `json:"untrusted"`
	// Unstable counts items some voting engine answered differently between runs
	// (GeometryUnstable): neither voted nor scored, and not in Untrusted.
	Unstable int  `json:"unstable,omitempty"`
	Pass     bool `json:"pass"`
}

// Outlier counts how often one engine was outvoted on one property across a case.
type Outlier struct {
	Engine   string `json:"engine"`
	Property string `json:"property"` // a Finding/StyleFinding property, or "shape"
	Count    int    `json:"count"`
}

// Report is the outcome of one case.
type Report struct {
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Axes is what a geometry case was scored on, when not all of it (GeometryWith).
	Axes Axes `json:"axes,omitempty"`
	// Engines are the oracle engines whose dumps were voted (a shape outlier is
	// dropped before the per-item votes).
	Engines   []string         `json:"engines,omitempty"`
	ShapeVote vote.Kind        `json:"shape_vote,omitempty"`
	Shape     *dump.Divergence `json:"shape,omitempty"` // candidate against the reference shape
	Layout    Axis             `json:"layout"`
	Style     Axis             `json:"style"`
	// The dense score: sum and max of |delta| over every compared geometry item, in
	// px. Needs no threshold; rects.count mismatches are counted in Layout.Failed but
	// are not pixels and are left out.
	SumAbsDelta float64 `json:"sum_abs_delta"`
	MaxAbsDelta float64 `json:"max_abs_delta"`
	// Votes counts the per-item vote kinds among the oracle engines (only when more
	// than one engine voted).
	Votes         map[vote.Kind]int `json:"votes,omitempty"`
	Outliers      []Outlier         `json:"outliers,omitempty"`
	Findings      []Finding         `json:"findings,omitempty"`
	StyleFindings []StyleFinding    `json:"style_findings,omitempty"`
	// Causes attribute the non-unanimous items (outvoted, split, or failed by the
	// candidate) to the boxes that explain them (Attribute); set only when there are any.
	Causes []Cause `json:"causes,omitempty"`

	// Reflection is set on reflection cases (Reflection), which have no
	// geometry: attr_value and idl_value per probe, voted and scored exactly.
	Reflection         *Axis               `json:"reflection,omitempty"`
	ReflectionFindings []reflectionFinding `json:"reflection_findings,omitempty"`

	// Trace is set on trace cases (ScoreTraces): records voted and scored.
	Trace         *Axis           `json:"trace,omitempty"`
	TraceFindings []trace.Finding `json:"trace_findings,omitempty"`
	// Emulated is the emulation set the voting engines applied; NotComparable the
	// engines that applied another, left out of the vote (never outvoted).
	Emulated      []string              `json:"emulated,omitempty"`
	NotComparable []notComparableEngine `json:"not_comparable,omitempty"`
	// TraceVote is the engines' per-record vote, for the HTML report only.
	TraceVote *traceVote `json:"-"`
}

// notComparableEngine is an oracle engine left out of a trace vote, with the
// emulation set it applied (empty: none).
type notComparableEngine struct {
	Engine   string   `json:"engine"`
	Emulated []string `json:"emulated"`
}

// Failures returns the geometry findings outside tolerance, in node order.
func (r *Report) Failures() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if !f.Within {
			out = append(out, f)
		}
	}
	return out
}

// Worst returns up to n geometry findings: those outside tolerance first, then by
// larger |delta|, ties in node order.
func (r *Report) Worst(n int) []Finding {
	out := append([]Finding(nil), r.Findings...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Within != out[j].Within {
			return !out[i].Within
		}
		return math.Abs(out[i].Delta) > math.Abs(out[j].Delta)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// setOutliers lists the outliers counted per (engine, item) in engine then item
// order, and drops an empty Votes: what every scorer of one case ends with.
func (r *Report) setOutliers(outliers map[[2]string]int) {
	for k, n := range outliers {
		r.Outliers = append(r.Outliers, Outlier{Engine: k[0], Property: k[1], Count: n})
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
}

// hasGroundTruth reports whether r, a case voted without a candidate (got nil, on
// the axes that are scored), has any item the engines give ground truth on: a
// trusted vote, or a single engine's dump. Untrustworthy (no dumps, no majority
// shape, everything split or unstable) and Discarded (overflow) have none.
func (r *Report) hasGroundTruth() bool {
	switch r.Verdict {
	case Untrustworthy, Discarded, NotComparable:
		return false
	}
	if r.Votes == nil {
		// One engine votes nothing and is the reference; engines that agree on a
		// trace of no records voted no item and agree all the same.
		return true
	}
	return r.Votes[vote.Unanimous]+r.Votes[vote.Majority]+r.Votes[vote.Agree]+r.Votes[vote.Single] > 0
}

// CandidateError is the report of a case the candidate answered with an error
// (a crash, a timeout, its own message) instead of an answer. groundTruth is the same
// case voted without a candidate. Where the engines give ground truth
// (HasGroundTruth) the verdict is Fail; where they give none, it is groundTruth's own
// verdict (Untrustworthy or Discarded): nobody can say the candidate was wrong.
func CandidateError(groundTruth *Report, msg string) *Report {
	r := &Report{Verdict: Fail, Reason: "candidate error: " + msg}
	if groundTruth != nil && !groundTruth.hasGroundTruth() {
		r.Verdict = groundTruth.Verdict
		if r.Verdict == NoCandidate || r.Verdict == "" {
			r.Verdict = Untrustworthy
		}
		r.Reason += "; no ground truth: " + groundTruth.Reason
		if groundTruth.Reason == "" {
			r.Reason += "the engines agree on no item"
		}
	}
	return r
}
