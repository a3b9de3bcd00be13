package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/layout-oracle/oracle/internal/proctree"
)

type soakReport struct {
	Cases     int         `json:"cases"`
	Seed      uint64      `json:"seed"`
	Engines   []string    `json:"engines"`
	Samples   []rssSample `json:"samples"`
	CasesPerS []float64   `json:"cases_per_s"` // per chunk between samples
	Errors    int         `json:"errors"`
	FirstErr  string      `json:"first_error,omitempty"`
	RefCases  int         `json:"reference_cases"`
	MaxGrowth float64     `json:"max_growth"`
	Failures  []string    `json:"failures"`
	Load      string      `json:"loadavg_at_start"`
	Wall      float64     `json:"wall_s"`
}

// runSoak pipes c.soak distinct generated cases through one oracle (its defaults, all
// engines) in chunks of c.soakEvery, sampling the RSS of the oracle's process tree
// after each chunk (when every answer of the chunk is in), and fails when the last
// sample exceeds the reference sample by more than c.soakMaxGrowth.
func runSoak(c config, stdout, stderr io.Writer) int {
	rep := soakReport{Cases: c.soak, Seed: c.seed, Engines: c.engines, MaxGrowth: c.soakMaxGrowth, Load: loadavg()}
	logPath := filepath.Join(c.logDir, "oracle-soak.log")
	p, startup, err := startOracle(c.oracleBin, []string{"--engines=" + strings.Join(c.engines, ","), "--log-level=warn"}, logPath)
	if err != nil {
		fmt.Fprintln(stderr, "bench: soak:", err)
		return 1
	}
	defer p.kill()
	fmt.Fprintf(stderr, "bench: soak: oracle up in %.1fs (every engine serving), %d cases\n", startup.AllReady.Seconds(), c.soak)
	s := sampleRSS(p.pid())
	rep.Samples = append(rep.Samples, s)
	start := time.Now()
	for done := 0; done < c.soak; {
		n := min(c.soakEvery, c.soak-done)
		chunk := make([]benchCase, n)
		for i := range chunk {
			chunk[i] = generateCase(c.seed, done+i)
		}
		r, err := p.pass(chunk, "", nil, 0)
		if err != nil {
			fmt.Fprintln(stderr, "bench: soak:", err)
			return 1
		}
		done += n
		rep.Errors += r.Errors
		if rep.FirstErr == "" {
			rep.FirstErr = r.FirstErr
		}
		rep.CasesPerS = append(rep.CasesPerS, float64(n)/r.Wall.Seconds())
		s := sampleRSS(p.pid())
		s.Cases = done
		rep.Samples = append(rep.Samples, s)
		fmt.Fprintf(stderr, "bench: soak: %d cases, %d MiB total, %.1f cases/s\n", done, s.Total/1024, float64(n)/r.Wall.Seconds())
	}
	rep.Wall = time.Since(start).Seconds()
	ref, failures := growthCheck(rep.Samples, c.soak, c.soakRef, c.soakMaxGrowth)
	rep.RefCases, rep.Failures = ref.Cases, failures
	if err := p.close(); err != nil {
		fmt.Fprintln(stderr, "bench: soak:", err)
	}

	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "bench: soak: write report:", err)
			return 1
		}
	} else {
		writeSoakTable(stdout, rep)
	}
	if len(failures) > 0 {
		return 1
	}
	return 0
}

func writeSoakTable(w io.Writer, rep soakReport) {
	fmt.Fprintf(w, "layout oracle soak: %d cases (seed %d) through one oracle (defaults), engines %s; load average at start %s; %.0f s\n\n",
		rep.Cases, rep.Seed, strings.Join(rep.Engines, ","), rep.Load, rep.Wall)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append([]string{"cases"}, proctree.Groups...)
	head = append(head, "total RSS", "total PSS", "procs", "cases/s", "")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for i, s := range rep.Samples {
		cells := []string{fmt.Sprint(s.Cases)}
		procs := 0
		for _, g := range proctree.Groups {
			cells = append(cells, fmt.Sprintf("%.0f", float64(s.KiB[g])/1024))
			procs += s.Procs[g]
		}
		cps := "-"
		if i > 0 {
			cps = fmtNum(rep.CasesPerS[i-1])
		}
		cells = append(cells, fmt.Sprintf("%.0f", float64(s.Total)/1024), fmt.Sprintf("%.0f", float64(s.TotalPSS)/1024), fmt.Sprint(procs), cps, "")
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nMiB. Group columns and total RSS: VmRSS summed per group (a page shared by n processes counts n times). "+
		"total PSS: proportional set size summed (shared pages split among their sharers). Errors: %d", rep.Errors)
	if rep.FirstErr != "" {
		fmt.Fprintf(w, " (first: %.200s)", rep.FirstErr)
	}
	fmt.Fprintln(w)
	if len(rep.Failures) == 0 {
		fmt.Fprintf(w, "growth check: last sample within +%.0f%% of the sample at %d cases (total and oracle process): bounded\n",
			100*rep.MaxGrowth, rep.RefCases)
	} else {
		for _, f := range rep.Failures {
			fmt.Fprintf(w, "growth check FAILED: %s\n", f)
		}
	}
}
