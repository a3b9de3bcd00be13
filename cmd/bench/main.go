// Command bench measures the layout oracle against the alternatives:
//
//	(a) the oracle binary with its defaults (--pages/--parallel defaults), all engines
//	(b) a naive baseline that launches a fresh browser per case (on a sample)
//	(c) the oracle with --pages=1 --parallel=1
//	(d) each engine's own bare setContent+evaluate round trip, no oracle
//
// over the same N generated cases, and prints cases/s, per-engine median and p99
// latency, the ratio against the baseline and the overhead against the bare round
// trip. --soak N instead pipes N cases through one oracle and samples the resident
// memory of the oracle and every process under it. See README.md beside this file.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/proctree"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pagecount"
	"github.com/rs/zerolog"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type config struct {
	cases, sample, soak, soakEvery int
	storeBench                     int
	gate                           bool
	gateCases                      int
	fuzzInert                      int
	gateFreshOracle                string
	startupRuns                    int
	seed                           uint64
	oracleBin, logDir              string
	engines, ways                  []string
	asJSON, trivial                bool
	soakRef, soakMaxGrowth         float64
}

// run is the whole command minus os.Exit: 0 done (goals are reported, not enforced),
// 1 a measurement failed or the soak's memory grew past the limit, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("bench")
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.cases, "cases", 500, "number of generated cases, N")
	seed := fs.Uint64("seed", 1, "case generator seed")
	emit := fs.Bool("emit-cases", false, "write the --cases generated cases (of --seed) as NDJSON requests on stdout and exit: a corpus for other commands (make bench-triage)")
	fs.StringVar(&c.oracleBin, "oracle", "", "the oracle binary (`PATH`); default: go build ./cmd/oracle into a temp dir")
	engines := fs.String("engines", strings.Join(browser.AllEngines, ","), "engines, comma-separated")
	ways := fs.String("ways", "a,v,b,c,d", "ways to run, comma-separated: a (oracle defaults), v (oracle --verify 3: what verification costs against a), b (browser per case), c (oracle --pages=1 --parallel=1), d (bare round trip)")
	fs.IntVar(&c.sample, "baseline-sample", 20, "cases the browser-per-case baseline (b) runs; its cases/s is extrapolated from them")
	fs.BoolVar(&c.trivial, "bare-trivial", true, "also time the bare round trip with a trivial evaluate instead of the walk")
	fs.BoolVar(&c.asJSON, "json", false, "print one JSON object instead of the table")
	fs.StringVar(&c.logDir, "log-dir", "", "where the oracles' stderr logs go (default: a temp dir, kept)")
	fs.IntVar(&c.storeBench, "store-bench", 0, "store mode: answer this many cases cold into a fresh --store, then warm from it in a new oracle; fails unless warm is 50x faster")
	fs.IntVar(&c.soak, "soak", 0, "soak mode: pipe this many cases through one oracle (defaults) and sample RSS")
	fs.IntVar(&c.startupRuns, "startup", 0, "startup mode: start the oracle this many times (its defaults plus each --oracle-flag) and report the median time to the first ping answer and to every engine serving")
	var oracleFlags cli.List
	fs.Var(&oracleFlags, "oracle-flag", "startup, gate and fuzz-inert modes: a flag `F` passed to the oracle (repeatable), e.g. --oracle-flag=--docroot=testdata/wpt")
	cli.SplitAlias(fs, "oracle-args", "oracle-flag", &oracleFlags) // deprecated: --oracle-args "A B"
	fs.BoolVar(&c.gate, "gate", false, "gate mode: the requests of --gate-corpus, --gate-cases generated cases and the hostile cases, through an oracle with --inert-reuse=false and then, in two random orders, through the oracle as it ships; prints the engine answers compared and different, and fails on any difference")
	fs.StringVar(&c.gateFreshOracle, "gate-fresh-oracle", "", "gate: the fresh path is this oracle binary (an earlier build's, a new document per case) instead of --oracle with --inert-reuse=false")
	fs.IntVar(&c.gateCases, "gate-cases", 200, "gate: generated cases (a tenth with a script)")
	fs.IntVar(&c.fuzzInert, "fuzz-inert", 0, "fuzz-inert mode: this many generated hostile-then-innocent pairs through one page per engine with the inert reuse, and the innocent cases through --inert-reuse=false; fails when an innocent answer differs (--oracle-flag adds oracle flags)")
	versus := fs.String("versus", "", "versus mode: another oracle binary (an earlier commit's); the script-free and the scripted generated cases (--cases of each) through it and through --oracle, row a's throughput pass, interleaved; prints cases/s, CPU ms per case and new over old")
	gateCorpus := fs.String("gate-corpus", "", "gate: NDJSON request files, comma-separated (ids are prefixed with the file name)")
	fs.IntVar(&c.soakEvery, "soak-every", 1000, "soak: sample RSS every this many cases")
	fs.Float64Var(&c.soakRef, "soak-ref", 0.2, "soak: the reference sample is the first at or after this fraction of the run")
	fs.Float64Var(&c.soakMaxGrowth, "soak-max-growth", 0.5, "soak: fail when the last sample exceeds the reference by more than this fraction (total, and the oracle process alone)")
	if code, done := cli.Parse(fs, args, stdout); done {
		return code
	}
	c.seed = *seed
	if *emit {
		enc := json.NewEncoder(stdout)
		for _, bc := range generateCases(c.seed, c.cases) {
			if err := enc.Encode(bc); err != nil {
				fmt.Fprintln(stderr, "bench:", err)
				return 1
			}
		}
		return 0
	}
	c.engines = cli.SplitList(*engines)
	c.ways = cli.SplitList(*ways)
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "bench: unexpected argument %q: every flag starts with - (see -h)\n", fs.Arg(0))
		return 2
	case c.cases < 1, c.sample < 1, c.soakEvery < 1:
		fmt.Fprintf(stderr, "bench: --cases (%d), --sample (%d) and --soak-every (%d) must each be at least 1\n", c.cases, c.sample, c.soakEvery)
		return 2
	}
	for _, w := range c.ways {
		if !strings.Contains("a v b c d", w) || len(w) != 1 {
			fmt.Fprintf(stderr, "bench: unknown way %q\n", w)
			return 2
		}
	}
	if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" { // as the oracle does (make exports it)
		if node, err := exec.LookPath("node"); err == nil {
			os.Setenv("PLAYWRIGHT_NODEJS_PATH", node)
		}
	}
	if c.logDir == "" {
		d, err := os.MkdirTemp("", "oracle-bench-")
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		c.logDir = d
	}
	if err := os.MkdirAll(c.logDir, 0o755); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	if c.oracleBin == "" {
		bin := filepath.Join(c.logDir, "oracle")
		build := exec.Command("go", "build", "-o", bin, "github.com/layout-oracle/oracle/cmd/oracle")
		build.Stdout, build.Stderr = stderr, stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(stderr, "bench: build oracle:", err)
			return 1
		}
		c.oracleBin = bin
	}
	fmt.Fprintf(stderr, "bench: logs in %s\n", c.logDir)
	if *versus != "" {
		return runVersus(c, *versus, stdout, stderr)
	}
	if c.fuzzInert > 0 {
		return runFuzzInert(c, c.fuzzInert, oracleFlags, stdout, stderr)
	}
	if c.gate {
		return runGate(c, cli.SplitList(*gateCorpus), oracleFlags, stdout, stderr)
	}
	if c.startupRuns > 0 {
		return runStartup(c, oracleFlags, stdout, stderr)
	}
	if c.soak > 0 {
		return runSoak(c, stdout, stderr)
	}
	if c.storeBench > 0 {
		return runStoreBench(c, stdout, stderr)
	}
	return runBench(c, stdout, stderr)
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// report is the --json output.
type report struct {
	Cases   int          `json:"cases"`
	Seed    uint64       `json:"seed"`
	Engines []string     `json:"engines"`
	Rows    []*wayResult `json:"rows"`
	Goals   []goal       `json:"goals"`
	Load    string       `json:"loadavg_at_start"`
}

type goal struct {
	What  string  `json:"what"`
	Value float64 `json:"value"`
	Limit string  `json:"limit"`
	Met   bool    `json:"met"`
}

func runBench(c config, stdout, stderr io.Writer) int {
	ctx := context.Background()
	cases := generateCases(c.seed, c.cases)
	logf, err := os.Create(filepath.Join(c.logDir, "bench.log"))
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	defer logf.Close()
	log := zerolog.New(logf).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	rep := report{Cases: c.cases, Seed: c.seed, Engines: c.engines, Load: loadavg()}
	fail := func(what string, err error) int {
		fmt.Fprintf(stderr, "bench: %s: %v\n", what, err)
		return 1
	}
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", a...) }

	if has(c.ways, "a") {
		progress("(a) oracle, defaults: %d cases", c.cases)
		row, err := oracleWay(c, cases, "a", "oracle (defaults)", nil, pagecount.Default, progress)
		if err != nil {
			return fail("(a)", err)
		}
		rep.Rows = append(rep.Rows, row)
	}
	if has(c.ways, "v") {
		progress("(v) oracle, --verify 3: %d cases", c.cases)
		row, err := oracleWay(c, cases, "v", "oracle --verify 3", []string{"--verify=3"}, pagecount.Default, progress)
		if err != nil {
			return fail("(v)", err)
		}
		rep.Rows = append(rep.Rows, row)
	}
	if has(c.ways, "c") {
		progress("(c) oracle, --pages=1 --parallel=1: %d cases", c.cases)
		row, err := oracleWay(c, cases, "c", "oracle --pages=1 --parallel=1", []string{"--pages=1", "--parallel=1"}, 1, progress)
		if err != nil {
			return fail("(c)", err)
		}
		rep.Rows = append(rep.Rows, row)
	}
	if has(c.ways, "d") {
		progress("(d) bare round trip: %d cases per engine", c.cases)
		bare, err := runBare(ctx, cases, c.engines, c.trivial, log)
		if err != nil {
			return fail("(d)", err)
		}
		rep.Rows = append(rep.Rows, bareRows(bare, c)...)
	}
	if has(c.ways, "b") {
		sample := sampleCases(cases, c.sample)
		progress("(b) browser per case: %d sample cases", len(sample))
		b, err := runBaseline(ctx, sample, c.engines, log)
		if err != nil {
			return fail("(b)", err)
		}
		row := &wayResult{Key: "b", Way: "browser per case", Cases: b.Cases, WallS: b.Wall.Seconds(),
			CasesPerS: float64(b.Cases) / b.Wall.Seconds(), Extrapolated: true,
			Latency: map[string]latency{latencyAll: summarize(b.PerCase)}, Errors: b.Errors,
			Note: fmt.Sprintf("* sample of %d of the %d cases (evenly spread); cases/s extrapolated from it. "+
				"Per case: a fresh browser per engine, the %d engines at once, oracle.Geometry walk, close; one shared Playwright driver and Xvfb.",
				b.Cases, c.cases, len(c.engines))}
		for e, ds := range b.Engine {
			row.Latency[e] = summarize(ds)
		}
		if b.FirstEr != "" {
			row.Note += " First error: " + b.FirstEr
		}
		rep.Rows = append(rep.Rows, row)
	}
	fillRatios(rep.Rows, c.engines)
	rep.Goals = goals(rep.Rows, c.engines)

	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fail("json", err)
		}
		return 0
	}
	fmt.Fprintf(stdout, "layout oracle bench: %d cases (seed %d), engines %s; load average at start %s\n\n",
		c.cases, c.seed, strings.Join(c.engines, ","), rep.Load)
	writeTable(stdout, rep.Rows, c.engines)
	fmt.Fprintln(stdout)
	for _, g := range rep.Goals {
		verdict := "NOT MET"
		if g.Met {
			verdict = "met"
		}
		fmt.Fprintf(stdout, "goal: %-60s %8sx (want %s): %s\n", g.What, fmtNum(g.Value), g.Limit, verdict)
	}
	return 0
}

// goals are the two targets, as far as the rows measured them.
func goals(rows []*wayResult, engines []string) []goal {
	var out []goal
	for _, r := range rows {
		if r.Key == "a" && r.RatioVsBaseline > 0 {
			out = append(out, goal{What: "(a) cases/s over (b) browser-per-case cases/s", Value: r.RatioVsBaseline, Limit: ">= 50", Met: r.RatioVsBaseline >= 50})
		}
		if r.Key == "c" {
			for _, e := range engines {
				x, ok := r.OverheadVsBare[e]
				switch {
				case ok && r.BareRef == "d-fresh": // against the fastest correct round trip
					out = append(out, goal{What: fmt.Sprintf("(c) %s median latency over bare fresh-document median", e), Value: x, Limit: "<= 1.2", Met: x <= 1.2})
				case ok: // against the walk in the same document
					out = append(out, goal{What: fmt.Sprintf("(c) %s median latency over bare walk median", e), Value: x, Limit: "<= 2", Met: x <= 2})
				}
			}
		}
	}
	return out
}

// oracleWay is ways (a) and (c): one oracle process; a warm-up; one pass of all cases
// to all engines piped as fast as backpressure allows (wall time, cases/s, the
// three-engine request's latency, which includes time queued in the pipe); then one
// pass per engine naming only that engine, with at most `window` requests
// outstanding (the oracle's --parallel), so each latency is service time with the
// oracle's places full but nothing queued client-side.
func oracleWay(c config, cases []benchCase, key, name string, extra []string, window int, progress func(string, ...any)) (*wayResult, error) {
	p, startup, all, cpu, err := throughput(c, cases, key, extra, func(startup startupTimes) {
		progress("(%s) oracle answered ping in %.1fs, every engine serving in %.1fs", key, startup.FirstPing.Seconds(), startup.AllReady.Seconds())
	})
	if err != nil {
		return nil, err
	}
	defer p.kill()
	row := &wayResult{Key: key, Way: name, Cases: len(cases), WallS: all.Wall.Seconds(),
		CasesPerS: float64(len(cases)) / all.Wall.Seconds(),
		Latency:   map[string]latency{latencyAll: summarize(all.Latencies)}, Errors: all.Errors,
		Note: fmt.Sprintf("wall and cases/s: all %d cases to all engines, piped at once (all-engine latency includes pipe queueing); "+
			"per-engine latency: a pass per engine (\"engines\":[e]) with %d request(s) outstanding (row a: the engine's default page count). "+
			"Oracle startup (not in wall): first ping answered %.1fs, every engine serving %.1fs.",
			len(cases), window, startup.FirstPing.Seconds(), startup.AllReady.Seconds()),
		Startup: &startup, CPUPerCase: cpu}
	firstErr := all.FirstErr
	for _, e := range c.engines {
		progress("(%s) %s pass", key, e)
		w := window
		if key == "a" || key == "v" {
			// The defaults give each engine its own page count (pagecount.PerEngine):
			// its pass keeps that many requests outstanding, its pages full.
			if n := pagecount.PerEngine[e]; n > 0 {
				w = n
			}
		}
		r, err := p.pass(cases, e+"-", []string{e}, w)
		if err != nil {
			return nil, err
		}
		row.Latency[e] = summarize(r.Latencies)
		row.Errors += r.Errors
		if firstErr == "" {
			firstErr = r.FirstErr
		}
	}
	if firstErr != "" {
		row.Note += " First error: " + firstErr
	}
	if err := p.close(); err != nil {
		return nil, err
	}
	return row, nil
}

// throughput starts an oracle (--engines, extra flags, its log oracle-KEY.log),
// warms it with ten cases, then sends every case to every engine piped at once:
// the pass of row a and of versus. started, if not nil, hears of the oracle's start.
// The oracle is left running for more passes.
func throughput(c config, cases []benchCase, key string, extra []string, started func(startupTimes)) (*oracleProc, startupTimes, passResult, map[string]float64, error) {
	args := append([]string{"--engines=" + strings.Join(c.engines, ","), "--log-level=warn"}, extra...)
	p, startup, err := startOracle(c.oracleBin, args, filepath.Join(c.logDir, "oracle-"+key+".log"))
	if err != nil {
		return nil, startup, passResult{}, nil, err
	}
	if started != nil {
		started(startup)
	}
	fail := func(err error) (*oracleProc, startupTimes, passResult, map[string]float64, error) {
		p.kill()
		return nil, startup, passResult{}, nil, err
	}
	if _, err := p.pass(cases[:min(10, len(cases))], "warm-", nil, 0); err != nil {
		return fail(err)
	}
	cpu0 := proctree.CPU(p.pid())
	all, err := p.pass(cases, "all-", nil, 0)
	if err != nil {
		return fail(err)
	}
	return p, startup, all, cpuPerCase(cpu0, proctree.CPU(p.pid()), len(cases)), nil
}

func bareRows(bare map[string]*bareResult, c config) []*wayResult {
	walk := &wayResult{Key: "d-walk", Way: "bare evaluate(case program)", Cases: c.cases, Latency: map[string]latency{},
		Note: "per engine, one page, cases one at a time, engines one after another; wall and cases/s are the three engines' sum. " +
			"walk: one driver call of the case program (document write, settle point, walk) in the document the case before left: no new document, so not a correct way to run untrusted cases; the floor of a case's own work."}
	fresh := &wayResult{Key: "d-fresh", Way: "bare goto(about:blank)+evaluate", Cases: c.cases, Latency: map[string]latency{},
		Note: "as d-walk, after the driver's own navigation to a new about:blank (Playwright page.Goto, WebDriver Navigate To): " +
			"the fastest correct way to give each case a new document and walk it. The oracle's overhead is measured against this row."}
	triv := &wayResult{Key: "d-triv", Way: "bare setContent+evaluate(1)", Cases: c.cases, Latency: map[string]latency{},
		Note: "chromium/firefox page.SetContent + page.Evaluate of a constant, webkit one Execute Script (document.open/write/close + constant)."}
	var wallW, wallF, wallT time.Duration
	addCPU := func(row *wayResult, cpu map[string]float64) {
		for g, v := range cpu { // the engines ran one after another: a three-engine case costs the sum
			if row.CPUPerCase == nil {
				row.CPUPerCase = map[string]float64{}
			}
			row.CPUPerCase[g] += v
		}
	}
	for _, e := range c.engines {
		r, ok := bare[e]
		if !ok {
			continue
		}
		walk.Latency[e], fresh.Latency[e] = summarize(r.Walk), summarize(r.Fresh)
		wallW += r.WallWalk
		wallF += r.WallFresh
		addCPU(walk, r.WalkCPU)
		addCPU(fresh, r.FreshCPU)
		walk.Errors += r.Errors
		if r.FirstErr != "" {
			walk.Note += " First error: " + e + " " + r.FirstErr
		}
		if c.trivial {
			triv.Latency[e] = summarize(r.Trivial)
			wallT += r.WallTrivial
		}
	}
	walk.WallS, walk.CasesPerS = wallW.Seconds(), float64(c.cases)/wallW.Seconds()
	fresh.WallS, fresh.CasesPerS = wallF.Seconds(), float64(c.cases)/wallF.Seconds()
	if !c.trivial {
		return []*wayResult{walk, fresh}
	}
	triv.WallS, triv.CasesPerS = wallT.Seconds(), float64(c.cases)/wallT.Seconds()
	return []*wayResult{walk, fresh, triv}
}

// cpuPerCase is the CPU ms per case, by group, between two proctree.CPU samples.
func cpuPerCase(before, after map[string]float64, cases int) map[string]float64 {
	out := map[string]float64{}
	for g, v := range after {
		out[g] = (v - before[g]) * 1000 / float64(cases)
	}
	return out
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
