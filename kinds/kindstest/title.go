// Package kindstest holds Title, a request kind that exists only in tests: the tests
// of the oracle, the store's diff, `oracle store export`, compare and client register
// it to show that a kind described once in package kinds reaches each of them with no
// edit there. Test code only: no package outside _test.go files imports it.
package kindstest

import (
	"maps"
	"slices"
	"testing"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/vote"
)

// titleAnswer is one engine's answer of Title: the document's title after the case's
// script.
type titleAnswer struct {
	Engine string `json:"engine"`
	Title  string `json:"title"`
}

// Title is the throw-away kind: op "title", answers under "titles", a candidate's
// under "title". Its runs differ on the item "title"; its vote is on the titles' text.
var Title = &kinds.Of[*titleAnswer]{
	Info: kinds.Info{Op: "title", Name: "title", Field: "titles", Record: "title", Case: "a title"},
	Runs: func(runs []*titleAnswer) ([]string, error) {
		for _, r := range runs[1:] {
			if r.Title != runs[0].Title {
				return []string{"title"}, nil
			}
		}
		return nil, nil
	},
	Vote: func(answers map[string]*titleAnswer, cand *titleAnswer, opts compare.Options) (*compare.Report, error) {
		titles := map[string]string{}
		for e, a := range answers {
			titles[e] = a.Title
		}
		v := vote.Vote(titles, func(a, b string) bool { return a == b })
		r := &compare.Report{Engines: slices.Sorted(maps.Keys(answers)), Votes: map[vote.Kind]int{v.Kind: 1}}
		switch {
		case !v.Trusted():
			r.Verdict, r.Reason = compare.Untrustworthy, "the engines' titles are "+string(v.Kind)
		case cand == nil:
			r.Verdict = compare.NoCandidate
		case cand.Title == titles[v.Representative()]:
			r.Verdict = compare.Pass
		default:
			r.Verdict, r.Reason = compare.Fail, "title "+cand.Title+", the engines' "+titles[v.Representative()]
		}
		return r, nil
	},
}

// Register registers Title for t's duration.
func Register(t testing.TB) { RegisterKind(t, Title) }

// RegisterKind registers k for t's duration (a copy of Title that the oracle
// answers, say), failing t when kinds refuses it.
func RegisterKind(t testing.TB, k kinds.Kind) {
	t.Helper()
	unregister, err := kinds.Register(k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unregister)
}
