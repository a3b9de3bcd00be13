// Command compare scores a candidate engine's geometry dumps, reflection states and
// traces against the oracle's three-engine vote, case by case (docs/compare.md).
//
//	compare --answers FILE [--candidate FILE] [--axes layout|style|all] [--json] [--tolerance X] [--out DIR [--screenshot-dir DIR]]
//	compare --validate FILE
//
// --answers was --oracle, --out was --html and --screenshot-dir was --artifacts; the
// old spellings still work, with a deprecation line on stderr (--oracle is the
// oracle binary everywhere else, --out the directory a command writes).
//
// Exit status: 0 no case failed, 1 some case failed, 2 bad input. With --validate:
// 0 the file meets the contract (docs/dump-format.md), 1 it does not (one line per
// error), 2 usage.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/progress"
)

const (
	exitOK       = 0
	exitFail     = 1
	exitBadInput = 2
)

// Verdicts only the command gives: the case could not be compared at all.
const (
	verdictMissing compare.Verdict = "missing" // an id on one side only
	verdictError   compare.Verdict = "error"   // a record compare refused
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// run is the whole command, minus os.Exit, so tests can drive it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("compare")
	fs.SetOutput(stderr)
	answersPath := fs.String("answers", "", "the oracle's answers, its stdout: NDJSON (`FILE`, or - for stdin); required")
	cli.Alias(fs, "oracle", "answers")
	candPath := fs.String("candidate", "", "candidate answers (docs/dump-format.md): NDJSON {\"id\",\"dump\"}, {\"id\",\"state\"}, {\"id\",\"trace\"} or {\"id\",\"error\"} records, or one bare dump (`FILE`, or - for stdin); omitted: only vote the oracle engines")
	asJSON := fs.Bool("json", false, "one JSON line per case plus a totals line, instead of the human summary")
	tol := fs.Float64("tolerance", dump.DefaultTolerance, "geometry tolerance in CSS px")
	htmlDir := fs.String("out", "", "also write a static HTML report (index and one page per case) into `DIR`")
	cli.Alias(fs, "html", "out")
	artifacts := fs.String("screenshot-dir", "", "with --out: the oracle's --screenshot-dir `DIR`, the only place a dump's screenshot_file is read from (without it none is read)")
	cli.Alias(fs, "artifacts", "screenshot-dir")
	validate := fs.String("validate", "", "only check a candidate's `FILE` (or - for stdin) against the contract (docs/dump-format.md): one line per error, exit 0 valid, 1 invalid")
	axesFlag := fs.String("axes", "all", "what geometry cases are scored on: layout (box geometry), style (the computed style subset) or all")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: compare --answers FILE [--candidate FILE] [--axes layout|style|all] [--json] [--tolerance X] [--out DIR [--screenshot-dir DIR]]")
		fmt.Fprintln(stderr, "       compare --validate FILE")
		cli.PrintDefaults(fs)
	}
	if code, done := cli.Parse(fs, args, stdout); done {
		return code // cli.ExitOK is exitOK, cli.ExitUsage exitBadInput
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintln(stderr, "compare: "+cli.Printable(fmt.Sprintf(format, a...)))
		return exitBadInput
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument %q", fs.Arg(0))
	case *validate != "" && (*answersPath != "" || *candPath != "" || *htmlDir != ""):
		return bad("--validate takes no other file: it checks one candidate file on its own")
	case *validate != "":
		return runValidate(*validate, stdin, stdout, stderr)
	case *answersPath == "":
		return bad("--answers is required")
	case *artifacts != "" && *htmlDir == "":
		return bad("--screenshot-dir is where the report (--out) reads screenshot files from: it needs --out")
	case *answersPath == "-" && *candPath == "-":
		return bad("only one of --answers and --candidate can be - (stdin)")
	case math.IsNaN(*tol) || math.IsInf(*tol, 0) || *tol < 0:
		return bad("--tolerance must be a finite number >= 0, got %v", *tol)
	}
	axes, err := compare.ParseAxes(*axesFlag)
	if err != nil {
		return bad("--%v", err)
	}

	oracle := stdin
	if *answersPath != "-" {
		f, err := os.Open(*answersPath)
		if err != nil {
			return bad("%v", err)
		}
		defer f.Close()
		oracle = f
	}
	oracle = progress.Reader(oracle, stderr, "compare") // a bar only when stderr is a terminal
	var cands *candidates
	if *candPath != "" {
		f, size, err := openCandidate(*candPath, stdin)
		if err != nil {
			return bad("%v", err)
		}
		defer f.Close()
		if cands, err = indexCandidates(f, size); err != nil {
			return bad("%v", err)
		}
	}

	var out reporter = &human{w: stdout}
	if *asJSON {
		out = &jsonLines{enc: json.NewEncoder(stdout)}
	}
	if *htmlDir != "" {
		var err error
		if out, err = withHTML(*htmlDir, *artifacts, out, cands, *tol, stderr); err != nil {
			return bad("%v", err)
		}
	}
	s := &session{tol: *tol, axes: axes, cands: cands, out: out, stderr: stderr}
	if err := s.run(oracle); err != nil {
		return bad("%v", err)
	}
	return s.exit()
}

// runValidate is compare --validate FILE.
func runValidate(path string, stdin io.Reader, stdout, stderr io.Writer) int {
	in, name := stdin, "-"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(stderr, "compare: %v\n", err)
			return exitBadInput
		}
		defer f.Close()
		in, name = f, path
	}
	records, bad, err := validateFile(name, in, stdout)
	if err != nil {
		fmt.Fprintln(stdout, err) // not JSON from here on: the file is invalid
		bad++
	}
	switch {
	case bad > 0:
		fmt.Fprintf(stdout, "%s: %d errors in %d records\n", name, bad, records)
		return exitFail
	case records == 0:
		fmt.Fprintf(stdout, "%s: no records\n", name)
		return exitFail
	}
	fmt.Fprintf(stdout, "%s: %d records meet the contract\n", name, records)
	return exitOK
}

// openCandidate opens the candidate file for indexing and reading back by offset.
// Stdin, or any other file that is not a regular file (a pipe, a process
// substitution), is first spooled to an unlinked temporary file, streamed rather
// than held in memory.
func openCandidate(path string, stdin io.Reader) (*os.File, int64, error) {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		if st.Mode().IsRegular() {
			return f, st.Size(), nil
		}
		defer f.Close()
		in = f
	}
	tmp, err := os.CreateTemp("", "compare-candidate-*.ndjson")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(tmp.Name()) // unlinked now; the open file lives until Close
	n, err := io.Copy(tmp, in)
	if err != nil {
		tmp.Close()
		return nil, 0, fmt.Errorf("reading candidate %s: %v", path, err)
	}
	return tmp, n, nil
}
