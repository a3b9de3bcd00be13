package main

// wpt compare: a candidate engine's wptreport voted against the engines' reports
// (docs/web-content.md, "wpt compare").

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// Verdicts of a test or subtest.
const (
	verdictAgree         = "agree"          // engines and candidate agree on PASS or OK
	verdictCandidateOnly = "candidate-only" // the engines agree, the candidate differs
	verdictShared        = "shared"         // all agree, on a status that is not PASS or OK
	verdictSplit         = "split"          // the engines do not agree: no ground truth
)

var verdicts = []string{verdictAgree, verdictCandidateOnly, verdictShared, verdictSplit}

// statusMissing stands for a test or subtest a report does not have; it is a
// status like any other in the vote, so an engine without it breaks agreement.
const statusMissing = "MISSING"

// voteStatus is one test's or subtest's verdict.
func voteStatus(candidate string, engines map[string]string) string {
	first, agree := "", len(engines) > 0
	for _, s := range engines {
		if first == "" {
			first = s
		}
		agree = agree && s == first
	}
	switch {
	case !agree || first == statusSkip: // all SKIP: the engines did not run it, no ground truth either
		return verdictSplit
	case candidate != first:
		return verdictCandidateOnly
	case first == statusPass || first == statusOK:
		return verdictAgree
	}
	return verdictShared
}

// voteLine is one --json line.
type voteLine struct {
	Test      string            `json:"test"`
	Subtest   *string           `json:"subtest,omitempty"`
	Candidate string            `json:"candidate"`
	Engines   map[string]string `json:"engines"`
	Verdict   string            `json:"verdict"`
}

// voteReports votes every test any report has, sorted, each followed by its
// subtests in the order the reports first list them (the candidate's first).
func voteReports(cand *wptReport, engines map[string]*wptReport) []voteLine {
	type byTest = map[string]*wptResult
	index := func(r *wptReport) byTest {
		m := byTest{}
		for i := range r.Results {
			m[r.Results[i].Test] = &r.Results[i]
		}
		return m
	}
	names := make([]string, 0, len(engines))
	for e := range engines {
		names = append(names, e)
	}
	sort.Strings(names)
	ci := index(cand)
	ei := map[string]byTest{}
	tests := map[string]bool{}
	for t := range ci {
		tests[t] = true
	}
	for _, e := range names {
		ei[e] = index(engines[e])
		for t := range ei[e] {
			tests[t] = true
		}
	}
	sorted := make([]string, 0, len(tests))
	for t := range tests {
		sorted = append(sorted, t)
	}
	sort.Strings(sorted)

	status := func(r *wptResult) string {
		if r == nil {
			return statusMissing
		}
		return r.Status
	}
	subStatus := func(r *wptResult, name string) string {
		if r != nil {
			for _, s := range r.Subtests {
				if s.Name == name {
					return s.Status
				}
			}
		}
		return statusMissing
	}
	var out []voteLine
	for _, t := range sorted {
		es := map[string]string{}
		for _, e := range names {
			es[e] = status(ei[e][t])
		}
		c := status(ci[t])
		out = append(out, voteLine{Test: t, Candidate: c, Engines: es, Verdict: voteStatus(c, es)})

		var subs []string
		seen := map[string]bool{}
		reports := []*wptResult{ci[t]}
		for _, e := range names {
			reports = append(reports, ei[e][t])
		}
		for _, r := range reports {
			if r == nil {
				continue
			}
			for _, s := range r.Subtests {
				if !seen[s.Name] {
					seen[s.Name] = true
					subs = append(subs, s.Name)
				}
			}
		}
		for _, name := range subs {
			es := map[string]string{}
			for _, e := range names {
				es[e] = subStatus(ei[e][t], name)
			}
			c := subStatus(ci[t], name)
			out = append(out, voteLine{Test: t, Subtest: msg(name), Candidate: c, Engines: es, Verdict: voteStatus(c, es)})
		}
	}
	return out
}

func readReport(file string) (*wptReport, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r wptReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a wptreport: %v", file, err)
	}
	return &r, nil
}

// engineReports reads DIR/wptreport-<engine>.json, leaving out the candidate's file.
func engineReports(dir, candidate string) (map[string]*wptReport, error) {
	files, err := filepath.Glob(filepath.Join(dir, "wptreport-*.json"))
	if err != nil {
		return nil, err
	}
	ca, _ := filepath.Abs(candidate)
	out := map[string]*wptReport{}
	for _, f := range files {
		if fa, _ := filepath.Abs(f); fa == ca {
			continue
		}
		r, err := readReport(f)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "wptreport-"), ".json")] = r
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no wptreport-<engine>.json in %s", dir)
	}
	return out, nil
}

func compareCmd(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("wpt compare", flag.ContinueOnError)
	fset.SetOutput(stderr)
	candFile := fset.String("candidate", "", "the candidate engine's wptreport")
	asJSON := fset.Bool("json", false, "one line per test and subtest instead of the summary")
	setFile := fset.String("set", "", "score only the subtests of this conformance set (wpt mine), instead of DIR's reports")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *candFile == "" || (*setFile == "") != (fset.NArg() == 1) || fset.NArg() > 1 {
		fmt.Fprintln(stderr, "usage: wpt compare --candidate CAND.json [--json] DIR | wpt compare --candidate CAND.json --set SET.ndjson [--json]")
		return 2
	}
	cand, err := readReport(*candFile)
	if err != nil {
		fmt.Fprintln(stderr, "wpt compare:", err)
		return 2
	}
	var lines []voteLine
	if *setFile != "" {
		set, err := readSet(*setFile)
		if err != nil {
			fmt.Fprintln(stderr, "wpt compare:", err)
			return 2
		}
		lines = voteSet(cand, set)
	} else {
		engines, err := engineReports(fset.Arg(0), *candFile)
		if err != nil {
			fmt.Fprintln(stderr, "wpt compare:", err)
			return 2
		}
		if len(engines) != 3 {
			fmt.Fprintf(stderr, "wpt compare: %d engine reports in %s, not three: agreement is among those\n", len(engines), fset.Arg(0))
		}
		lines = voteReports(cand, engines)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return 1
			}
		}
		return 0
	}
	printVoteSummary(stdout, lines)
	if fset.NArg() == 1 {
		if view := filepath.Join(fset.Arg(0), "reftests", "index.html"); fileExists(view) {
			fmt.Fprintf(stdout, "the engines' reftest view: %s\n", view)
		}
	}
	return 0
}

// printVoteSummary prints, per directory and in total, the tests and subtests by
// verdict.
func printVoteSummary(w io.Writer, lines []voteLine) {
	type counts struct{ tests, subs map[string]int }
	dirs := map[string]*counts{}
	total := &counts{map[string]int{}, map[string]int{}}
	for _, l := range lines {
		d := path.Dir(l.Test)
		c := dirs[d]
		if c == nil {
			c = &counts{map[string]int{}, map[string]int{}}
			dirs[d] = c
		}
		for _, x := range []*counts{c, total} {
			if l.Subtest == nil {
				x.tests[l.Verdict]++
			} else {
				x.subs[l.Verdict]++
			}
		}
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "directory\ttests\tagree\tcandidate-only\tshared\tsplit\tsubtests agree/candidate-only/shared/split")
	row := func(name string, c *counts) {
		n := 0
		for _, v := range verdicts {
			n += c.tests[v]
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d/%d/%d/%d\n", name, n, c.tests[verdictAgree], c.tests[verdictCandidateOnly],
			c.tests[verdictShared], c.tests[verdictSplit], c.subs[verdictAgree], c.subs[verdictCandidateOnly],
			c.subs[verdictShared], c.subs[verdictSplit])
	}
	for _, d := range names {
		row(d, dirs[d])
	}
	row("total", total)
	tw.Flush()
}

func fileExists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}
