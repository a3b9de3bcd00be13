// Command triage scores a candidate layout engine at corpus scale (docs/triage.md):
// it runs every case of the corpus through the oracle and through the candidate's
// command, scores the candidate against the three engines' vote, groups its
// failures across cases into entries (one defect, one entry, with the signatures
// it shows as), ranks them by severity and then by the cases a fix makes pass,
// and reduces the smallest case of each entry while a time budget lasts.
//
//	triage --candidate-cmd CMD --out DIR [--oracle PATH] [--oracle-flag F]... [--reduce N] [--reduce-budget D] [--alone-first=false] CORPUS.ndjson...
//	triage --candidate-server CMD ... | --candidate-webdriver URL [--candidate-capabilities JSON] ...
//	triage ... [--baseline DIR] [--resume] [--shard I/N] ...
//	triage rerun [--oracle PATH] ENTRY_DIR [CANDIDATE]
//	triage candidate-env [CMD [ARG]...]
//
// Exit status: 0 the candidate fails nothing the engines agree on (with
// --baseline: no entry is new), 1 it does, 2 bad input (or the oracle could not
// be run).
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/outdir"
)

const (
	exitOK       = 0
	exitFail     = 1
	exitBadInput = 2
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// config is one triage run.
type config struct {
	cmd         candidate.Command   // its Env is the candidate's environment
	cand        candidate.Candidate // what scores and reduces call (docs/candidate.md)
	out         string
	dir         *outdir.Dir // out, every file of it written through outdir
	oracleBin   string
	oracleArgs  []string
	reduceTop   int // at most this many entries besides crashes (< 0: all)
	reduceFor   time.Duration
	caseFor     time.Duration // --case-timeout: bound on the oracle's answer to one case
	maxLine     int           // the oracle's --max-line: a longer case is not sent
	parallel    int
	tol         float64
	axes        compare.Axes // what is scored (--axes)
	envName     string       // "pinned" or "host"
	oracleLog   io.Writer
	corpusFiles []string
	from        string         // --from: an earlier run's directory
	spec        candidate.Spec // the candidate as the flags named it (rerun.sh runs it again)
	axesName    string         // --axes as given
	base        *baseline      // --baseline: an earlier run's entries
	resume      bool           // --resume: cases the journal holds are not run again
	shard       shard          // --shard: this machine's share of the corpus
	workDir     string         // where the run started: rerun.sh runs the candidate from there

	reduceBudget time.Duration // the whole reduction's bound
	aloneFirst   bool          // rank the entries no engine agrees with before the shared ones
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "candidate-env" {
		return candidateEnvCommand(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rerun" {
		return rerunCommand(args[1:], stdout, stderr)
	}
	fs := cli.NewFlagSet("triage")
	fs.SetOutput(stderr)
	cmdFlag := fs.String("candidate-cmd", "", "the engine under test: `CMD` (run by sh -c) reads a case's HTML on stdin and writes its dump (docs/dump-format.md) on stdout; this, --candidate-server or --candidate-webdriver is required")
	serverFlag := fs.String("candidate-server", "", "the engine under test as one long-lived process: `CMD` (run by sh -c once) reads {\"id\",\"html\"} lines on stdin and writes {\"id\",\"dump\"} or {\"id\",\"error\"} lines on stdout (docs/candidate.md)")
	wdFlag := fs.String("candidate-webdriver", "", "the engine under test is the W3C WebDriver endpoint at `URL`, walked by the oracle's own program (docs/candidate.md)")
	capsFlag := fs.String("candidate-capabilities", "", "with --candidate-webdriver: W3C capabilities of its sessions, a `JSON` object")
	outDir := fs.String("out", "", "write buckets.json, candidate.ndjson, oracle.ndjson, summary.json and index.html into `DIR`; required")
	oraclePath := fs.String("oracle", "", "the oracle binary (`PATH`); default: oracle next to this binary, else on PATH")
	var oracleFlags cli.List
	fs.Var(&oracleFlags, "oracle-flag", "a flag `F` passed to the scoring oracle (repeatable), e.g. --oracle-flag=--store=/tmp/s.db; its store is on by default, so a rerun measures only what is new")
	reduceTop := fs.Int("reduce", -1, "reduce at most the top `N` entries besides every crash and timeout, which are always reduced (-1: every entry while --reduce-budget lasts; 0: crashes and timeouts only)")
	reduceFor := fs.Duration("reduce-timeout", 3*time.Minute, "stop reducing one entry after this long and keep the best so far")
	reduceBudget := fs.Duration("reduce-budget", 5*time.Minute, "bound on the whole reduction: entries are reduced in rank order while it lasts (crashes and timeouts always)")
	aloneFirst := fs.Bool("alone-first", true, "rank the entries where the candidate is alone against all three engines (agreeing_engines empty) before those a real engine shares, after crashes, errors and overflows; false ranks all failures by cover alone")
	candTimeout := fs.Duration("candidate-timeout", 30*time.Second, "bound on one case of the candidate, its children included; past it the case is that case's candidate error (a server is killed and restarted)")
	caseTimeout := fs.Duration("case-timeout", 5*time.Minute, "bound on the oracle's answer to one case (each try); past it the case has no vote")
	envName := fs.String("candidate-env", "pinned", "the candidate's environment: pinned (the browsers' fontconfig, default faces and sizes, locale and time zone: `triage candidate-env` prints it) or host (this process's own)")
	parallel := fs.Int("parallel", 4, "cases in flight at once (each runs the oracle and the candidate)")
	tol := fs.Float64("tolerance", dump.DefaultTolerance, "geometry tolerance in CSS px")
	axesFlag := fs.String("axes", "all", "what is scored: layout (box geometry), style (the computed style subset) or all, as compare --axes")
	oracleLog := fs.String("oracle-log", "", "write the oracles' logs to `FILE` (default: discarded)")
	baseDir := fs.String("baseline", "", "an earlier run's output `DIR`: each entry gets status new, still or fixed against its entries (its fixed ones listed too), its reduced cases are rerun first, and the exit status is 1 only when an entry is new")
	resume := fs.Bool("resume", false, "go on with an interrupted run into the same --out: the cases its journal (answered.ndjson) holds are not run again")
	shardFlag := fs.String("shard", "", "score only share `I/N` of the corpus (1 <= I <= N): the cases whose id hashes to it (FNV-1a of the id's JSON text, mod N), the same on every machine")
	from := fs.String("from", "", "score again the answers an earlier run wrote into `DIR` (its oracle.ndjson and candidate.ndjson) instead of running the oracle and the candidate on the corpus; reduction still runs both")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: triage --candidate-cmd CMD --out DIR [--oracle PATH] [--oracle-flag F]... [--reduce N] [--reduce-budget D] [--alone-first=false] CORPUS.ndjson...")
		fmt.Fprintln(stderr, "       triage {--candidate-server CMD | --candidate-webdriver URL [--candidate-capabilities JSON]} --out DIR ... CORPUS.ndjson...")
		fmt.Fprintln(stderr, "       triage ... [--baseline DIR] [--resume] [--shard I/N] --out DIR CORPUS.ndjson...")
		fmt.Fprintln(stderr, "       triage rerun [--oracle PATH] ENTRY_DIR [CANDIDATE]   (what DIR/entries/N/rerun.sh runs)")
		fmt.Fprintln(stderr, "       triage candidate-env [CMD [ARG]...]")
		cli.PrintDefaults(fs)
	}
	if code, done := cli.Parse(fs, args, stdout); done {
		return code
	}
	axes, axesErr := compare.ParseAxes(*axesFlag)
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "triage: "+format+"\n", a...)
		return exitBadInput
	}
	switch {
	case (candidate.Spec{Cmd: *cmdFlag, Server: *serverFlag, WebDriver: *wdFlag}).Set() == 0:
		return bad("--candidate-cmd is required (or --candidate-server CMD, or --candidate-webdriver URL: docs/candidate.md)")
	case (candidate.Spec{Cmd: *cmdFlag, Server: *serverFlag, WebDriver: *wdFlag}).Set() > 1:
		return bad("name one candidate: --candidate-cmd, --candidate-server or --candidate-webdriver")
	case *capsFlag != "" && *wdFlag == "":
		return bad("--candidate-capabilities goes with --candidate-webdriver")
	case *outDir == "":
		return bad("--out is required")
	case fs.NArg() == 0:
		return bad("no corpus: name one or more NDJSON files of {\"id\",\"html\"} cases")
	case cli.FlagAmong(fs.Args()) != "":
		return bad("%s after the corpus: flags go before the corpus files", cli.FlagAmong(fs.Args()))
	case *reduceTop < -1:
		return bad("--reduce must be >= -1")
	case *reduceBudget <= 0:
		return bad("--reduce-budget must be > 0")
	case *parallel < 1:
		return bad("--parallel must be >= 1")
	case *candTimeout <= 0:
		return bad("--candidate-timeout must be > 0")
	case *caseTimeout <= 0:
		return bad("--case-timeout must be > 0")
	case axesErr != nil:
		return bad("--axes: %v", axesErr)
	case !(*tol >= 0) || *tol > 1e9:
		return bad("--tolerance must be a finite number >= 0")
	case *resume && *from != "":
		return bad("--resume goes on with an interrupted run; --from scores a finished one: name one")
	}
	sh, err := parseShard(*shardFlag)
	if err != nil {
		return bad("--shard: %v", err)
	}
	var base *baseline
	if *baseDir != "" {
		if base, err = readBaseline(*baseDir); err != nil {
			return bad("%v", err)
		}
	}
	wd, _ := os.Getwd()
	maxLine, err := oracleMaxLine(oracleFlags)
	if err != nil {
		return bad("--oracle-flag: %v", err)
	}
	c := config{cmd: candidate.Command{Cmd: *cmdFlag, Timeout: *candTimeout}, out: *outDir,
		oracleArgs: oracleFlags, reduceTop: *reduceTop, reduceFor: *reduceFor, reduceBudget: *reduceBudget, aloneFirst: *aloneFirst,
		caseFor: *caseTimeout, maxLine: maxLine, parallel: *parallel,
		tol: *tol, axes: axes, envName: *envName, oracleLog: io.Discard, corpusFiles: fs.Args(), from: *from,
		spec:     candidate.Spec{Cmd: *cmdFlag, Server: *serverFlag, WebDriver: *wdFlag, Caps: *capsFlag, Timeout: *candTimeout},
		axesName: *axesFlag, base: base, resume: *resume, shard: sh, workDir: wd}
	switch *envName {
	case "pinned":
		env, err := candidate.Pinned()
		if err != nil {
			return bad("--candidate-env pinned: %v", err)
		}
		c.cmd.Env = env
	case "host":
	default:
		return bad("--candidate-env %q: want pinned or host", *envName)
	}
	cases, skipped, err := readCorpus(c.corpusFiles)
	if err != nil {
		return bad("%v", err)
	}
	if skipped > 0 {
		fmt.Fprintf(stderr, "triage: skipped %d scripted or non-geometry cases (a candidate reads a case's HTML only)\n", skipped)
	}
	if sh.n > 0 {
		all := len(cases)
		if cases = sh.of(cases); len(cases) == 0 {
			return bad("--shard %s holds none of the corpus's %d cases", sh, all)
		}
		fmt.Fprintf(stderr, "triage: --shard %s: %d of the corpus's %d cases\n", sh, len(cases), all)
	}
	if c.oracleBin, err = client.FindOracle(*oraclePath); err != nil {
		return bad("%v", err)
	}
	if abs, err := filepath.Abs(c.oracleBin); err == nil {
		c.oracleBin = abs // rerun.sh names it from anywhere
	}
	if c.dir, err = outdir.Open(c.out); err != nil {
		return bad("%v", err)
	}
	defer c.dir.Close()
	if *oracleLog != "" {
		f, err := os.Create(*oracleLog)
		if err != nil {
			return bad("%v", err)
		}
		defer f.Close()
		c.oracleLog = cli.Locked(f)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	spec := c.spec
	spec.Env, spec.Parallel = c.cmd.Env, *parallel
	cand, err := candidate.Open(ctx, spec)
	if err != nil {
		return bad("the candidate: %v", err)
	}
	defer cand.Close()
	c.cand = cand
	if *wdFlag != "" {
		fmt.Fprintf(stderr, "triage: the candidate is %s; its environment (fonts, locale, time zone) is the endpoint's\n", cand.Describe())
	} else if c.envName == "pinned" {
		fmt.Fprintf(stderr, "triage: the candidate runs in the pinned environment (%s): %s\n",
			lookup(c.cmd.Env, "LAYOUT_ORACLE_ENVIRONMENT"), strings.Join(shortEnv(c.cmd.Env), " "))
	} else {
		fmt.Fprintln(stderr, "triage: the candidate runs in this process's own environment (--candidate-env host): fonts, locale and time zone may differ from the engines'")
	}
	t := &triage{cfg: c, stderr: stderr}
	sum, err := t.run(ctx, cases, skipped)
	if err != nil {
		fmt.Fprintf(stderr, "triage: %v\n", err)
		return exitBadInput
	}
	sum.print(stdout)
	if sum.Verdicts["no-vote"] == sum.Cases {
		fmt.Fprintln(stderr, "triage: the oracle gave no case a three-engine vote (its log: --oracle-log FILE)")
		return exitBadInput
	}
	if sum.Baseline != nil { // across builds, what fails the run is what is new
		if sum.Baseline.New > 0 {
			return exitFail
		}
		return exitOK
	}
	if sum.Failing > 0 {
		return exitFail
	}
	return exitOK
}

// shortEnv is the pinned environment's variables that decide text, for the
// one-line notice.
func shortEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "FONTCONFIG_FILE", "LC_ALL", "TZ", "LAYOUT_ORACLE_FONT_SIZE", "LAYOUT_ORACLE_MONOSPACE_SIZE":
			out = append(out, kv)
		}
	}
	return out
}

func lookup(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// candidateEnvCommand is `triage candidate-env [CMD [ARG]...]`: with no command it
// prints the pinned environment as export lines (eval "$(triage candidate-env)");
// with one it runs it under that environment, its exit status passed on.
func candidateEnvCommand(args []string, stdout, stderr io.Writer) int {
	env, err := candidate.Pinned()
	if err != nil {
		fmt.Fprintf(stderr, "triage candidate-env: %v\n", err)
		return exitBadInput
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintf(stdout, "# The layout oracle's pinned environment (%s), as its browsers get it: docs/triage.md.\n", lookup(env, "LAYOUT_ORACLE_ENVIRONMENT"))
		fmt.Fprint(stdout, candidate.Exports(env))
		return exitOK
	}
	if cli.IsHelp(args[0]) {
		fmt.Fprintln(stderr, "usage: triage candidate-env [CMD [ARG]...]")
		return exitOK
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "triage candidate-env: unknown flag %q\nusage: triage candidate-env [CMD [ARG]...]\n", args[0])
		return exitBadInput
	}
	return runUnder(args, env, stdout, stderr)
}

// tcase is one corpus case.
type tcase struct {
	id   string          // as buckets.json and index.html name it: displayID, unique
	raw  json.RawMessage // the id as the corpus wrote it (compact JSON): as sent and written back
	html string
}

// readCorpus reads every file's cases: one JSON object a line with "id" and
// "html". A url case is refused (the candidate reads a case's HTML on stdin, and
// reduce cuts inline HTML); a scripted case or another op (reflect, trace) is
// skipped and counted, since a candidate reads a case's HTML only.
func readCorpus(files []string) ([]tcase, int, error) {
	var out []tcase
	skipped := 0
	seen := map[string]string{} // where each id (its value, idValue) is
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, 0, err
		}
		for n, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			where := fmt.Sprintf("%s:%d", filepath.Base(name), n+1)
			var f struct {
				ID     json.RawMessage `json:"id"`
				Op     string          `json:"op"`
				HTML   *string         `json:"html"`
				URL    *string         `json:"url"`
				Script *string         `json:"script"`
			}
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				return nil, 0, fmt.Errorf("%s: not a JSON object: %v", where, err)
			}
			id := displayID(f.ID)
			switch {
			case id == "":
				return nil, 0, fmt.Errorf("%s: no \"id\"", where)
			case !stringOrNumber(f.ID):
				return nil, 0, fmt.Errorf("%s: \"id\" must be a string or a number, as the oracle's", where)
			case f.Op != "" || f.Script != nil && *f.Script != "":
				skipped++ // a reflect or trace case, or a scripted one: the candidate reads HTML only
				continue
			case f.URL != nil:
				return nil, 0, fmt.Errorf("%s (%s): a url case: triage needs inline html (the candidate reads a case's HTML on stdin, and reduce cuts inline html); build the corpus with its documents inlined (scripts/corpus/wpt_corpus.py does)", where, id)
			case f.HTML == nil:
				return nil, 0, fmt.Errorf("%s (%s): no \"html\"", where, id)
			}
			raw := compactID(f.ID)
			if prev, dup := seen[idValue(raw)]; dup {
				return nil, 0, fmt.Errorf("%s: id %s already at %s", where, raw, prev)
			}
			seen[idValue(raw)] = where
			out = append(out, tcase{id: id, raw: raw, html: *f.HTML})
		}
	}
	// The ids 1 and "1" are two cases; where their display names meet, each is
	// named by its JSON text instead.
	named := map[string]int{}
	for _, c := range out {
		named[c.id]++
	}
	for i, c := range out {
		if named[c.id] > 1 {
			out[i].id = string(c.raw)
		}
	}
	if len(out) == 0 {
		return nil, skipped, fmt.Errorf("the corpus has no geometry cases with inline html (%d scripted or other cases skipped)", skipped)
	}
	return out, skipped, nil
}

// displayID is a string id unquoted and any other id as its JSON text; "" for none.
func displayID(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// stringOrNumber says raw is a JSON string or number: an id the oracle takes.
func stringOrNumber(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return json.Valid(raw) && len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9')
}

// idValue is what two ids with one JSON value share, as a reader in Python or
// JavaScript compares them: a string's text once decoded ("a" and "\u0061" are one
// id), a number's exact value (1, 1.0, 1e0 and -0, 0 are one id each;
// 12345678901234567890 and 12345678901234567891 are two). The number is written as
// its significant digits and a power of ten, never computed: 1e1000000000 is cheap.
func idValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return "string " + s
	}
	num := string(bytes.TrimSpace(raw))
	sign := ""
	if rest, ok := strings.CutPrefix(num, "-"); ok {
		sign, num = "-", rest
	}
	mant, exp, _ := strings.Cut(strings.ToLower(num), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	e, _ := new(big.Int).SetString(cmp.Or(exp, "0"), 10) // value = digits x 10^e
	e.Sub(e, big.NewInt(int64(len(frac))))
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return "number 0"
	}
	sig := strings.TrimRight(digits, "0")
	e.Add(e, big.NewInt(int64(len(digits)-len(sig))))
	return "number " + sign + sig + "e" + e.String()
}

// compactID is an id's JSON text without insignificant space: how it is sent,
// how the oracle echoes it, and how answers are found by it.
func compactID(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// oracleMaxLine is the --max-line the scoring oracle gets from args (its last
// one, as the flag package takes it), else the oracle's default.
func oracleMaxLine(args []string) (int, error) {
	n := client.DefaultMaxLine
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if name != "max-line" || !strings.HasPrefix(args[i], "-") {
			continue
		}
		if !hasVal {
			if i+1 == len(args) {
				return 0, fmt.Errorf("--max-line needs a value")
			}
			i++
			val = args[i]
		}
		v, err := strconv.Atoi(val)
		if err != nil {
			return 0, fmt.Errorf("--max-line %q: %v", val, err)
		}
		if v > 0 { // the oracle takes 0 or less as its default
			n = v
		} else {
			n = client.DefaultMaxLine
		}
	}
	return n, nil
}

// scoring is how a case is scored: the tolerance, the engines' unstable items and
// the axes (compare.Options).
func (c config) scoring(unstable compare.Unstable) compare.Options {
	return compare.Options{Tolerance: c.tol, Unstable: unstable, Axes: c.axes}
}
