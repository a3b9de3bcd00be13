// Package vote clusters the engines' values of one item: pairwise agreement over one
// value per engine, naming the outlier on a 2-1 split and calling a three-way
// disagreement Split, untrustworthy. It knows no answer type: the caller passes the
// agreement, and package compare passes each answer package's rule (dump.Within,
// reflect's exact fields, trace.Compare and trace.CompareRecords).
package vote

import "sort"

// Kind is how the engines voted.
type Kind string

const (
	// Unanimous: three or more engines, every pair agrees.
	Unanimous Kind = "unanimous"
	// Majority: all engines but one agree pairwise; the one left is Outlier.
	Majority Kind = "majority"
	// Split: three or more engines and no Majority. The item is untrustworthy.
	Split Kind = "split"
	// Agree: exactly two engines, and they agree. Two engines can outvote nobody.
	Agree Kind = "agree"
	// Disagree: exactly two engines, and they disagree. With no third engine there
	// is no majority, so neither value is ground truth: untrustworthy.
	Disagree Kind = "disagree"
	// Single: one engine. Its value is the only reference there is, but no vote.
	Single Kind = "single"
	// None: no engines at all.
	None Kind = "none"
	// Unstable: some engine answered the item differently between runs of the case
	// (compare.Unstable), so it was not voted. Never trusted.
	Unstable Kind = "unstable"
)

// Result is the outcome of one vote.
type Result struct {
	Kind Kind `json:"kind"`
	// Majority lists, sorted, the engines whose value is the reference: every engine
	// for Unanimous, Agree and Single; all but Outlier for Majority; empty otherwise.
	Majority []string `json:"majority,omitempty"`
	// Outlier is the engine outvoted on a Majority, empty for every other Kind.
	Outlier string `json:"outlier,omitempty"`
}

// Trusted reports whether the vote produced a reference value to score against.
// Split, Disagree and None did not.
func (r Result) Trusted() bool { return len(r.Majority) > 0 }

// Representative names the engine whose value stands for the majority: the first
// Majority engine by name, or "" when the vote is not Trusted. Majority members
// agree within the caller's tolerance, so any of them would do; picking the first
// keeps the choice deterministic.
func (r Result) Representative() string {
	if len(r.Majority) == 0 {
		return ""
	}
	return r.Majority[0]
}

// Vote clusters values, one per engine name, by pairwise agreement.
//
// agree is assumed symmetric and is called once per unordered pair, the earlier
// name (sorted) first, so map iteration order never affects the result.
//
// Agreement within a tolerance is not transitive, so the rule is stated on pairs,
// not on clusters: with n >= 3 engines the vote is Unanimous when every pair agrees,
// Majority when exactly one set of n-1 engines agrees pairwise (the engine left out
// is the Outlier), and Split otherwise. In particular, with three engines where
// a~b and b~c but not a~c, both {a,b} and {b,c} qualify; the middle value is within
// tolerance of two values that are themselves further apart than tolerance, so
// there is no single truth at this tolerance and the vote is Split.
// With 4 or more engines this makes a 2-2 or 2-1-1 outcome Split as well.
func Vote[T any](values map[string]T, agree func(a, b T) bool) Result {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)

	switch len(names) {
	case 0:
		return Result{Kind: None}
	case 1:
		return Result{Kind: Single, Majority: names}
	case 2:
		if agree(values[names[0]], values[names[1]]) {
			return Result{Kind: Agree, Majority: names}
		}
		return Result{Kind: Disagree}
	}

	// disagreements[i] counts the engines engine i disagrees with.
	disagreements := make([]int, len(names))
	total := 0
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if !agree(values[names[i]], values[names[j]]) {
				disagreements[i]++
				disagreements[j]++
				total++
			}
		}
	}
	if total == 0 {
		return Result{Kind: Unanimous, Majority: names}
	}
	// The n-1 engines without engine k agree pairwise exactly when every
	// disagreement involves k, i.e. k is in all of them. Two such k would need every
	// disagreement to be between them, so total == 1 and the set is unique;
	// otherwise exactly one k qualifies or none does.
	outlier := -1
	for k, d := range disagreements {
		if d == total {
			if outlier >= 0 {
				return Result{Kind: Split} // a~b~c chain: {a,b} and {b,c} both qualify
			}
			outlier = k
		}
	}
	if outlier < 0 {
		return Result{Kind: Split}
	}
	majority := make([]string, 0, len(names)-1)
	majority = append(majority, names[:outlier]...)
	majority = append(majority, names[outlier+1:]...)
	return Result{Kind: Majority, Majority: majority, Outlier: names[outlier]}
}
