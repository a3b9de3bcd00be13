package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/layout-oracle/oracle/internal/proctree"
)

// percentile is the nearest-rank percentile of xs (0 < p <= 100): the smallest value
// with at least p% of the samples at or below it. xs need not be sorted; it is not
// modified. NaN for no samples.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 || p <= 0 || p > 100 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

// latency is one engine's (or the whole request's) latency summary, in milliseconds.
type latency struct {
	N      int     `json:"n"`
	Median float64 `json:"median_ms"`
	P99    float64 `json:"p99_ms"`
	Mean   float64 `json:"mean_ms"`
}

func summarize(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{Median: math.NaN(), P99: math.NaN(), Mean: math.NaN()}
	}
	ms := make([]float64, len(ds))
	sum := 0.0
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
		sum += ms[i]
	}
	return latency{N: len(ds), Median: percentile(ms, 50), P99: percentile(ms, 99), Mean: sum / float64(len(ms))}
}

// latencyAll is the key of a three-engine request's latency, beside the engine names.
const latencyAll = "all"

// wayResult is one row of the table: one way of running the cases.
type wayResult struct {
	Key          string             `json:"key"` // a, b, c, d-walk, d-fresh, d-triv
	Way          string             `json:"way"`
	Cases        int                `json:"cases"` // cases the wall time covers (per engine for d)
	WallS        float64            `json:"wall_s"`
	CasesPerS    float64            `json:"cases_per_s"`
	Extrapolated bool               `json:"extrapolated,omitempty"` // cases/s from a sample, not a run of all cases
	Latency      map[string]latency `json:"latency"`                // by engine, and "all"
	// RatioVsBaseline is CasesPerS over the baseline's (b) CasesPerS.
	RatioVsBaseline float64 `json:"ratio_vs_baseline,omitempty"`
	// OverheadVsBare is, per engine, this way's median latency over the bare round
	// trip's median latency for the same engine: d-fresh's (a new document per case,
	// as the oracle gives), or d-walk's where the run has no d-fresh.
	OverheadVsBare map[string]float64 `json:"overhead_vs_bare,omitempty"`
	BareRef        string             `json:"overhead_ref,omitempty"` // the row OverheadVsBare is against
	Errors         int                `json:"errors"`                 // engine answers that were errors
	Note           string             `json:"note,omitempty"`
	// Startup is the oracle's startup, for ways a and c (not in the wall time).
	Startup *startupTimes `json:"startup,omitempty"`
	// CPUPerCase is, for ways a and c, the CPU time the oracle's process tree spent
	// per case in the throughput pass, in ms, by process group (rss.go's groups):
	// where the machine's cores go when the pass is CPU bound.
	CPUPerCase map[string]float64 `json:"cpu_ms_per_case,omitempty"`
}

// fillRatios sets every row's ratio against the baseline row and overhead against the
// bare row (d-fresh, else d-walk), where both exist.
func fillRatios(rows []*wayResult, engines []string) {
	var base, bare *wayResult
	for _, r := range rows {
		switch r.Key {
		case "b":
			base = r
		case "d-fresh":
			bare = r
		case "d-walk":
			if bare == nil {
				bare = r
			}
		}
	}
	for _, r := range rows {
		if base != nil && base.CasesPerS > 0 && r.Key != "b" && !strings.HasPrefix(r.Key, "d") {
			r.RatioVsBaseline = r.CasesPerS / base.CasesPerS
		}
		if bare == nil || r == bare || r.Key == "b" {
			continue
		}
		for _, e := range engines {
			l, ok := r.Latency[e]
			bl, bok := bare.Latency[e]
			if ok && bok && bl.Median > 0 && !math.IsNaN(l.Median) {
				if r.OverheadVsBare == nil {
					r.OverheadVsBare = map[string]float64{}
				}
				r.OverheadVsBare[e] = l.Median / bl.Median
				r.BareRef = bare.Key
			}
		}
	}
}

func fmtMS(l latency, ok bool) string {
	if !ok || l.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%s / %s", fmtNum(l.Median), fmtNum(l.P99))
}

// fmtNum prints a number with about three significant digits.
func fmtNum(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "-"
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// writeTable prints the rows as an aligned text table, one latency column per engine
// ("median / p99", milliseconds), then the notes.
func writeTable(w io.Writer, rows []*wayResult, engines []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"way", "cases", "wall s", "cases/s"}
	for _, e := range engines {
		head = append(head, e+" med/p99 ms")
	}
	head = append(head, "all-engine req med/p99 ms", "x baseline", "overhead vs bare (median)", "errors")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		cps := fmtNum(r.CasesPerS)
		if r.Extrapolated {
			cps += "*"
		}
		cells := []string{r.Key + " " + r.Way, fmt.Sprint(r.Cases), fmtNum(r.WallS), cps}
		for _, e := range engines {
			l, ok := r.Latency[e]
			cells = append(cells, fmtMS(l, ok))
		}
		l, ok := r.Latency[latencyAll]
		cells = append(cells, fmtMS(l, ok))
		ratio := "-"
		if r.RatioVsBaseline > 0 {
			ratio = fmtNum(r.RatioVsBaseline) + "x"
		}
		cells = append(cells, ratio)
		var ov []string
		for _, e := range engines {
			if x, ok := r.OverheadVsBare[e]; ok {
				ov = append(ov, fmt.Sprintf("%s %sx", abbrev(e), fmtNum(x)))
			}
		}
		if len(ov) == 0 {
			cells = append(cells, "-")
		} else {
			cells = append(cells, strings.Join(ov, " "))
		}
		cells = append(cells, fmt.Sprint(r.Errors))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	for _, r := range rows {
		if r.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.Key, r.Note)
		}
	}
	for _, r := range rows {
		if len(r.CPUPerCase) > 0 {
			fmt.Fprintf(w, "  %s: CPU ms per case in the timed pass (a, c: all engines at once; d: the walk): %s\n", r.Key, fmtCPU(r.CPUPerCase))
		}
	}
}

// fmtCPU lists CPU ms per case by group, in proctree.Groups order, and their total.
func fmtCPU(cpu map[string]float64) string {
	var parts []string
	total := 0.0
	for _, g := range proctree.Groups {
		if v, ok := cpu[g]; ok {
			parts = append(parts, g+" "+fmtNum(v))
			total += v
		}
	}
	return strings.Join(append(parts, "total "+fmtNum(total)), ", ")
}

func abbrev(engine string) string {
	switch engine {
	case "chromium":
		return "cr"
	case "firefox":
		return "ff"
	case "webkit":
		return "wk"
	}
	return engine
}
