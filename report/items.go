package report

import (
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/vote"
)

// itemTable is a case page's table of the items the oracle engines did not agree
// on (an engine outvoted, a split, an unstable item), one row per item, with every
// voting engine's value, the majority's, the outlier's delta from it and, with an
// aligned candidate, the candidate's value and delta: what hovering a box shows,
// in the page itself.
type itemTable struct {
	Engines   []string // the voting engines, one column each
	Candidate bool     // a candidate column and its delta
	Rows      []itemRow
}

type itemRow struct {
	Node      int
	Tag       string
	Property  string
	Vote      vote.Kind
	Outlier   string
	Cells     []itemCell // one per engine, in Engines' order
	Want      string     // the majority's value; "" without a majority
	Delta     string     // the outlier's value minus the majority's, for numbers
	Cand      itemCell
	CandDelta string // the candidate's value minus the majority's
}

type itemCell struct {
	Text    string
	Outlier bool // the engine outvoted on this item
	Failed  bool // the candidate is outside tolerance (or differs) on it
}

// disagreed are the votes in which the oracle engines did not all agree.
var disagreed = map[vote.Kind]bool{vote.Majority: true, vote.Split: true, vote.Disagree: true, vote.Unstable: true}

// newItemTable lists out's items the engines disagreed on; nil when there are none.
// candidate says whether a candidate is drawn aligned with the voters.
func newItemTable(out *compare.Outcomes, candidate bool) *itemTable {
	t := &itemTable{Engines: out.Engines, Candidate: candidate}
	for _, nd := range out.Nodes {
		for _, it := range nd.Items {
			if !disagreed[it.Vote] {
				continue
			}
			r := itemRow{Node: nd.Node, Tag: nd.Tag, Property: it.Property, Vote: it.Vote, Outlier: it.Outlier, Want: it.Want}
			for _, e := range out.Engines {
				r.Cells = append(r.Cells, itemCell{Text: it.Values[e], Outlier: e == it.Outlier})
			}
			if it.Outlier != "" && it.Want != "" {
				r.Delta = textDelta(it.Values[it.Outlier], it.Want)
			}
			if candidate {
				r.Cand = itemCell{Text: it.Values["candidate"], Failed: it.Failed}
				if it.Delta != nil {
					r.CandDelta = signed(*it.Delta)
				}
			}
			t.Rows = append(t.Rows, r)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// textDelta is got - want for two numbers as NodeItem writes them, or two lengths
// in px (a style value such as "43px"), signed; "" when either is neither ("none",
// "auto", a length in another unit).
func textDelta(got, want string) string {
	if strings.HasSuffix(got, "px") && strings.HasSuffix(want, "px") {
		got, want = strings.TrimSuffix(got, "px"), strings.TrimSuffix(want, "px")
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return ""
	}
	return signed(g - w)
}

// signed writes d with its sign and at most 6 significant digits: "+7", "-0.5".
func signed(d float64) string {
	s := strconv.FormatFloat(d, 'g', 6, 64)
	if d > 0 {
		s = "+" + s
	}
	return s
}
