package compare

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/dump"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

// Item names, as a response's "unstable" lists carry them (docs/compare.md,
// "Unstable items"):
//
//   - geometry: "<node>:<property>" as in Finding and ItemRef ("3:bounding.w",
//     "0:style.display", "2:rects[1].h"); "shape" and "overflowed" when the runs
//     differ in shape or in overflow, which makes every item unstable;
//   - reflection: "<probe>:<property>" as in ReflectionFinding ("0:attr_value(value)");
//   - traces: "<seq>:record" per record position; "count", "timed_out" and
//     "is_secure_context" for what concerns the whole trace ("count": no record can
//     be paired, every record is unstable);
//   - AllItems ("*") for any kind: the whole answer is unstable, items unknown (a
//     store that saw two answers differ without comparing them).
const (
	AllItems        = "*"
	itemShape       = "shape"
	itemOverflowed  = "overflowed"
	itemTraceCount  = "count"
	itemTimedOut    = "timed_out"
	itemSecureCtx   = "is_secure_context"
	traceRecordProp = "record"
)

// String is the item's name in an "unstable" list: "3:bounding.w"; "shape" for a
// shape item.
func (r ItemRef) String() string {
	if r.Property == itemShape {
		return itemShape
	}
	return strconv.Itoa(r.Node) + ":" + r.Property
}

// wholeItems make every item of an answer unstable.
var wholeItems = []string{AllItems, itemShape, itemOverflowed, itemTraceCount}

// Unstable is a response's "unstable" field: per engine, the items that differed
// between its runs of the case. The zero value (nil) is "every item stable".
type Unstable map[string][]string

// set is u as engine -> item -> true, plus whether each engine is unstable on
// everything; nil when u lists nothing.
type unstableSet struct {
	items map[string]map[string]bool
	whole map[string]bool
}

func (u Unstable) set() *unstableSet {
	s := &unstableSet{items: map[string]map[string]bool{}, whole: map[string]bool{}}
	for e, items := range u {
		for _, it := range items {
			if slices.Contains(wholeItems, it) {
				s.whole[e] = true
			}
			if s.items[e] == nil {
				s.items[e] = map[string]bool{}
			}
			s.items[e][it] = true
		}
	}
	if len(s.items) == 0 {
		return nil
	}
	return s
}

// any reports whether item is unstable in any of engines.
func (s *unstableSet) any(engines []string, item string) bool {
	if s == nil {
		return false
	}
	for _, e := range engines {
		if s.whole[e] || s.items[e][item] {
			return true
		}
	}
	return false
}

// wholeIn is the first of engines unstable on every item, or "".
func (s *unstableSet) wholeIn(engines []string) string {
	if s == nil {
		return ""
	}
	for _, e := range engines {
		if s.whole[e] {
			return e
		}
	}
	return ""
}

// runNames names runs as vote.Vote's engines: "run00", "run01", ...
func runNames[T any](runs []T) map[string]T {
	m := make(map[string]T, len(runs))
	for i, r := range runs {
		m[fmt.Sprintf("run%02d", i)] = r
	}
	return m
}

// UnstableGeometry returns the items that differ between runs, N dumps of one engine
// for one case, by the vote's own rules: each item is voted among the runs as
// NodeOutcomes votes engines (Within tol for sizes and offsets, exact fragment counts,
// style lengths within tol) and is unstable unless every pair of runs agrees. Runs
// that differ in shape or overflow give ["shape"] or ["overflowed"]. Nil: stable
// (also for fewer than two runs). An error means a run is refused (nil, fails
// dump.Validate, or another viewport).
func UnstableGeometry(runs []*dump.Dump, tol float64) ([]string, error) {
	if len(runs) < 2 {
		return nil, nil
	}
	m := runNames(runs)
	if err := check(m, nil); err != nil {
		return nil, err
	}
	for _, d := range runs[1:] {
		if dump.Shape(runs[0], d) != nil {
			return []string{itemShape}, nil
		}
	}
	for _, d := range runs[1:] {
		if d.Overflowed != runs[0].Overflowed {
			return []string{itemOverflowed}, nil
		}
	}
	out, err := NodeOutcomes(m, nil, tol)
	if err != nil {
		return nil, err
	}
	var items []string
	for _, n := range out.Nodes {
		for _, it := range n.Items {
			items = append(items, ItemRef{n.Node, it.Property}.String())
		}
	}
	return items, nil
}

// UnstableReflection returns the fields that differ between runs of one engine
// (exactly, as reflection.Compare does), named "<probe>:<property>". Nil: stable. An
// error means a run is refused or the runs observed different probes.
func UnstableReflection(runs []*reflection.State) ([]string, error) {
	if len(runs) < 2 {
		return nil, nil
	}
	seen := map[string]bool{}
	var items []string
	for _, s := range runs[1:] {
		diffs, err := reflection.Compare(runs[0], s)
		if err != nil {
			return nil, err
		}
		for _, d := range diffs {
			if it := strconv.Itoa(d.Probe) + ":" + d.Property; !seen[it] {
				seen[it] = true
				items = append(items, it)
			}
		}
	}
	slices.SortStableFunc(items, compareItems)
	return items, nil
}

// UnstableTraces returns what differs between runs of one engine's trace, record by
// record as trace.Compare pairs them: "<seq>:record" for each differing position,
// "timed_out" and "is_secure_context" for those flags, and "count" alone when the
// record counts differ (no record can be paired). Nil: stable.
func UnstableTraces(runs []*trace.Trace, tol trace.BufferTolerance) ([]string, error) {
	if len(runs) < 2 {
		return nil, nil
	}
	if slices.Contains(runs, nil) {
		return nil, errors.New("compare: null trace run")
	}
	seen := map[string]bool{}
	var items []string
	add := func(it string) {
		if !seen[it] {
			seen[it] = true
			items = append(items, it)
		}
	}
	for _, t := range runs[1:] {
		if len(t.Records) != len(runs[0].Records) {
			return []string{itemTraceCount}, nil
		}
		for _, f := range trace.Compare(runs[0], t, tol).Findings {
			switch {
			case f.Seq >= 0:
				add(strconv.Itoa(f.Seq) + ":" + traceRecordProp)
			case f.Kind == trace.MismatchTimedOut:
				add(itemTimedOut)
			case f.Kind == trace.MismatchSecureContext:
				add(itemSecureCtx)
			}
		}
	}
	slices.SortStableFunc(items, compareItems)
	return items, nil
}

// compareItems orders item names by index, then name; names without an index first.
func compareItems(a, b string) int {
	ia, pa := splitItem(a)
	ib, pb := splitItem(b)
	if ia != ib {
		return ia - ib
	}
	return strings.Compare(pa, pb)
}

func splitItem(s string) (int, string) {
	i, p, ok := strings.Cut(s, ":")
	if !ok {
		return -1, s
	}
	n, err := strconv.Atoi(i)
	if err != nil {
		return -1, s
	}
	return n, p
}

// markUnstable turns the trace vote's records that any voting engine has unstable
// into vote.Unstable votes (no majority, no outlier), and the whole vote when an
// engine's whole trace is unstable ("count", "timed_out", "is_secure_context", "*").
func (r *traceVote) markUnstable(u Unstable) {
	s := u.set()
	if s == nil {
		return
	}
	var engines []string
	for e := range u {
		engines = append(engines, e)
	}
	slices.Sort(engines)
	whole := s.wholeIn(engines) != "" || s.any(engines, itemTimedOut) || s.any(engines, itemSecureCtx)
	if whole {
		r.Whole = vote.Result{Kind: vote.Unstable}
	}
	for i := range r.Records {
		if whole || s.any(engines, strconv.Itoa(r.Records[i].Seq)+":"+traceRecordProp) {
			r.Records[i].Result = vote.Result{Kind: vote.Unstable}
		}
	}
}
