package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/internal/progress"
)

// plannedTest is one test file a run reports: a testharness test or a reftest.
type plannedTest struct {
	URL  string // "/css/x/a.html", the wptreport "test"
	Kind string // kindTestharness or kindReftest
	Refs []reference
	// Fuzzy are the reftest's <meta name=fuzzy> values (pixels.go).
	Fuzzy []fuzzy
	// Graph is what the reftest compares (reftestchain.go); nil: an error, GraphErr.
	Graph    *refNode
	GraphErr string
	// Skip, when not "", is why the test is not run: its status is SKIP (testtypes.go).
	Skip string
}

// answer is what the oracle gave one request, sent once per engine (runRequests):
// the engines' answers merged into Resp, each engine's call error and duration.
// Err, when set, is the whole request's failure (every engine's).
type answer struct {
	Resp      *client.Response
	Err       error
	Errs      map[string]error
	Durations map[string]time.Duration
}

// engineError is why engine has no answer to a request, "" when it has one.
func (a answer) engineError(engine string) string {
	switch {
	case a.Err != nil:
		return a.Err.Error()
	case a.Errs[engine] != nil:
		return a.Errs[engine].Error()
	case a.Resp == nil:
		return "not run"
	case a.Resp.Error != "":
		return "the oracle refused the request: " + a.Resp.Error
	}
	if m, ok := a.Resp.Errors[engine]; ok {
		return m
	}
	if a.Resp.Dumps[engine] == nil && a.Resp.Traces[engine] == nil {
		return "no answer from " + engine
	}
	return ""
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	args, dashed := splitDashes(args)
	fset := cli.NewFlagSet("wpt run")
	fset.SetOutput(stderr)
	root := fset.String("root", "", "the WPT checkout (the oracle's --docroot)")
	out := fset.String("out", ".", "where to write wptreport-<engine>.json")
	oracleBin := fset.String("oracle", "", "the oracle binary (`PATH`); default: oracle next to this binary, else on PATH")
	var oflags cli.List
	fset.Var(&oflags, "oracle-flag", "a flag `F` passed to the oracle (repeatable), e.g. --oracle-flag=--pages=1")
	oracleLog := fset.String("oracle-log", "", "the oracle's stderr goes here (default OUT/oracle.log)")
	parallel := fset.Int("parallel", 4, "tests in flight at once (each sent to every engine at once)")
	cli.Alias(fset, "inflight", "parallel")
	revision := fset.String("revision", "", "the WPT commit ROOT holds, run_info.revision (default: git rev-parse HEAD when ROOT is the top of a git work tree)")
	tol := fset.Float64("tolerance", dump.DefaultTolerance, "reftest geometry tolerance in CSS px")
	chains := fset.Bool("ref-chains", false, "follow references' own references, as wptrunner did before RFC 15")
	if code, done := cli.Parse(fset, args, stdout); done {
		return code
	}
	oracleArgs := withDashed(oflags, dashed, stderr)
	if *root == "" || fset.NArg() == 0 || *parallel < 1 {
		fmt.Fprintln(stderr, "usage: wpt run --root ROOT [--out DIR] [--oracle PATH] [--oracle-flag F]... PATTERN...")
		return 2
	}
	if a := cli.FlagAmong(fset.Args()); a != "" {
		fmt.Fprintf(stderr, "wpt run: %s after the patterns: flags go before them (an oracle flag as --oracle-flag F)\n", a)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "wpt run:", err)
		return 1
	}
	if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "wpt run: --root %s: not a directory (a web-platform-tests checkout)\n", *root)
		return 2
	}
	// wpt.fyi refuses a report without run_info.revision: said before the run, not
	// after it.
	revisionKnown := *revision != "" || gitRevision(*root) != ""
	if !revisionKnown {
		fmt.Fprintf(stderr, "wpt run: %s is not the top of a git work tree and no --revision was given: the reports will have no run_info.revision, which wpt.fyi refuses\n", *root)
	}
	files, err := matchFiles(*root, fset.Args())
	if err != nil {
		return fail(err)
	}
	if none := unmatched(fset.Args(), files); len(none) > 0 {
		fmt.Fprintf(stderr, "wpt run: no test file under %s matches %s\n", *root, strings.Join(none, ", "))
		return 2
	}
	man, err := loadManifest(*root)
	if err != nil {
		return fail(err)
	}
	tests, reqs := planRun(man, *root, files, *chains, stderr)
	if len(tests) == 0 {
		return fail(fmt.Errorf("no testharness test or reftest matched %s", strings.Join(fset.Args(), " ")))
	}
	bin, err := client.FindOracle(*oracleBin)
	if err != nil {
		return fail(err)
	}
	od, err := outdir.Open(*out)
	if err != nil {
		return fail(err)
	}
	defer od.Close()
	var logf *os.File
	if *oracleLog == "" {
		*oracleLog = od.Join("oracle.log")
		logf, err = od.Create("oracle.log")
	} else {
		logf, err = os.Create(*oracleLog)
	}
	if err != nil {
		return fail(err)
	}
	defer logf.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := client.Spawn(ctx, bin, oracleFlags(*root, oracleArgs), client.Options{Stderr: logf, Restart: true})
	if err != nil {
		return fail(err)
	}
	defer c.Kill()
	ping, err := c.WaitReady(ctx, 500*time.Millisecond)
	if err != nil {
		return fail(fmt.Errorf("oracle did not start (its log: %s): %w", *oracleLog, err))
	}
	for e, why := range ping.Failed {
		fmt.Fprintf(stderr, "wpt run: %s failed to start: %s\n", e, why)
	}
	start := time.Now()
	var each func(done int, req client.Request, a answer)
	if !progress.Terminal(stderr) {
		each = testLine(stderr, len(reqs), ping.Engines)
	}
	answers := runRequests(ctx, c, reqs, enginePages(ping), *parallel, progress.New(stderr, int64(len(reqs)), "wpt run", "requests"), each)
	end := time.Now()
	if err := c.Close(); err != nil {
		fmt.Fprintln(stderr, "wpt run: closing the oracle:", err)
	}
	base := machineInfo()
	base.Revision = *revision
	if base.Revision == "" {
		base.Revision = gitRevision(*root)
	}
	if base.Revision == "" {
		fmt.Fprintf(stderr, "wpt run: run_info.revision is missing (said at the start): wpt.fyi refuses these reports\n")
	} else if !commitRE.MatchString(base.Revision) {
		fmt.Fprintf(stderr, "wpt run: --revision %q is not a full 40-hex commit, which wpt.fyi files runs under\n", base.Revision)
	}
	base.Verify = verifies(oracleArgs)
	code := 0
	results := map[string][]wptResult{}
	for _, e := range ping.Engines {
		info := base
		info.Product, info.BrowserVersion = productName(e), ping.Versions[e]
		info.Headless = e != "webkit" // WebKitGTK runs in a display (an Xvfb), the others headless
		rep := wptReport{
			RunInfo:   info,
			TimeStart: start.UnixMilli(),
			Results:   engineResults(e, tests, answers, *tol, ctx.Err() != nil),
			TimeEnd:   end.UnixMilli(),
		}
		results[e] = rep.Results
		name := "wptreport-" + e + ".json"
		file := od.Join(name)
		b, err := jsonLine(rep)
		if err == nil {
			err = od.WriteFile(name, b)
		}
		if err != nil {
			fmt.Fprintln(stderr, "wpt run:", err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: %s\n", file, countStatuses(rep.Results))
	}
	if view, err := od.Sub("reftests"); err != nil {
		fmt.Fprintln(stderr, "wpt run: the reftest view:", err)
		code = 1
	} else if n, err := writeReftestView(view, tests, answers, results, *tol); err != nil {
		view.Close()
		fmt.Fprintln(stderr, "wpt run: the reftest view:", err)
		code = 1
	} else {
		view.Close()
		fmt.Fprintf(stdout, "%s: %d reftests the engines split on\n", view.Join("index.html"), n)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "wpt run: interrupted; the reports hold the tests that were sent")
		return 1
	}
	return code
}

// withDashed is the oracle's flags: each --oracle-flag, then the flags after "--",
// the spelling until this release, which still works and says it is deprecated.
func withDashed(oracleFlags, dashed []string, stderr io.Writer) []string {
	if len(dashed) > 0 {
		cli.Deprecation(stderr, "wpt run", "-- FLAGS", "--oracle-flag F, repeated")
	}
	return append(slices.Clip(oracleFlags), dashed...)
}

// splitDashes splits args at the first "--": the rest are the oracle's flags (the
// deprecated spelling of --oracle-flag).
func splitDashes(args []string) (own, rest []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

// oracleParallel is the oracle's --parallel under wpt run: more than the pages of
// the three engines together, so the oracle serves every request wpt run sends at
// once, and runRequests bounds them per engine by the engine's pages.
const oracleParallel = 256

// oracleFlags are the oracle's arguments: always --docroot ROOT, --store=off unless
// the user's flags choose a store, and --parallel (oracleParallel) unless they set
// it (or its deprecated spelling --inflight).
func oracleFlags(root string, extra []string) []string {
	args := []string{"--docroot", root}
	if !client.NamesStore(extra) {
		args = append(args, "--store=off")
	}
	if !client.NamesFlag(extra, "parallel") && !client.NamesFlag(extra, "inflight") {
		args = append(args, fmt.Sprintf("--parallel=%d", oracleParallel))
	}
	return append(args, extra...)
}

// planRun reads the files (their types from man when the tree has a manifest)
// and returns the tests to report and the requests to send:
// a trace for each testharness test, a geometry request for each reftest and, once,
// each reference that exists.
func planRun(man *wptManifest, root string, files []string, chains bool, stderr io.Writer) ([]plannedTest, []client.Request) {
	var tests []plannedTest
	var reqs []client.Request
	seen := map[string]bool{}
	geometry := func(url string) {
		if !seen[url] {
			seen[url] = true
			reqs = append(reqs, client.Request{ID: url, URL: client.Str(url), Screenshot: true})
		}
	}
	for _, rel := range files {
		b, err := readTreeFile(root, rel)
		if err != nil {
			fmt.Fprintln(stderr, "wpt run:", err)
			continue
		}
		if special, ok := planSpecial(man, root, rel, b); ok {
			for _, t := range special {
				if t.Skip == "" {
					reqs = append(reqs, traceRequest(t.URL))
				}
			}
			tests = append(tests, special...)
			continue
		}
		url := "/" + rel
		kind, refs := man.classify(rel, b)
		pt := plannedTest{URL: url, Kind: kind, Refs: refs, Fuzzy: fuzzyMetas(rel, b)}
		switch kind {
		case kindTestharness:
			seen[url] = true
			reqs = append(reqs, traceRequest(url))
		case kindReftest:
			pt.Graph = manifestGraph(url, pt.Fuzzy, refs)
			if chains {
				if pt.Graph, err = chainGraph(url, fileLinks(root)); err != nil {
					pt.GraphErr = err.Error()
					break
				}
			}
			// A test none of whose references exists is an error without running it.
			urls := graphURLs(pt.Graph)
			for _, u := range urls[1:] {
				if treeFile(root, u[1:]) == nil {
					geometry(url)
					geometry(u)
				}
			}
		default:
			continue
		}
		tests = append(tests, pt)
	}
	return tests, reqs
}

// engineResults are one engine's wptreport results, in the tests' order. An
// interrupted run leaves out the tests it never sent, as wptrunner does.
func engineResults(engine string, tests []plannedTest, answers map[string]answer, tol float64, interrupted bool) []wptResult {
	out := make([]wptResult, 0, len(tests))
	for _, t := range tests {
		if t.Skip != "" {
			out = append(out, wptResult{Test: t.URL, Status: statusSkip, Message: msg(t.Skip), Subtests: []wptSubtest{}})
			continue
		}
		a, ran := answers[t.URL]
		if !ran && interrupted {
			continue
		}
		res := wptResult{Test: t.URL, Subtests: []wptSubtest{}}
		if ran {
			res.Duration = a.Durations[engine].Milliseconds()
		}
		if t.Kind == kindReftest && t.GraphErr != "" {
			res.Status, res.Message = statusError, msg("reftest: "+t.GraphErr)
			out = append(out, res)
			continue
		}
		if !ran && t.Kind == kindReftest && len(t.Refs) > 0 {
			// planRun sent no request: none of its references exists.
			res.Status, res.Message = statusError, msg("reftest: reference /"+t.Refs[0].Path+": not found under the root")
			out = append(out, res)
			continue
		}
		if why := a.engineError(engine); why != "" {
			res.Status, res.Message = errorStatus(why), msg(why)
			out = append(out, res)
			continue
		}
		switch t.Kind {
		case kindTestharness:
			res.Status, res.Message, res.Subtests = harnessResult(a.Resp.Traces[engine])
		case kindReftest:
			g := t.Graph
			if g == nil {
				g = manifestGraph(t.URL, t.Fuzzy, t.Refs)
			}
			dumps := engineDumps(engine, answers)
			var last *pairResult
			res.Status, res.Message, last = walkReftest(g, dumps, tol)
			if res.Status == statusPass {
				res.Message = nil // as wptrunner: a pass says nothing; the reftest view shows the pixels
			}
			if res.Status == statusFail && last != nil {
				res.Screenshots = screenshotHashes(dumps, last.Left, last.Right)
			}
		}
		if u := a.Resp.Unstable[engine]; len(u) > 0 {
			note := fmt.Sprintf("unstable between verified runs: %s", strings.Join(u, ", "))
			if res.Message != nil {
				note = *res.Message + "; " + note
			}
			res.Message = &note
		}
		out = append(out, res)
	}
	return out
}

// gitRevision is the commit checked out at root when root is the top of a git work
// tree, else "" (a directory inside some other repository is not a WPT checkout).
func gitRevision(root string) string {
	top, err := exec.Command("git", "-C", root, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return ""
	}
	a, err1 := filepath.EvalSymlinks(strings.TrimSpace(string(top)))
	b, err2 := filepath.EvalSymlinks(root)
	if err1 != nil || err2 != nil {
		return ""
	}
	if b, err = filepath.Abs(b); err != nil || a != b {
		return ""
	}
	rev, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(rev))
}

// machineInfo is run_info's keys for this machine, as mozinfo names them: os,
// processor, bits, and on Linux the distribution from /etc/os-release.
func machineInfo() runInfo {
	ri := runInfo{OS: runtime.GOOS, Processor: runtime.GOARCH, Bits: strconv.IntSize}
	if ri.Processor == "amd64" {
		ri.Processor = "x86_64"
	}
	if ri.OS == "darwin" {
		ri.OS = "mac"
	}
	b, err := os.ReadFile("/etc/os-release")
	if err != nil || ri.OS != "linux" {
		return ri
	}
	fields := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			fields[k] = strings.Trim(v, `"'`)
		}
	}
	ri.LinuxDistro, _, _ = strings.Cut(fields["NAME"], " ")
	ri.OSVersion = fields["VERSION_ID"]
	ri.Version = strings.TrimSpace(ri.LinuxDistro + " " + ri.OSVersion)
	return ri
}

// verifies says whether the oracle's flags ask for repeated runs (--verify N > 1),
// what run_info's verify means for wptrunner.
func verifies(oracleArgs []string) bool {
	for i, a := range oracleArgs {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "verify" {
			continue
		}
		if !hasVal && i+1 < len(oracleArgs) {
			val = oracleArgs[i+1]
		}
		n, err := strconv.Atoi(val)
		return err == nil && n > 1
	}
	return false
}

// jsonLine is v as one line, as wptreport.py writes it, without HTML escapes.
func jsonLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// countStatuses is "N tests (OK 3, PASS 1), M subtests (PASS 5, FAIL 2)".
func countStatuses(results []wptResult) string {
	tests, subs := map[string]int{}, map[string]int{}
	n := 0
	for _, r := range results {
		tests[r.Status]++
		for _, s := range r.Subtests {
			subs[s.Status]++
			n++
		}
	}
	return fmt.Sprintf("%d tests (%s), %d subtests (%s)", len(results), countList(tests), n, countList(subs))
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// engineDumps gives engine's dump of a document of the run, or why there is none.
func engineDumps(engine string, answers map[string]answer) func(url string) (*dump.Dump, string) {
	return func(url string) (*dump.Dump, string) {
		a, ok := answers[url]
		if !ok {
			return nil, "not found under the root"
		}
		if why := a.engineError(engine); why != "" {
			return nil, why
		}
		return a.Resp.Dumps[engine], ""
	}
}

// unmatched are the patterns that select none of files (matchFiles' result).
func unmatched(patterns, files []string) []string {
	var out []string
	for _, pat := range patterns {
		found := false
		for _, f := range files {
			if selects(strings.Trim(filepath.ToSlash(pat), "/"), f) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, pat)
		}
	}
	return out
}
