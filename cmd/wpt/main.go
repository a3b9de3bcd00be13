// Command wpt turns a web-platform-tests checkout into oracle requests, and a run's
// responses into the per-directory vote a WPT user wants (docs/web-content.md).
//
//	wpt requests --root DIR [--limit N] [--kinds reftest,ref,testharness] PATTERN...
//	wpt summary [--tolerance X] [--json] [FILE]
//	wpt run --root DIR [--out DIR] [--oracle PATH] [--oracle-flag F]... [--revision SHA] PATTERN...
//	wpt compare --candidate FILE [--json] DIR | --set SET.ndjson
//	wpt mine [--set FILE] [--splits FILE] DIR
//
// requests prints one NDJSON request per file: a geometry request by "url" for every
// reftest (a file with <link rel=match|mismatch>) and, once each, for the references
// it names; a trace request by "url" with an empty script for every testharness.js
// test (the oracle's testharnessreport.js records its subtests). A PATTERN is a
// directory under DIR (everything below it) or a path.Match glob on the path relative
// to DIR ("css/CSS2/floats/*.xht"); a file named as a reference ("-ref") is not a
// test. Pipe them into `oracle --docroot DIR`.
//
// summary reads the oracle's responses and prints, per directory, how the engines
// voted: a geometry case is unanimous when every item is, majority when some item
// was outvoted 2-1 and none split (the outvoted engines are counted), split when any
// item or the shape split; a testharness case votes per subtest the same way. A trace
// that recorded no subtest is listed with run's "empty trace" message.
//
// run drives one oracle over the tests and writes each engine's results in the
// wptreport format (run.go, report.go, reftestchain.go) and the reftest view
// (reftestview.go); compare votes a candidate engine's wptreport against the
// engines' (candidate.go); mine writes the subtests they agree on as a conformance
// set (mine.go).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// usage is wpt's own: its commands, each with its own -h.
const usage = `usage: wpt COMMAND [FLAGS] [ARGS]   (wpt COMMAND -h: its flags; docs/web-content.md)
  wpt requests --root DIR [--limit N] [--kinds K,...] PATTERN...
  wpt summary [--tolerance X] [--json] [FILE]
  wpt run --root DIR [--out DIR] [--oracle PATH] [--oracle-flag F]... [--revision SHA] PATTERN...
  wpt compare --candidate FILE [--json] DIR | --set SET.ndjson
  wpt mine [--set FILE] [--splits FILE] DIR
  wpt --version`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprintln(stderr, usage)
		return cli.ExitUsage
	case args[0] == "help" && len(args) > 1:
		return run([]string{args[1], "-h"}, stdin, stdout, stderr)
	case cli.IsHelp(args[0]):
		fmt.Fprintln(stderr, usage)
		return cli.ExitOK
	case cli.IsVersion(args[0]):
		fmt.Fprintln(stdout, cli.Version("wpt"))
		return cli.ExitOK
	}
	switch args[0] {
	case "requests":
		return requestsCmd(args[1:], stdout, stderr)
	case "summary":
		return summaryCmd(args[1:], stdin, stdout, stderr)
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "compare":
		return compareCmd(args[1:], stdout, stderr)
	case "mine":
		return mineCmd(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "wpt: unknown command %q (requests, summary, run, compare, mine)\n", args[0])
	return cli.ExitUsage
}

// ---- requests ----

// notATestPath is WPT's non-test directories (sourcefile.py, in_non_test_dir):
// resources, support and tools anywhere, common at the top, css/common and the CSS2
// archives. A reference/ directory is not one: a file there that links a reference
// is a test.
var (
	testExt      = regexp.MustCompile(`\.(html?|xht|xhtml|svg)$|\.(any|window|worker)\.js$`)
	testharness  = regexp.MustCompile(`<script[^>]*\bsrc\s*=\s*["']?/resources/testharness\.js`)
	refLink      = regexp.MustCompile(`(?is)<link\b[^>]*>`)
	schemeRE     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	relMatch     = regexp.MustCompile(`(?i)\brel\s*=\s*["']?(mis)?match\b`)
	hrefAttr     = regexp.MustCompile(`(?i)\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
	notATestPath = regexp.MustCompile(`(^|/)(support|resources|tools)/|^(common|css/common|css/CSS2/archive|css21/archive)/|(^|/)\.|-manual\.|/META\.yml$`)
)

// Kinds of request.
const (
	kindReftest     = "reftest"
	kindRef         = "ref"
	kindTestharness = "testharness"
)

func requestsCmd(args []string, stdout, stderr io.Writer) int {
	fset := cli.NewFlagSet("wpt requests")
	fset.SetOutput(stderr)
	root := fset.String("root", "", "the WPT checkout (the oracle's --docroot)")
	limit := fset.Int("limit", 0, "stop after this many tests (references not counted); 0: no limit")
	kinds := fset.String("kinds", "reftest,ref,testharness", "which requests to print")
	if code, done := cli.Parse(fset, args, stdout); done {
		return code
	}
	if *root == "" || fset.NArg() == 0 {
		fmt.Fprintln(stderr, "wpt requests: --root and at least one PATTERN are required")
		return 2
	}
	if *limit < 0 {
		fmt.Fprintln(stderr, "wpt requests: --limit must be >= 0")
		return 2
	}
	if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "wpt requests: --root %s: not a directory (a web-platform-tests checkout)\n", *root)
		return 2
	}
	want := map[string]bool{}
	for _, k := range strings.Split(*kinds, ",") {
		k = strings.TrimSpace(k)
		if k != kindReftest && k != kindRef && k != kindTestharness {
			fmt.Fprintf(stderr, "wpt requests: --kinds %q: want a comma-separated list of %s, %s and %s\n", k, kindReftest, kindRef, kindTestharness)
			return 2
		}
		want[k] = true
	}
	files, err := matchFiles(*root, fset.Args())
	if err != nil {
		fmt.Fprintln(stderr, "wpt requests:", err)
		return 2
	}
	if none := unmatched(fset.Args(), files); len(none) > 0 {
		fmt.Fprintf(stderr, "wpt requests: no test file under %s matches %s\n", *root, strings.Join(none, ", "))
		return 2
	}
	man, err := loadManifest(*root)
	if err != nil {
		fmt.Fprintln(stderr, "wpt requests:", err)
		return 2
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	seen := map[string]bool{}
	counts := map[string]int{}
	tests := 0
	emit := func(r client.Request, kind string) {
		if seen[r.ID] || !want[kind] {
			return
		}
		seen[r.ID] = true
		counts[kind]++
		enc.Encode(r)
	}
	for _, rel := range files {
		if *limit > 0 && tests >= *limit {
			break
		}
		b, err := readTreeFile(*root, rel)
		if err != nil {
			fmt.Fprintln(stderr, "wpt requests:", err)
			continue
		}
		if special, ok := planSpecial(man, *root, rel, b); ok {
			for _, t := range special {
				if t.Skip == "" {
					tests++
					emit(traceRequest(t.URL), kindTestharness)
				} else {
					counts["skipped"]++
				}
			}
			continue
		}
		url := "/" + rel
		switch kind, refs := man.classify(rel, b); kind {
		case kindTestharness:
			tests++
			emit(traceRequest(url), kindTestharness)
		case kindReftest:
			tests++
			emit(client.Request{ID: url, URL: client.Str(url)}, kindReftest)
			for _, ref := range refs {
				if err := treeFile(*root, ref.Path); err != nil {
					fmt.Fprintf(stderr, "wpt requests: %s: reference %v\n", rel, err)
					continue
				}
				emit(client.Request{ID: "/" + ref.Path, URL: client.Str("/" + ref.Path)}, kindRef)
			}
		}
	}
	fmt.Fprintf(stderr, "wpt requests: %d files matched, %d reftests, %d references, %d testharness tests, %d skipped (wpt run reports them as SKIP)\n",
		len(files), counts[kindReftest], counts[kindRef], counts[kindTestharness], counts["skipped"])
	return 0
}

// matchFiles lists the test files under root the patterns select, sorted.
func matchFiles(root string, patterns []string) ([]string, error) {
	set := map[string]bool{}
	for _, pat := range patterns {
		pat = strings.Trim(filepath.ToSlash(pat), "/")
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("bad pattern %q: %v", pat, err)
		}
		base := pat
		if i := strings.IndexAny(pat, "*?["); i >= 0 {
			base = path.Dir(pat[:i+1])
		}
		start := filepath.Join(root, filepath.FromSlash(base))
		err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if !testExt.MatchString(rel) || notATestPath.MatchString(rel) {
				return nil
			}
			if selects(pat, rel) {
				set[rel] = true
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out, nil
}

// selects says whether the pattern pat (cleaned: slashes, no leading or trailing
// one) selects the file rel: a path.Match glob, the path itself, or a directory
// above it.
func selects(pat, rel string) bool {
	ok, _ := path.Match(pat, rel)
	return ok || rel == pat || strings.HasPrefix(rel, pat+"/")
}

// classify says what kind of test the file rel (its content b) is, as WPT's
// manifest does (sourcefile.py, manifest_items): a testharness test, else a reftest
// (with its references) when it links any, else "" (a reference, a support file).
// The name does not count: a file named as a reference ("-ref") that links
// references of its own is a reftest in its own right (WPT's
// infrastructure/reftest/legacy/reftest_and_fail_0-ref.html is expected to FAIL).
func classify(rel string, b []byte) (string, []reference) {
	if testharness.Match(b) {
		return kindTestharness, nil
	}
	if refs := references(rel, b); len(refs) > 0 {
		return kindReftest, refs
	}
	return "", nil
}

// aboutBlank is the one reference with a scheme WPT's reftests use; the oracle
// loads docroot paths only, so a reftest that names it is skipped (planSpecial).
const aboutBlank = "about:blank"

// reference is one <link rel=match|mismatch> of a reftest: the path relative to
// the root, and whether the test must differ from it.
type reference struct {
	Path     string
	Mismatch bool
}

// references are the match/mismatch references a reftest's markup names, paths
// relative to the root.
func references(rel string, b []byte) []reference {
	var out []reference
	for _, link := range refLink.FindAll(b, -1) {
		rm := relMatch.FindSubmatch(link)
		if rm == nil {
			continue
		}
		m := hrefAttr.FindSubmatch(link)
		if m == nil {
			continue
		}
		href := strings.Trim(string(m[1])+string(m[2])+string(m[3]), "\t\n\f\r ") // as the URL parser does
		href, _, _ = strings.Cut(href, "#")
		href, _, _ = strings.Cut(href, "?")
		if strings.EqualFold(href, aboutBlank) {
			out = append(out, reference{Path: aboutBlank, Mismatch: len(rm[1]) > 0})
			continue
		}
		if href == "" || schemeRE.MatchString(href) {
			continue
		}
		var ref string
		if strings.HasPrefix(href, "/") {
			ref = path.Clean(href)[1:]
		} else {
			ref = path.Clean(path.Join(path.Dir(rel), href))
		}
		if strings.HasPrefix(ref, "../") || ref == ".." {
			continue
		}
		out = append(out, reference{Path: ref, Mismatch: len(rm[1]) > 0})
	}
	return out
}

// ---- summary ----

// dirStats is one directory's (or the total's) counts.
type dirStats struct {
	Cases        int            `json:"cases"`
	RequestErrs  int            `json:"request_errors"`
	EngineErrs   map[string]int `json:"engine_errors"`
	Unanimous    int            `json:"unanimous"`
	Majority     int            `json:"majority"`
	Split        int            `json:"split"`
	Outvoted     map[string]int `json:"outvoted"` // majority cases by outvoted engine ("mixed": more than one)
	Unvoted      int            `json:"unvoted"`  // fewer than three answers, or discarded (overflowed)
	Subtests     map[string]int `json:"subtests"` // testharness subtests by vote kind
	SubOutvoted  map[string]int `json:"subtests_outvoted"`
	Testharness  int            `json:"testharness_cases"`
	GeometryCase int            `json:"geometry_cases"`
	EmptyTraces  map[string]int `json:"empty_traces"` // traces with no subtest, by engine
	EmptyNotes   []emptyNote    `json:"empty_trace_notes,omitempty"`
}

// emptyNote is one engine's trace that recorded no subtest, with the message
// run's report gives it.
type emptyNote struct {
	Test    string `json:"test"`
	Engine  string `json:"engine"`
	Message string `json:"message"`
}

func newStats() *dirStats {
	return &dirStats{EngineErrs: map[string]int{}, Outvoted: map[string]int{}, Subtests: map[string]int{}, SubOutvoted: map[string]int{}, EmptyTraces: map[string]int{}}
}

func (s *dirStats) add(o *dirStats) {
	s.Cases += o.Cases
	s.RequestErrs += o.RequestErrs
	s.Unanimous += o.Unanimous
	s.Majority += o.Majority
	s.Split += o.Split
	s.Unvoted += o.Unvoted
	s.Testharness += o.Testharness
	s.GeometryCase += o.GeometryCase
	s.EmptyNotes = append(s.EmptyNotes, o.EmptyNotes...)
	for _, m := range [][2]map[string]int{{s.EngineErrs, o.EngineErrs}, {s.Outvoted, o.Outvoted}, {s.Subtests, o.Subtests}, {s.SubOutvoted, o.SubOutvoted}, {s.EmptyTraces, o.EmptyTraces}} {
		for k, v := range m[1] {
			m[0][k] += v
		}
	}
}

func summaryCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fset := cli.NewFlagSet("wpt summary")
	fset.SetOutput(stderr)
	tol := fset.Float64("tolerance", dump.DefaultTolerance, "geometry tolerance in CSS px")
	asJSON := fset.Bool("json", false, "one JSON object per directory plus a total, instead of the table")
	if code, done := cli.Parse(fset, args, stdout); done {
		return code
	}
	in := stdin
	if fset.NArg() > 0 {
		f, err := os.Open(fset.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, "wpt summary:", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	dirs := map[string]*dirStats{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	line := 0
	for sc.Scan() {
		line++
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var r client.Response // geometry (dumps) or trace (traces)
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintf(stderr, "wpt summary: line %d: %v\n", line, err)
			return 2
		}
		var id string
		if json.Unmarshal(r.ID, &id) != nil {
			id = string(r.ID)
		}
		dir := path.Dir(id)
		s := dirs[dir]
		if s == nil {
			s = newStats()
			dirs[dir] = s
		}
		tally(s, &r, *tol)
		flagEmpty(s, id, &r)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "wpt summary:", err)
		return 2
	}
	names := make([]string, 0, len(dirs))
	total := newStats()
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		total.add(dirs[d]) // in order: the empty-trace notes are listed by directory
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, d := range names {
			enc.Encode(map[string]any{"dir": d, "stats": dirs[d]})
		}
		enc.Encode(map[string]any{"total": total})
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "directory\tcases\terrors cr/ff/wk\tunanimous\tmajority (outvoted cr/ff/wk/mixed)\tsplit\tunvoted\tsubtests u/m/s")
	row := func(name string, s *dirStats) {
		fmt.Fprintf(tw, "%s\t%d\t%d/%d/%d\t%d\t%d (%d/%d/%d/%d)\t%d\t%d\t%d/%d/%d\n", name, s.Cases,
			s.EngineErrs["chromium"], s.EngineErrs["firefox"], s.EngineErrs["webkit"],
			s.Unanimous, s.Majority, s.Outvoted["chromium"], s.Outvoted["firefox"], s.Outvoted["webkit"], s.Outvoted["mixed"],
			s.Split, s.Unvoted, s.Subtests[string(vote.Unanimous)], s.Subtests[string(vote.Majority)], s.Subtests[string(vote.Split)])
	}
	for _, d := range names {
		row(d, dirs[d])
	}
	row("total", total)
	tw.Flush()
	if total.RequestErrs > 0 {
		fmt.Fprintf(stdout, "%d requests were refused by the oracle (their \"error\")\n", total.RequestErrs)
	}
	if len(total.EmptyNotes) > 0 {
		fmt.Fprintf(stdout, "%d traces recorded no subtest:\n", len(total.EmptyNotes))
		for _, n := range total.EmptyNotes {
			fmt.Fprintf(stdout, "  %s %s: %s\n", n.Test, n.Engine, n.Message)
		}
	}
	return 0
}

// flagEmpty notes each engine's trace in r that recorded no subtest, with the
// message run's report gives it (harnessResult).
func flagEmpty(s *dirStats, id string, r *client.Response) {
	engines := make([]string, 0, len(r.Traces))
	for e := range r.Traces {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	for _, e := range engines {
		if r.Traces[e] == nil {
			continue
		}
		if _, m, subs := harnessResult(r.Traces[e]); len(subs) == 0 && m != nil {
			s.EmptyTraces[e]++
			s.EmptyNotes = append(s.EmptyNotes, emptyNote{Test: id, Engine: e, Message: *m})
		}
	}
}

// tally counts one response into s.
func tally(s *dirStats, r *client.Response, tol float64) {
	s.Cases++
	if r.Error != "" {
		s.RequestErrs++
		return
	}
	for e := range r.Errors {
		s.EngineErrs[e]++
	}
	switch {
	case r.Traces != nil:
		s.Testharness++
		if len(r.Traces) < 3 {
			s.Unvoted++
			return
		}
		v := compare.Traces(r.Traces, trace.DefaultBufferTolerance)
		for _, rv := range v.Records {
			s.Subtests[string(rv.Kind)]++
			if rv.Kind == vote.Majority {
				s.SubOutvoted[rv.Outlier]++
			}
		}
		caseKind(s, v.Whole.Kind, v.Whole.Outlier)
	default:
		s.GeometryCase++
		if len(r.Dumps) < 3 {
			s.Unvoted++
			return
		}
		rep, err := compare.Geometry(r.Dumps, nil, tol)
		if err != nil || rep.Verdict == compare.Discarded || rep.Verdict == compare.Untrustworthy && rep.ShapeVote != vote.Split {
			s.Unvoted++
			return
		}
		if rep.ShapeVote == vote.Split || rep.Votes[vote.Split] > 0 {
			s.Split++
			return
		}
		if rep.Votes[vote.Majority] == 0 && rep.ShapeVote != vote.Majority {
			s.Unanimous++
			return
		}
		outvoted := map[string]bool{}
		for _, o := range rep.Outliers {
			outvoted[o.Engine] = true
		}
		out := "mixed"
		if len(outvoted) == 1 {
			for e := range outvoted {
				out = e
			}
		}
		s.Majority++
		s.Outvoted[out]++
	}
}

func caseKind(s *dirStats, k vote.Kind, outlier string) {
	switch k {
	case vote.Unanimous:
		s.Unanimous++
	case vote.Majority:
		s.Majority++
		s.Outvoted[outlier]++
	case vote.Split:
		s.Split++
	default:
		s.Unvoted++
	}
}
