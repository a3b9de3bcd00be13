package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

// traceTable is a trace case's records side by side: one row per record position,
// one column per engine (the voters, then those not comparable), then the candidate.
type traceTable struct {
	Cols []traceCol
	Rows []traceRow
}

type traceCol struct {
	Name     string
	Emulated string // "[geolocation, sensors]", "[none]"
	Apart    bool   // not comparable: another emulation set than the voters'
}

type traceRow struct {
	Seq    int
	Record string // "value:x"
	Vote   string // "majority, outlier firefox"
	Status string // a compare.NodeStatus: ok, outvoted, split, unstable, failed
	Cells  []traceCell
}

type traceCell struct {
	Text  string
	Class string // "outlier", "apart", "failed" or ""
}

// cellMax bounds a value shown in a cell; the JSON line has the findings in full.
const cellMax = 160

func newTraceTable(r *compare.Report, traces map[string]*trace.Trace, cand *trace.Trace) *traceTable {
	apart := map[string]bool{}
	for _, nc := range r.NotComparable {
		apart[nc.Engine] = true
	}
	tt := &traceTable{}
	var sides []*trace.Trace
	names := slices.Sorted(maps.Keys(traces))
	slices.SortStableFunc(names, func(a, b string) int { // voters first
		switch {
		case apart[a] == apart[b]:
			return 0
		case apart[b]:
			return -1
		}
		return 1
	})
	n := 0
	add := func(name string, t *trace.Trace) {
		if t == nil {
			return
		}
		tt.Cols = append(tt.Cols, traceCol{Name: name, Emulated: compare.EmulationText(t.Emulated), Apart: apart[name]})
		sides = append(sides, t)
		n = max(n, len(t.Records))
	}
	for _, e := range names {
		add(e, traces[e])
	}
	add("candidate", cand)
	failed := map[int]bool{}
	for _, f := range r.TraceFindings {
		failed[f.Seq] = true
	}
	for i := 0; i < n; i++ {
		row := traceRow{Seq: i, Status: string(compare.NodeOK)}
		var res *vote.Result
		if v := r.TraceVote; v != nil && i < len(v.Records) {
			res = &v.Records[i].Result
			row.Vote = string(res.Kind)
			if res.Outlier != "" {
				row.Vote += ", outlier " + res.Outlier
			}
			switch {
			case res.Kind == vote.Unstable:
				row.Status = string(compare.NodeUnstable)
			case !res.Trusted():
				row.Status = string(compare.NodeSplit)
			case res.Outlier != "":
				row.Status = string(compare.NodeOutvoted)
			}
		}
		if failed[i] {
			row.Status = string(compare.NodeFailed)
		}
		for j, t := range sides {
			c := traceCell{Text: "(no record)"}
			if i < len(t.Records) {
				rec := &t.Records[i]
				if row.Record == "" {
					row.Record = rec.Kind + ":" + rec.Label
				}
				c.Text = recordText(rec)
			}
			col := tt.Cols[j]
			switch {
			case col.Apart:
				c.Class = "apart"
			case res != nil && res.Outlier == col.Name:
				c.Class = "outlier"
			case col.Name == "candidate" && failed[i]:
				c.Class = "failed"
			}
			row.Cells = append(row.Cells, c)
		}
		tt.Rows = append(tt.Rows, row)
	}
	return tt
}

// recordText is what one record holds, cut to cellMax: an event's type, a
// settle's state and value, any other record's value.
func recordText(rec *trace.Record) string {
	s := string(rec.Value)
	switch rec.Kind {
	case trace.KindEvent:
		s = rec.Type
	case trace.KindSettle:
		s = rec.State + " " + s
	}
	if len(s) > cellMax {
		s = fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(s[:cellMax], ""), len(s))
	}
	return s
}
