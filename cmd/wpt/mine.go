package main

// wpt mine: ground truth mined from testharness suites. The subtests on which the
// three engines' wptreports agree become a conformance set a candidate is scored
// against (wpt compare --set); the subtests they split on go to a list for case
// generation (docs/web-content.md, "wpt mine").

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/outdir"
)

// setLine is one subtest of the conformance set: the status all engines gave it,
// and the builds that gave it.
type setLine struct {
	Test    string            `json:"test"`
	Subtest string            `json:"subtest"`
	Status  string            `json:"status"`
	Engines map[string]string `json:"engines"` // engine -> browser_version
}

// splitLine is one subtest the engines did not agree on: each engine's status
// (MISSING where its report lacks it).
type splitLine struct {
	Test     string            `json:"test"`
	Subtest  string            `json:"subtest"`
	Statuses map[string]string `json:"statuses"`
	Engines  map[string]string `json:"engines"` // engine -> browser_version
}

// mineReports splits every subtest of the engines' reports into the agreed set and
// the splits, tests sorted, subtests in the order the reports first list them.
func mineReports(engines map[string]*wptReport) (set []setLine, splits []splitLine) {
	names := make([]string, 0, len(engines))
	builds := map[string]string{}
	for e, r := range engines {
		names = append(names, e)
		builds[e] = r.RunInfo.BrowserVersion
	}
	sort.Strings(names)
	type key struct{ test, sub string }
	status := map[string]map[key]string{}
	var order []key
	seen := map[key]bool{}
	for _, e := range names {
		status[e] = map[key]string{}
		for _, r := range engines[e].Results {
			for _, s := range r.Subtests {
				k := key{r.Test, s.Name}
				status[e][k] = s.Status
				if !seen[k] {
					seen[k] = true
					order = append(order, k)
				}
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].test < order[j].test })
	for _, k := range order {
		st := map[string]string{}
		agreed := ""
		for i, e := range names {
			s, ok := status[e][k]
			if !ok {
				s = statusMissing
			}
			st[e] = s
			if i == 0 {
				agreed = s
			} else if s != agreed {
				agreed = ""
			}
		}
		if agreed != "" && agreed != statusMissing {
			set = append(set, setLine{Test: k.test, Subtest: k.sub, Status: agreed, Engines: builds})
		} else {
			splits = append(splits, splitLine{Test: k.test, Subtest: k.sub, Statuses: st, Engines: builds})
		}
	}
	return set, splits
}

func mineCmd(args []string, stdout, stderr io.Writer) int {
	fset := cli.NewFlagSet("wpt mine")
	fset.SetOutput(stderr)
	setFile := fset.String("set", "", "the conformance set (default DIR/conformance-set.ndjson)")
	splitFile := fset.String("splits", "", "the split subtests (default DIR/splits.ndjson)")
	if code, done := cli.Parse(fset, args, stdout); done {
		return code
	}
	if fset.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: wpt mine [--set FILE] [--splits FILE] DIR (DIR holds wptreport-<engine>.json)")
		return 2
	}
	dir := fset.Arg(0)
	engines, err := engineReports(dir, "")
	if err != nil {
		fmt.Fprintln(stderr, "wpt mine:", err)
		return 2
	}
	if len(engines) != 3 {
		fmt.Fprintf(stderr, "wpt mine: %d engine reports in %s; ground truth needs the three\n", len(engines), dir)
		return 2
	}
	// A file named by its flag is the user's; one by default goes into DIR through
	// package outdir, which writes through no symlink already there.
	var od *outdir.Dir
	defer func() {
		if od != nil {
			od.Close()
		}
	}()
	create := func(flag *string, name string) (*os.File, error) {
		if *flag != "" {
			return os.Create(*flag)
		}
		if od == nil {
			var err error
			if od, err = outdir.Open(dir); err != nil {
				return nil, err
			}
		}
		*flag = od.Join(name)
		return od.Create(name)
	}
	set, splits := mineReports(engines)
	if err := writeNDJSON(create, setFile, "conformance-set.ndjson", set); err != nil {
		fmt.Fprintln(stderr, "wpt mine:", err)
		return 1
	}
	if err := writeNDJSON(create, splitFile, "splits.ndjson", splits); err != nil {
		fmt.Fprintln(stderr, "wpt mine:", err)
		return 1
	}
	byStatus := map[string]int{}
	tests := map[string]bool{}
	for _, l := range set {
		byStatus[l.Status]++
		tests[l.Test] = true
	}
	splitTests := map[string]bool{}
	for _, l := range splits {
		splitTests[l.Test] = true
	}
	fmt.Fprintf(stdout, "%s: %d subtests of %d tests on which the three engines agree (%s)\n",
		*setFile, len(set), len(tests), countList(byStatus))
	fmt.Fprintf(stdout, "%s: %d subtests of %d tests the engines split on\n", *splitFile, len(splits), len(splitTests))
	return 0
}

// writeNDJSON writes one JSON line per element of lines into the file create
// opens for flag (the file it names, else name in DIR).
func writeNDJSON[T any](create func(flag *string, name string) (*os.File, error), flag *string, name string, lines []T) error {
	f, err := create(flag, name)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readSet reads a conformance set written by wpt mine.
func readSet(file string) ([]setLine, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []setLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l setLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Test == "" || l.Status == "" {
			return nil, fmt.Errorf("%s: line %d: not a conformance set line (test, subtest, status)", file, n)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// voteSet scores the candidate on the set's subtests alone: each line's engines
// are the set's status (they agreed on it), so the verdict is agree, shared or
// candidate-only (missing where the candidate's report lacks it), never split.
func voteSet(cand *wptReport, set []setLine) []voteLine {
	byTest := map[string]*wptResult{}
	for i := range cand.Results {
		byTest[cand.Results[i].Test] = &cand.Results[i]
	}
	out := make([]voteLine, 0, len(set))
	for _, l := range set {
		c := statusMissing
		if r := byTest[l.Test]; r != nil {
			for _, s := range r.Subtests {
				if s.Name == l.Subtest {
					c = s.Status
					break
				}
			}
		}
		es := map[string]string{}
		for e := range l.Engines {
			es[e] = l.Status
		}
		if len(es) == 0 {
			es["set"] = l.Status // a set written without builds
		}
		out = append(out, newVoteLine(l.Test, msg(l.Subtest), c, es))
	}
	return out
}
