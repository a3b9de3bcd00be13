package vote

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func within(tol float64) func(a, b float64) bool {
	return func(a, b float64) bool { return math.Abs(a-b) <= tol }
}

func TestVote(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]float64
		want   Result
	}{
		{"none", map[string]float64{}, Result{Kind: None}},
		{"single", map[string]float64{"webkit": 3},
			Result{Kind: Single, Majority: []string{"webkit"}}},
		{"two agree", map[string]float64{"firefox": 1, "chromium": 1.001},
			Result{Kind: Agree, Majority: []string{"chromium", "firefox"}}},
		{"two disagree", map[string]float64{"firefox": 1, "chromium": 2},
			Result{Kind: Disagree}},
		{"3-0", map[string]float64{"chromium": 10, "firefox": 10.01, "webkit": 9.995},
			Result{Kind: Unanimous, Majority: []string{"chromium", "firefox", "webkit"}}},
		{"2-1 firefox outlier", map[string]float64{"chromium": 10, "firefox": 12, "webkit": 10},
			Result{Kind: Majority, Majority: []string{"chromium", "webkit"}, Outlier: "firefox"}},
		{"2-1 chromium outlier", map[string]float64{"chromium": 0, "firefox": 5, "webkit": 5},
			Result{Kind: Majority, Majority: []string{"firefox", "webkit"}, Outlier: "chromium"}},
		{"1-1-1", map[string]float64{"chromium": 1, "firefox": 2, "webkit": 3},
			Result{Kind: Split}},
		// a~b and b~c but not a~c: two candidate majorities, so Split.
		{"non-transitive chain", map[string]float64{"chromium": 0, "firefox": 0.015, "webkit": 0.03},
			Result{Kind: Split}},
		{"4 engines 3-1", map[string]float64{"a": 1, "b": 1, "c": 1, "d": 9},
			Result{Kind: Majority, Majority: []string{"a", "b", "c"}, Outlier: "d"}},
		{"4 engines 2-2", map[string]float64{"a": 1, "b": 1, "c": 9, "d": 9},
			Result{Kind: Split}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Vote(tt.values, within(0.02))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Vote(%v) mismatch (-want +got):\n%s", tt.values, diff)
			}
			if got.Trusted() != (len(tt.want.Majority) > 0) {
				t.Errorf("Trusted() = %v for %v", got.Trusted(), got.Kind)
			}
		})
	}
}

func TestRepresentative(t *testing.T) {
	r := Vote(map[string]float64{"webkit": 10, "firefox": 12, "chromium": 10}, within(0))
	if got := r.Representative(); got != "chromium" {
		t.Errorf("Representative() = %q, want chromium (first majority engine by name)", got)
	}
	if got := (Result{Kind: Split}).Representative(); got != "" {
		t.Errorf("Split Representative() = %q, want empty", got)
	}
}

// The pair order handed to agree is fixed by name, whatever the map's order, so an
// asymmetric agree function still gives the same answer every time.
func TestVoteDeterministic(t *testing.T) {
	var calls [][2]string
	agree := func(a, b string) bool { calls = append(calls, [2]string{a, b}); return a == b }
	values := map[string]string{"webkit": "webkit", "chromium": "chromium", "firefox": "firefox"}
	var first []([2]string)
	for i := 0; i < 50; i++ {
		calls = nil
		Vote(values, agree)
		if i == 0 {
			first = calls
			continue
		}
		if diff := cmp.Diff(first, calls); diff != "" {
			t.Fatalf("pair order changed between runs:\n%s", diff)
		}
	}
	want := [][2]string{{"chromium", "firefox"}, {"chromium", "webkit"}, {"firefox", "webkit"}}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("pair order (-want +got):\n%s", diff)
	}
}

func TestVoteExactStrings(t *testing.T) {
	eq := func(a, b string) bool { return a == b }
	r := Vote(map[string]string{"chromium": "block", "firefox": "block", "webkit": "inline"}, eq)
	if r.Kind != Majority || r.Outlier != "webkit" {
		t.Errorf("got %+v, want majority with webkit outlier", r)
	}
}
