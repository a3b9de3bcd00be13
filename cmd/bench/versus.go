package main

import (
	"fmt"
	"io"
	"strings"
)

// Versus mode: the same generated cases, split into the
// script-free ones and the ones with a script, through another oracle binary (an
// earlier commit's, built side by side) and this one, each in row a's throughput
// pass (defaults, every engine, piped at once), old and new interleaved per set.
// It prints cases/s, CPU ms per three-engine case, and new over old.

// casesOfKind keeps the script-free cases ("markup") or those with a script
// ("script"), generating until there are n.
func casesOfKind(seed uint64, n int, kind string) []benchCase {
	var out []benchCase
	for i := 0; len(out) < n; i++ {
		c := generateCase(seed, i)
		if (c.Script != "") == (kind == "script") {
			out = append(out, c)
		}
	}
	return out
}

// versusRow is one binary's throughput pass on one case set.
type versusRow struct {
	Set, Binary string
	CasesPerS   float64
	CPUms       float64 // per three-engine case, every process under the oracle
	CPUByGroup  map[string]float64
	Errors      int
}

func runVersus(c config, old string, stdout, stderr io.Writer) int {
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }
	var rows []versusRow
	for _, set := range []string{"markup", "script"} {
		cases := casesOfKind(c.seed, c.cases, set)
		for _, bin := range []struct{ name, path string }{{"old", old}, {"new", c.oracleBin}} {
			cc := c
			cc.oracleBin = bin.path
			progress("versus: %s cases, %s oracle (%s)", set, bin.name, bin.path)
			row, err := throughputPass(cc, cases, set+"-"+bin.name)
			if err != nil {
				fmt.Fprintf(stderr, "bench: versus: %v\n", err)
				return 1
			}
			row.Set, row.Binary = set, bin.name
			rows = append(rows, row)
		}
	}
	fmt.Fprintf(stdout, "versus: %d generated cases per set (seed %d), engines %s, defaults; load average at the end %s\n",
		c.cases, c.seed, strings.Join(c.engines, ","), loadavg())
	fmt.Fprintf(stdout, "%-8s %-5s %10s %14s %7s\n", "cases", "oracle", "cases/s", "CPU ms/case", "errors")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-8s %-5s %10.2f %14.1f %7d\n", r.Set, r.Binary, r.CasesPerS, r.CPUms, r.Errors)
	}
	for _, r := range rows {
		fmt.Fprintf(stdout, "  %s %s: CPU ms per case by process: %s\n", r.Set, r.Binary, fmtCPU(r.CPUByGroup))
	}
	for i := 0; i+1 < len(rows); i += 2 {
		o, n := rows[i], rows[i+1]
		fmt.Fprintf(stdout, "%s: new/old throughput %.2fx, CPU per case %.2fx\n", o.Set, n.CasesPerS/o.CasesPerS, n.CPUms/o.CPUms)
	}
	return 0
}

// throughputPass is row a's throughput pass alone (throughput), then the oracle's exit.
func throughputPass(c config, cases []benchCase, key string) (versusRow, error) {
	p, _, all, cpu, err := throughput(c, cases, key, nil, nil)
	if err != nil {
		return versusRow{}, err
	}
	defer p.kill()
	perCase := 0.0
	for _, ms := range cpu {
		perCase += ms
	}
	if err := p.close(); err != nil {
		return versusRow{}, err
	}
	return versusRow{CasesPerS: float64(len(cases)) / all.Wall.Seconds(), CPUms: perCase, CPUByGroup: cpu, Errors: all.Errors}, nil
}
