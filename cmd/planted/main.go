// Command planted is a candidate engine with known defects, and the harness that
// measures how well triage finds them (docs/planted.md). The candidate is one of
// the oracle's own engines (a long-lived oracle serving it alone) with planted CSS
// rules adopted into each case, and a crash on cases matching a trigger: every
// defect it has is in the Defects table.
//
//	planted serve --socket PATH [--oracle BIN] [--engine E]      hold the oracle, answer over a Unix socket
//	planted run --socket PATH [--defects LIST]                     one case: HTML on stdin, dump on stdout (triage --candidate-cmd)
//	planted stdio [--defects LIST] [--oracle BIN]                  {"id","html"} lines in, {"id","dump"|"error"} lines out
//	planted bench --out DIR [--defects LIST] [--reduce N] CORPUS   triage the planted candidate, explain every entry, print the table
//	planted defects                                                list the defects table
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/cli"
)

const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

const usage = `usage: planted serve --socket PATH [--oracle BIN] [--engine E] [--pages N]
       planted run --socket PATH [--defects LIST] [--timeout D]
       planted stdio [--defects LIST] [--oracle BIN] [--engine E] [--parallel N]
       planted bench --out DIR [--defects LIST] [--oracle BIN] [--triage BIN] [--reduce N] [--top N] [--triage-flag F]... CORPUS.ndjson
       planted defects
Each subcommand's -h lists its flags (docs/planted.md).`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		fmt.Fprintln(stderr, "planted: no subcommand")
		return exitUsage
	}
	if cli.IsHelp(args[0]) {
		fmt.Fprintln(stderr, usage)
		return exitOK
	}
	if cli.IsVersion(args[0]) {
		fmt.Fprintln(stdout, cli.Version("planted"))
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sub, rest := args[0], args[1:]
	fs := cli.NewFlagSet("planted " + sub)
	fs.SetOutput(stderr)
	defectsFlag := "the planted defects: `LIST` of names from the table (planted defects), comma-separated, or all"
	switch sub {
	case "defects":
		if code, done := cli.Parse(fs, rest, stdout); done {
			return code
		}
		for _, d := range Defects {
			rule := d.CSS
			if d.Crash != nil {
				rule = "crash on " + d.Crash.String()
			}
			fmt.Fprintf(stdout, "%-15s %s\n%-15s %s\n", d.Name, d.Note, "", rule)
		}
		return exitOK
	case "serve":
		sock := fs.String("socket", "", "listen on the Unix socket `PATH`; required")
		oracle := fs.String("oracle", "", "the oracle binary (`BIN`); default: oracle next to this binary, else on PATH")
		engine := fs.String("engine", "chromium", "the oracle engine the candidate is built from")
		pages := fs.Int("pages", 2, "pages the oracle keeps open: cases answered at once")
		if code, done := cli.Parse(fs, rest, stdout); done {
			return code
		}
		if *sock == "" || fs.NArg() > 0 {
			return usageError(fs, "serve needs --socket and no arguments")
		}
		return serveCommand(ctx, *sock, *oracle, *engine, *pages, stderr)
	case "run":
		sock := fs.String("socket", "", "the daemon's Unix socket `PATH` (planted serve); required")
		defects := fs.String("defects", "all", defectsFlag)
		timeout := fs.Duration("timeout", time.Minute, "give up on the daemon's answer after this long")
		if code, done := cli.Parse(fs, rest, stdout); done {
			return code
		}
		ds, err := pickDefects(*defects)
		if err != nil || *sock == "" || fs.NArg() > 0 {
			return usageError(fs, fmt.Sprint("run needs --socket, known --defects and no arguments: ", err))
		}
		rctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		if err := runOnce(rctx, *sock, ds, stdin, stdout); err != nil {
			fmt.Fprintln(stderr, "planted:", err)
			return exitFail
		}
		return exitOK
	case "stdio":
		defects := fs.String("defects", "all", defectsFlag)
		oracle := fs.String("oracle", "", "the oracle binary (`BIN`); default: oracle next to this binary, else on PATH")
		engine := fs.String("engine", "chromium", "the oracle engine the candidate is built from")
		parallel := fs.Int("parallel", 4, "cases answered at once")
		if code, done := cli.Parse(fs, rest, stdout); done {
			return code
		}
		ds, err := pickDefects(*defects)
		if err != nil || fs.NArg() > 0 || *parallel < 1 {
			return usageError(fs, fmt.Sprint("stdio needs known --defects, --parallel of 1 or more and no arguments: ", err))
		}
		bin, err := client.FindOracle(*oracle)
		if err != nil {
			fmt.Fprintln(stderr, "planted:", err)
			return exitUsage
		}
		p, err := startPlanter(ctx, bin, *engine, *parallel, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "planted:", err)
			return exitFail
		}
		defer p.Close()
		if err := serveStdio(ctx, stdin, stdout, p, ds, *parallel); err != nil {
			fmt.Fprintln(stderr, "planted:", err)
			return exitFail
		}
		return exitOK
	case "bench":
		out := fs.String("out", "", "write the triage run, ground truth and report.json into `DIR`; required")
		defects := fs.String("defects", "all", defectsFlag)
		oracle := fs.String("oracle", "", "the oracle binary (`BIN`); default: oracle next to this binary, else on PATH")
		triage := fs.String("triage", "", "the triage binary (`BIN`); default: triage next to the oracle binary")
		engine := fs.String("engine", "chromium", "the oracle engine the candidate is built from")
		reduce := fs.Int("reduce", -1, "entries triage reduces (its --reduce; -1, its default: every entry while its --reduce-budget lasts)")
		top := fs.Int("top", 8, "a defect is found when it explains one of the top `N` entries whose reduced case reproduced")
		parallel := fs.Int("parallel", 2, "cases in flight at once while taking the ground truth")
		var triageFlags cli.List
		fs.Var(&triageFlags, "triage-flag", "a flag `F` passed to triage (repeatable), e.g. --triage-flag=--reduce-timeout=1m")
		if code, done := cli.Parse(fs, rest, stdout); done {
			return code
		}
		ds, err := pickDefects(*defects)
		if err != nil || *out == "" || fs.NArg() != 1 || *parallel < 1 {
			return usageError(fs, fmt.Sprint("bench needs --out, known --defects and one CORPUS: ", err))
		}
		cfg, err := benchSetup(*oracle, *triage)
		if err != nil {
			fmt.Fprintln(stderr, "planted:", err)
			return exitUsage
		}
		cfg.corpus, cfg.out, cfg.engine, cfg.defects = fs.Arg(0), *out, *engine, ds
		cfg.reduce, cfg.top, cfg.parallel, cfg.triageFlags, cfg.log = *reduce, *top, *parallel, triageFlags, stderr
		res, err := runBench(ctx, cfg)
		if err != nil {
			fmt.Fprintln(stderr, "planted:", err)
			return exitFail
		}
		printTable(stdout, res, ds)
		return exitOK
	}
	fmt.Fprintln(stderr, usage)
	fmt.Fprintf(stderr, "planted: unknown subcommand %q\n", sub)
	return exitUsage
}

func usageError(fs *flag.FlagSet, msg string) int {
	fs.Usage()
	fmt.Fprintf(fs.Output(), "%s: %s\n", fs.Name(), strings.TrimSuffix(msg, ": <nil>"))
	return exitUsage
}

// benchSetup finds the binaries: the oracle, triage beside it unless given, and
// this binary as the candidate.
func benchSetup(oracleFlag, triageFlag string) (benchConfig, error) {
	oracle, err := client.FindOracle(oracleFlag)
	if err != nil {
		return benchConfig{}, err
	}
	triage := triageFlag
	if triage == "" {
		triage = filepath.Join(filepath.Dir(oracle), "triage")
	}
	self, err := os.Executable()
	if err != nil {
		return benchConfig{}, err
	}
	return benchConfig{oracleBin: oracle, triageBin: triage, plantedBin: self}, nil
}

// serveCommand holds one oracle and answers cases on the socket until a signal.
func serveCommand(ctx context.Context, sock, oracleFlag, engine string, pages int, stderr io.Writer) int {
	bin, err := client.FindOracle(oracleFlag)
	if err != nil {
		fmt.Fprintln(stderr, "planted:", err)
		return exitUsage
	}
	if err := removeStaleSocket(sock); err != nil {
		fmt.Fprintln(stderr, "planted:", err)
		return exitFail
	}
	p, err := startPlanter(ctx, bin, engine, pages, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "planted:", err)
		return exitFail
	}
	defer p.Close()
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(stderr, "planted:", err)
		return exitFail
	}
	defer os.Remove(sock)
	fmt.Fprintf(stderr, "planted: serving %s with planted defects on %s\n", engine, sock)
	if err := serveSocket(ctx, ln, p); err != nil && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintln(stderr, "planted:", err)
		return exitFail
	}
	return exitOK
}
