// Command reduce shrinks one geometry request while its cross-engine
// disagreement holds (docs/reduce.md).
//
//	reduce [--keep auto|outlier=ENGINE[:ITEM]|split] [--candidate-cmd CMD] [--oracle PATH] [--oracle-flag F]... < request.json
//
// It reads one request ({"id","html","script"?}) on stdin, runs its own oracle
// (--store=off unless an --oracle-flag sets --store), and writes the smallest
// request it found as one NDJSON line with the same id and "reproduced": whether
// the result kept the disagreement in a fresh oracle process. Statistics go to
// stderr. Exit status: 0 reproduced, 1 not reduced or not reproduced, 2 bad input.
//
// --candidate-cmd was --candidate until this release (as triage names it; a
// --candidate FILE is a file of answers in compare and wpt compare): --candidate
// CMD still works, with a deprecation line on stderr.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/cli"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	internalcand "github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/progress"
	"github.com/layout-oracle/oracle/reduce"
)

const (
	exitOK       = 0
	exitNotKept  = 1
	exitBadInput = 2
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// summary is the statistics line on stderr (and bench-reduce's input).
type summary struct {
	ID          string  `json:"id"`
	Keep        string  `json:"keep"`
	BytesBefore int     `json:"bytes_before"`
	BytesAfter  int     `json:"bytes_after"`
	OracleCalls int64   `json:"oracle_calls"`
	Variants    int     `json:"variants"`
	Unstable    int64   `json:"unstable"`
	Seconds     float64 `json:"seconds"`
	Reproduced  bool    `json:"reproduced"`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// say writes one line on stderr, made cli.Printable: ids and the engines' errors
	// come from the case.
	say := func(format string, a ...any) {
		fmt.Fprintln(stderr, cli.Printable(fmt.Sprintf(format, a...)))
	}
	fs := cli.NewFlagSet("reduce")
	fs.SetOutput(stderr)
	keepFlag := fs.String("keep", "auto", "what to keep: auto (the case's first cause), outlier=ENGINE[:ITEM], or split")
	candidateCmd := fs.String("candidate-cmd", "", "keep what a candidate engine fails: `CMD` (run by sh -c) reads a case's HTML on stdin and writes its dump; the reduced case still has the candidate fail the same kind of item on a box of the same tag, against the three engines' vote")
	cli.Alias(fs, "candidate", "candidate-cmd")
	candidateServer := fs.String("candidate-server", "", "as --candidate-cmd, the candidate run once as a server: `CMD` reads {\"id\",\"html\"} lines on stdin and answers {\"id\",\"dump\"} or {\"id\",\"error\"} lines (docs/candidate.md)")
	candidateWD := fs.String("candidate-webdriver", "", "as --candidate-cmd, the candidate is the W3C WebDriver endpoint at `URL`, walked by the oracle's own program (docs/candidate.md)")
	candidateCaps := fs.String("candidate-capabilities", "", "with --candidate-webdriver: W3C capabilities of its sessions, a `JSON` object")
	candidateTimeout := fs.Duration("candidate-timeout", time.Minute, "bound on one case of the candidate, its children included (its process group is killed; a server is restarted)")
	candidateEnv := fs.String("candidate-env", "pinned", "the --candidate-cmd command's environment: pinned (the browsers' fontconfig, default faces and sizes, locale and time zone added: docs/triage.md) or host (this process's own)")
	oraclePath := fs.String("oracle", "", "the oracle binary (`PATH`); default: oracle next to this binary, else on PATH")
	var oracleFlags cli.List
	fs.Var(&oracleFlags, "oracle-flag", "a flag `F` passed to the oracle (repeatable), e.g. --oracle-flag=--pages=chromium=1")
	parallel := fs.Int("parallel", 4, "variants in flight at once")
	tol := fs.Float64("tolerance", dump.DefaultTolerance, "geometry tolerance in CSS px")
	timeout := fs.Duration("timeout", 10*time.Minute, "stop reducing after this long and keep the best so far")
	oracleLog := fs.String("oracle-log", "", "write the oracle's log to `FILE` (default: discarded)")
	statsJSON := fs.Bool("json", false, "print the statistics on stderr as one JSON line (stdout is the reduced request)")
	cli.Alias(fs, "stats-json", "json")
	benchFile := fs.String("bench", "", "benchmark: reduce every request of `FILE` (NDJSON), one reduce process each, and print a table")
	outFile := fs.String("out", "", "write the reduced request to `FILE` instead of stdout (with --bench: every reduced request; default discarded)")
	cli.Alias(fs, "bench-out", "out")
	benchLimit := fs.Int("bench-limit", 0, "with --bench, only the first N requests (0: all)")
	if code, done := cli.Parse(fs, args, stdout); done {
		return code // cli.ExitOK is exitOK, cli.ExitUsage exitBadInput
	}
	if *benchFile != "" {
		pass := benchPass(fs, oracleFlags)
		results := io.Discard
		if *outFile != "" {
			f, err := os.Create(*outFile)
			if err != nil {
				say("reduce: %v", err)
				return exitBadInput
			}
			defer f.Close()
			results = f
		}
		return bench(*benchFile, *benchLimit, pass, results, stdout, stderr)
	}
	bad := func(format string, a ...any) int {
		say("reduce: "+format, a...)
		return exitBadInput
	}
	k, err := parseKeep(*keepFlag)
	switch {
	case err != nil:
		return bad("%v", err)
	case !(*tol >= 0) || *tol > 1e9:
		return bad("--tolerance must be a finite number >= 0")
	case *candidateTimeout <= 0:
		return bad("--candidate-timeout must be > 0")
	case *timeout <= 0:
		return bad("--timeout must be > 0")
	case *parallel < 1:
		return bad("--parallel must be >= 1")
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	req, v, err := readRequest(stdin)
	if err != nil {
		return bad("%v", err)
	}
	if *outFile != "" {
		// Created before the reduction, so that a bad path fails now, not minutes later.
		f, err := os.Create(*outFile)
		if err != nil {
			return bad("--out: %v", err)
		}
		defer f.Close()
		stdout = f
	}
	var cand *candidate
	spec := internalcand.Spec{Cmd: *candidateCmd, Server: *candidateServer, WebDriver: *candidateWD, Caps: *candidateCaps,
		Timeout: *candidateTimeout, Parallel: *parallel}
	if spec.Set() > 0 || spec.Caps != "" {
		if v.Script != "" {
			return bad("--candidate-cmd: the request has a script, and a candidate reads a case's HTML only")
		}
		switch *candidateEnv {
		case "pinned":
			if spec.Env, err = internalcand.Pinned(); err != nil {
				return bad("--candidate-env pinned: %v", err)
			}
		case "host":
		default:
			return bad("--candidate-env %q: want pinned or host", *candidateEnv)
		}
		c, err := internalcand.Open(context.Background(), spec)
		if err != nil {
			return bad("the candidate: %v", err)
		}
		defer c.Close()
		cand = &candidate{c: c}
		k = keep{mode: "candidate"}
	}
	bin, err := client.FindOracle(*oraclePath)
	if err != nil {
		return bad("%v", err)
	}
	oargs := []string(oracleFlags)
	if !client.NamesStore(oargs) {
		oargs = append([]string{"--store=off"}, oargs...)
	}
	logw := io.Discard
	if *oracleLog != "" {
		f, err := os.Create(*oracleLog)
		if err != nil {
			return bad("%v", err)
		}
		defer f.Close()
		logw = cli.Locked(f)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	// The fresh process for the confirming rerun starts now, so its startup
	// (a minute and more on a loaded machine) overlaps the reduction; it gets no
	// request before the reduction ends.
	type started struct {
		o   *procOracle
		err error
	}
	freshCh := make(chan started, 1)
	go func() {
		o, err := readyOracle(ctx, bin, oargs, logw, stderr)
		freshCh <- started{o, err}
	}()
	var fresh *started
	waitFresh := func() *started {
		if fresh == nil {
			f := <-freshCh
			fresh = &f
		}
		return fresh
	}
	closeFresh := func() {
		if f := waitFresh(); f.o != nil {
			f.o.Close()
		}
	}
	orc, err := readyOracle(ctx, bin, oargs, logw, stderr)
	if err != nil {
		closeFresh()
		say("reduce: %s: the oracle: %v", req.id, err)
		return exitNotKept
	}
	closed := make(chan struct{})
	closeFresh = func() { // and wait for the first oracle's close too
		if f := waitFresh(); f.o != nil {
			f.o.Close()
		}
		<-closed
	}
	say("reduce: %s: oracle ready after %.1fs", req.id, time.Since(start).Seconds())
	r := &runner{orc: orc, tol: *tol, keep: k, parallel: *parallel, cand: cand}
	// The original, until every engine answers it (an engine still starting or
	// relaunching on a loaded machine can miss its deadline once).
	var first *compare.Outcomes
	for try := 0; try < 3 && first == nil && ctx.Err() == nil; try++ {
		r.calls.Add(1)
		var err error
		if first, err = outcomesOf(ctx, orc, v, *tol, cand); first == nil {
			say("reduce: %s: no three-engine vote on the original (try %d): %v", req.id, try+1, err)
		}
	}
	if err := r.keep.resolve(first); err != nil {
		go func() { orc.Close(); close(closed) }()
		closeFresh()
		say("reduce: %s: %v", req.id, err)
		return exitNotKept
	}
	say("reduce: %s: keeping %s", req.id, r.keep)

	bar := progress.New(stderr, -1, "reduce", " variants")
	shown := 0
	rctx, cancel := context.WithTimeout(ctx, *timeout)
	best, st, _ := reduce.Reduce(rctx, v, r.test, reduce.Options{
		Parallel: *parallel,
		Progress: func(s reduce.Stats) {
			bar.Describe(fmt.Sprintf("reduce %d -> %d bytes", s.BytesBefore, s.BytesAfter))
			bar.Add(s.Tests - shown)
			shown = s.Tests
		},
	})
	cancel()
	bar.Finish()
	go func() { orc.Close(); close(closed) }()
	defer closeFresh()

	// The confirming rerun, in a fresh oracle process.
	reproduced := false
	if f := waitFresh(); f.err == nil {
		o, _ := outcomesOf(ctx, f.o, best, *tol, cand)
		reproduced = r.keep.holds(o)
		r.calls.Add(1)
	} else {
		say("reduce: the confirming oracle did not start: %v", f.err)
	}
	sum := summary{ID: req.id, Keep: r.keep.String(), BytesBefore: v.Size(), BytesAfter: best.Size(),
		OracleCalls: r.calls.Load(), Variants: st.Tests, Unstable: r.unstable.Load(),
		Seconds: time.Since(start).Seconds(), Reproduced: reproduced}
	if *statsJSON {
		line, _ := json.Marshal(sum)
		fmt.Fprintf(stderr, "%s\n", line)
	} else {
		say("reduce: %s: %d -> %d bytes (%.1f%%), %d oracle calls (%d variants, %d unstable), %.1fs; reproduced in a fresh oracle: %v",
			sum.ID, sum.BytesBefore, sum.BytesAfter, 100*float64(sum.BytesAfter)/float64(max(sum.BytesBefore, 1)),
			sum.OracleCalls, sum.Variants, sum.Unstable, sum.Seconds, reproduced)
	}
	out, err := req.with(best, reproduced)
	if err != nil {
		return bad("%v", err)
	}
	fmt.Fprintf(stdout, "%s\n", out)
	if !reproduced {
		return exitNotKept
	}
	return exitOK
}

// request is the input line, kept whole so fields reduce does not touch pass
// through to the output.
type request struct {
	id     string
	fields map[string]json.RawMessage
}

func readRequest(r io.Reader) (request, reduce.Variant, error) {
	br := bufio.NewReader(r)
	line, err := br.ReadBytes('\n')
	if err != nil && (err != io.EOF || len(strings.TrimSpace(string(line))) == 0) {
		return request{}, reduce.Variant{}, fmt.Errorf("no request on stdin")
	}
	// One case a run: a second would be reduced by nobody, silently.
	for err == nil {
		var more []byte
		more, err = br.ReadBytes('\n')
		if len(strings.TrimSpace(string(more))) > 0 {
			return request{}, reduce.Variant{}, fmt.Errorf("stdin has more than one request: reduce takes one (triage reduces a corpus's)")
		}
	}
	var req request
	if err := json.Unmarshal(line, &req.fields); err != nil {
		return req, reduce.Variant{}, fmt.Errorf("the request is not a JSON object: %v", err)
	}
	var f struct {
		ID     json.RawMessage `json:"id"`
		Op     string          `json:"op"`
		HTML   *string         `json:"html"`
		Script string          `json:"script"`
	}
	if err := json.Unmarshal(line, &f); err != nil {
		return req, reduce.Variant{}, fmt.Errorf("bad request: %v", err)
	}
	if f.Op != "" || f.HTML == nil {
		return req, reduce.Variant{}, fmt.Errorf("want a geometry request with \"html\"")
	}
	req.id = strings.Trim(string(f.ID), `"`)
	delete(req.fields, "engines") // the vote needs all three
	return req, reduce.Variant{HTML: *f.HTML, Script: f.Script}, nil
}

// with is the request with v's html and script, plus "reproduced".
func (q request) with(v reduce.Variant, reproduced bool) ([]byte, error) {
	out := map[string]any{}
	for k, x := range q.fields {
		out[k] = x
	}
	out["html"] = v.HTML
	delete(out, "script")
	if v.Script != "" {
		out["script"] = v.Script
	}
	out["reproduced"] = reproduced
	return json.Marshal(out)
}

// runner is the interestingness test: a variant is interesting when the vote of
// its answer shows what keep asks for, twice (the second answer from a rerun;
// a variant whose answer changes is unstable and not interesting).
type runner struct {
	orc      geometryOracle
	tol      float64
	keep     keep
	parallel int
	cand     *candidate // --candidate-cmd; nil: the engines' vote alone
	calls    atomic.Int64
	unstable atomic.Int64
}

// outcomesOf asks o for v's three dumps and votes them, scoring cand's dump of v
// when cand is not nil; nil (with why, when known) when there is no vote.
func outcomesOf(ctx context.Context, o geometryOracle, v reduce.Variant, tol float64, cand *candidate) (*compare.Outcomes, error) {
	dumps, errs, err := o.Geometry(ctx, v)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("engine errors: %v", errs)
	}
	if cand == nil {
		return outcomes(dumps, errs, tol), nil
	}
	got, err := cand.dump(ctx, v)
	if err != nil {
		return nil, err
	}
	return scored(dumps, errs, got, tol), nil
}

func (r *runner) ask(ctx context.Context, v reduce.Variant) *compare.Outcomes {
	r.calls.Add(1)
	o, _ := outcomesOf(ctx, r.orc, v, r.tol, r.cand)
	return o
}

func (r *runner) test(ctx context.Context, vs []reduce.Variant) []bool {
	out := make([]bool, len(vs))
	r.each(ctx, vs, func(i int, v reduce.Variant) { out[i] = r.keep.holds(r.ask(ctx, v)) })
	var again []int
	for i, ok := range out {
		if ok {
			again = append(again, i)
		}
	}
	re := make([]reduce.Variant, len(again))
	for j, i := range again {
		re[j] = vs[i]
	}
	r.each(ctx, re, func(j int, v reduce.Variant) {
		if !r.keep.holds(r.ask(ctx, v)) {
			out[again[j]] = false
			r.unstable.Add(1)
		}
	})
	return out
}

// each runs f on every variant, at most r.parallel at once.
func (r *runner) each(ctx context.Context, vs []reduce.Variant, f func(int, reduce.Variant)) {
	sem := make(chan struct{}, max(r.parallel, 1))
	var wg sync.WaitGroup
	for i, v := range vs {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i, v)
		})
	}
	wg.Wait()
}
