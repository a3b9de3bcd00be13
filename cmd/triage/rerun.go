package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/cli"
)

// entryFile is DIR/entries/N/entry.json: what `triage rerun` needs to rerun one
// entry's case without the run that found it.
type entryFile struct {
	Rank       int         `json:"rank"`
	Label      string      `json:"label"`
	Signatures []Signature `json:"signatures"` // any of them showing is the defect showing
	HTML       string      `json:"html"`
	// Case is "reduced" when HTML is the entry's reduced case, else the id of its
	// representative (the budget did not reach it, or it did not reduce).
	Case        string        `json:"case"`
	Candidate   candidateSpec `json:"candidate"`
	Tolerance   float64       `json:"tolerance"`
	Axes        string        `json:"axes"`
	OracleFlags []string      `json:"oracle_flags"` // the run's --oracle-flag (the rerun adds --store=off)
}

// candidateSpec is how the run ran its candidate.
type candidateSpec struct {
	Mode         string `json:"mode"`    // cmd, server or webdriver
	Command      string `json:"command"` // the command, or the WebDriver URL
	Capabilities string `json:"capabilities,omitempty"`
	Environment  string `json:"environment"` // pinned or host
	Timeout      string `json:"timeout"`
}

func specOf(cfg config) candidateSpec {
	s := candidateSpec{Mode: "cmd", Command: cfg.spec.Cmd, Environment: cfg.envName, Timeout: cfg.spec.Timeout.String()}
	switch {
	case cfg.spec.Server != "":
		s.Mode, s.Command = "server", cfg.spec.Server
	case cfg.spec.WebDriver != "":
		s.Mode, s.Command, s.Capabilities = "webdriver", cfg.spec.WebDriver, cfg.spec.Caps
	}
	return s
}

// spec is the candidate.Spec of s, its command replaced by cmd when cmd is set.
func (s candidateSpec) spec(cmd string) (candidate.Spec, error) {
	if cmd == "" {
		cmd = s.Command
	}
	timeout, err := time.ParseDuration(s.Timeout)
	if err != nil || timeout <= 0 {
		timeout = 30 * time.Second
	}
	out := candidate.Spec{Timeout: timeout, Parallel: 1}
	switch s.Mode {
	case "cmd":
		out.Cmd = cmd
	case "server":
		out.Server = cmd
	case "webdriver":
		out.WebDriver, out.Caps = cmd, s.Capabilities
	default:
		return out, fmt.Errorf("candidate mode %q: want cmd, server or webdriver", s.Mode)
	}
	if cmd == "" {
		return out, fmt.Errorf("no candidate command")
	}
	switch s.Environment {
	case "pinned":
		env, err := candidate.Pinned()
		if err != nil {
			return out, fmt.Errorf("the pinned environment: %v", err)
		}
		out.Env = env
	case "host", "":
	default:
		return out, fmt.Errorf("candidate environment %q: want pinned or host", s.Environment)
	}
	return out, nil
}

func readEntryFile(dir string) (*entryFile, error) {
	b, err := os.ReadFile(filepath.Join(dir, "entry.json"))
	if err != nil {
		return nil, fmt.Errorf("%v (want an entry directory of a triage run: DIR/entries/N)", err)
	}
	var e entryFile
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: not triage's entry.json: %v", filepath.Join(dir, "entry.json"), err)
	}
	if len(e.Signatures) == 0 {
		return nil, fmt.Errorf("%s: no signatures", filepath.Join(dir, "entry.json"))
	}
	return &e, nil
}

// rerunCommand is `triage rerun [--oracle PATH] [--oracle-flag F]... ENTRY_DIR
// [CANDIDATE]`, what entries/N/rerun.sh runs: the entry's case through a fresh
// oracle (store off) and the candidate (the run's, or CANDIDATE in the run's mode:
// a command, a server command or a WebDriver URL), judged by rerunVerdict. Exit
// status: 1 the defect shows, 0 it does not, 2 no judgement.
func rerunCommand(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("triage rerun")
	fs.SetOutput(stderr)
	oraclePath := fs.String("oracle", "", "the oracle binary (`PATH`); default: oracle next to this binary, else on PATH")
	var oracleFlags cli.List
	fs.Var(&oracleFlags, "oracle-flag", "a flag `F` passed to the oracle after the run's (repeatable)")
	oracleLog := fs.String("oracle-log", "", "write the oracle's log to `FILE` (default: discarded)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: triage rerun [--oracle PATH] [--oracle-flag F]... ENTRY_DIR [CANDIDATE]")
		fmt.Fprintln(stderr, "Reruns a triage entry's case (DIR/entries/N) through a fresh oracle and the run's candidate, or CANDIDATE in the run's mode.")
		fmt.Fprintln(stderr, "Exit status: 1 the defect shows, 0 it does not, 2 no judgement (docs/triage.md).")
		cli.PrintDefaults(fs)
	}
	if code, done := cli.Parse(fs, args, stdout); done {
		return code
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "triage rerun: "+format+"\n", a...)
		return exitBadInput
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return bad("want ENTRY_DIR and at most one CANDIDATE")
	}
	e, err := readEntryFile(fs.Arg(0))
	if err != nil {
		return bad("%v", err)
	}
	spec, err := e.Candidate.spec(fs.Arg(1))
	if err != nil {
		return bad("%v", err)
	}
	axes, err := compare.ParseAxes(cmp.Or(e.Axes, "all"))
	if err != nil {
		return bad("entry.json: axes: %v", err)
	}
	cfg := config{oracleArgs: append(slices.Clone(e.OracleFlags), oracleFlags...), tol: e.Tolerance, axes: axes,
		caseFor: 5 * time.Minute, parallel: 1, oracleLog: io.Discard}
	if cfg.oracleBin, err = client.FindOracle(*oraclePath); err != nil {
		return bad("%v", err)
	}
	if *oracleLog != "" {
		f, err := os.Create(*oracleLog)
		if err != nil {
			return bad("%v", err)
		}
		defer f.Close()
		cfg.oracleLog = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cand, err := candidate.Open(ctx, spec)
	if err != nil {
		return bad("the candidate: %v", err)
	}
	defer cand.Close()
	cfg.cand = cand
	t := &triage{cfg: cfg, stderr: stderr}
	o, err := t.liveOracle(ctx)
	if err != nil {
		return bad("the oracle: %v", err)
	}
	defer o.Close()
	code, why := rerunVerdict(t.ask(ctx, o, e.HTML), e.Signatures)
	what := "its reduced case"
	if e.Case != "reduced" {
		what = fmt.Sprintf("its representative %q", e.Case)
	}
	// The label and the reasons come from the candidate's answers.
	fmt.Fprintln(stdout, cli.Printable(fmt.Sprintf("entry %d (%s), %s, candidate %s: %s (%s)", e.Rank, e.Label, what, cand.Describe(), recheckWords[code], why)))
	return code
}

// rerunVerdict judges one run of an entry's case: exitFail when the candidate's
// answer shows one of sigs, exitOK when the engines voted, the candidate gave a
// dump that was scored, and none shows, and exitBadInput when it cannot say (no
// vote, or a candidate error or overflow that is not the entry's own: its
// geometry was not scored). The text says why.
func rerunVerdict(p *probe, sigs []Signature) (int, string) {
	if p == nil || p.resp == nil {
		return exitBadInput, "the oracle gave no answer"
	}
	for _, s := range sigs {
		if p.shows(s) {
			return exitFail, "the defect shows: " + s.Label()
		}
	}
	switch {
	case p.errKind != "":
		return exitBadInput, fmt.Sprintf("the candidate gave no dump (%s): %v", p.errKind, p.candErr)
	case p.overflow:
		return exitBadInput, "only the candidate's page overflows, so its geometry is not scored"
	case p.report == nil:
		return exitBadInput, "the engines gave no vote (" + cmp.Or(p.verdict, "no-vote") + ")"
	}
	others := p.others(Signature{})
	if len(others) == 0 {
		return exitOK, "the defect is gone: the candidate fails nothing the engines agree on"
	}
	var labels []string
	for _, g := range others {
		labels = append(labels, g.Label())
	}
	slices.Sort(labels)
	return exitOK, "the defect is gone; the case still fails " + strings.Join(labels, "; ")
}
