package main

// wpt compare: a candidate engine's wptreport voted against the engines' reports
// (docs/web-content.md, "wpt compare").

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/vote"
)

// Verdicts of a test or subtest.
const (
	verdictAgree         = "agree"          // the engines' status (a majority at least) and the candidate's, PASS or OK
	verdictCandidateOnly = "candidate-only" // the engines settle a status, the candidate's differs
	verdictShared        = "shared"         // the candidate has the engines' status, which is not PASS or OK
	verdictSplit         = "split"          // the engines settle no status: no ground truth
	verdictMissing       = "missing"        // the candidate's report does not have it: not run, not failed
)

var verdicts = []string{verdictAgree, verdictCandidateOnly, verdictShared, verdictSplit, verdictMissing}

// statusMissing stands for a test or subtest a report does not have; in an
// engine's report it is a status like any other in the vote, so an engine without
// it is outvoted, or splits the vote; in the candidate's it is verdictMissing.
const statusMissing = "MISSING"

// voteStatus is one test's or subtest's verdict, and the engine outvoted when the
// engines' status is a 2-1 majority. The engines vote as in cmd/compare (vote.Vote,
// equality of status): unanimous, a majority of all but one, or two that agree
// settle the status; a split, two that disagree, or none settle nothing. An
// all-SKIP status settles nothing either: the engines did not run it.
func voteStatus(candidate string, engines map[string]string) (verdict, outvoted string) {
	r := vote.Vote(engines, func(a, b string) bool { return a == b })
	if !r.Trusted() {
		return verdictSplit, ""
	}
	truth := engines[r.Representative()]
	switch {
	case truth == statusSkip:
		return verdictSplit, ""
	case candidate == statusMissing:
		return verdictMissing, r.Outlier
	case candidate != truth:
		return verdictCandidateOnly, r.Outlier
	case truth == statusPass || truth == statusOK:
		return verdictAgree, r.Outlier
	}
	return verdictShared, r.Outlier
}

// voteLine is one --json line.
type voteLine struct {
	Test      string            `json:"test"`
	Subtest   *string           `json:"subtest,omitempty"`
	Candidate string            `json:"candidate"`
	Engines   map[string]string `json:"engines"`
	Verdict   string            `json:"verdict"`
	// Outvoted is the engine whose status the other two outvoted, when they did.
	Outvoted string `json:"outvoted,omitempty"`
}

// newVoteLine votes one test (subtest nil) or subtest.
func newVoteLine(test string, subtest *string, candidate string, engines map[string]string) voteLine {
	v, out := voteStatus(candidate, engines)
	return voteLine{Test: test, Subtest: subtest, Candidate: candidate, Engines: engines, Verdict: v, Outvoted: out}
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
		out = append(out, newVoteLine(t, nil, c, es))

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
			out = append(out, newVoteLine(t, msg(name), c, es))
		}
	}
	return out
}

// readReport reads a wptreport, gzipped or not (wpt.fyi takes .json.gz uploads),
// and checks it is one: a results list, each result a test path with one of
// wptrunner's statuses (upper case, as wptrunner writes them), each subtest too.
func readReport(file string) (*wptReport, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var in io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		defer zr.Close()
		in = zr
	}
	var r struct {
		wptReport
		Results *[]wptResult `json:"results"`
	}
	if err := json.NewDecoder(in).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a wptreport: %v", file, err)
	}
	if r.Results == nil {
		return nil, fmt.Errorf("%s: not a wptreport: no \"results\" list", file)
	}
	r.wptReport.Results = *r.Results
	for i, res := range r.wptReport.Results {
		if !strings.HasPrefix(res.Test, "/") {
			return nil, fmt.Errorf("%s: results[%d]: test %q is not a path from the root (\"/...\")", file, i, res.Test)
		}
		if !testStatuses[res.Status] {
			return nil, fmt.Errorf("%s: %s: status %q is not one of wptrunner's test statuses (%s)", file, res.Test, res.Status, statusList(testStatuses))
		}
		for _, st := range res.Subtests {
			if !subtestStatuses[st.Status] {
				return nil, fmt.Errorf("%s: %s: subtest %q: status %q is not one of wptrunner's subtest statuses (%s)", file, res.Test, st.Name, st.Status, statusList(subtestStatuses))
			}
		}
	}
	return &r.wptReport, nil
}

// The statuses wptrunner gives a test and a subtest (wptrunner/wpttest.py,
// Result and SubtestResult's statuses, plus SKIP).
var (
	testStatuses = map[string]bool{"OK": true, "PASS": true, "FAIL": true, "ERROR": true, "TIMEOUT": true,
		"EXTERNAL-TIMEOUT": true, "CRASH": true, "PRECONDITION_FAILED": true, "INTERNAL-ERROR": true, "SKIP": true, "ASSERT": true}
	subtestStatuses = map[string]bool{"PASS": true, "FAIL": true, "TIMEOUT": true, "NOTRUN": true,
		"PRECONDITION_FAILED": true, "ERROR": true, "SKIP": true, "ASSERT": true}
)

func statusList(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// engineReports reads DIR/wptreport-<engine>.json, leaving out the candidate's file.
func engineReports(dir, candidate string) (map[string]*wptReport, error) {
	files, err := filepath.Glob(filepath.Join(dir, "wptreport-*.json"))
	if err != nil {
		return nil, err
	}
	gz, _ := filepath.Glob(filepath.Join(dir, "wptreport-*.json.gz"))
	files = append(files, gz...)
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
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "wptreport-"), ".gz"), ".json")
		if out[name] != nil {
			return nil, fmt.Errorf("%s: two reports of %s (.json and .json.gz)", dir, name)
		}
		out[name] = r
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no wptreport-<engine>.json in %s", dir)
	}
	return out, nil
}

func compareCmd(args []string, stdout, stderr io.Writer) int {
	fset := cli.NewFlagSet("wpt compare")
	fset.SetOutput(stderr)
	candFile := fset.String("candidate", "", "the candidate engine's wptreport")
	asJSON := fset.Bool("json", false, "one line per test and subtest instead of the summary")
	setFile := fset.String("set", "", "score only the subtests of this conformance set (wpt mine), instead of DIR's reports")
	if code, done := cli.Parse(fset, args, stdout); done {
		return code
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
	code := exitCode(lines)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return 2
			}
		}
		return code
	}
	printVoteSummary(stdout, lines)
	if fset.NArg() == 1 {
		if view := filepath.Join(fset.Arg(0), "reftests", "index.html"); fileExists(view) {
			fmt.Fprintf(stdout, "the engines' reftest view: %s\n", view)
		}
	}
	return code
}

// exitCode is wpt compare's exit status for lines: 1 when the candidate differs
// from the engines' status on any test or subtest (candidate-only), else 0. A
// missing test is listed, not failed; usage and input errors are 2.
func exitCode(lines []voteLine) int {
	for _, l := range lines {
		if l.Verdict == verdictCandidateOnly {
			return 1
		}
	}
	return 0
}

// maxNamed bounds the tests the text summary names per verdict; --json lists all.
const maxNamed = 50

// printNamed names the tests (and subtests) with a candidate-only or missing
// verdict, each with the candidate's status and the engines', maxNamed a verdict.
func printNamed(w io.Writer, lines []voteLine) {
	for _, v := range []string{verdictCandidateOnly, verdictMissing} {
		var named []voteLine
		for _, l := range lines {
			if l.Verdict == v {
				named = append(named, l)
			}
		}
		if len(named) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d):\n", v, len(named))
		for i, l := range named {
			if i == maxNamed {
				fmt.Fprintf(w, "  ... and %d more (--json lists every one)\n", len(named)-maxNamed)
				break
			}
			name := l.Test
			if l.Subtest != nil {
				name += " | " + *l.Subtest
			}
			fmt.Fprintf(w, "  %s: candidate %s, engines %s\n", name, l.Candidate, engineStatuses(l))
		}
	}
}

// engineStatuses is "chromium PASS, firefox PASS, webkit FAIL (outvoted)".
func engineStatuses(l voteLine) string {
	names := make([]string, 0, len(l.Engines))
	for e := range l.Engines {
		names = append(names, e)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, e := range names {
		parts[i] = e + " " + l.Engines[e]
		if e == l.Outvoted {
			parts[i] += " (outvoted)"
		}
	}
	return strings.Join(parts, ", ")
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
	fmt.Fprintln(tw, "directory\ttests\tagree\tcandidate-only\tshared\tsplit\tmissing\tsubtests agree/candidate-only/shared/split/missing")
	row := func(name string, c *counts) {
		n := 0
		for _, v := range verdicts {
			n += c.tests[v]
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d/%d/%d/%d/%d\n", name, n, c.tests[verdictAgree], c.tests[verdictCandidateOnly],
			c.tests[verdictShared], c.tests[verdictSplit], c.tests[verdictMissing], c.subs[verdictAgree], c.subs[verdictCandidateOnly],
			c.subs[verdictShared], c.subs[verdictSplit], c.subs[verdictMissing])
	}
	for _, d := range names {
		row(d, dirs[d])
	}
	row("total", total)
	tw.Flush()
	printNamed(w, lines)
}

func fileExists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}
