package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/trace"
)

// caseResult is one line of output.
type caseResult struct {
	ID           json.RawMessage
	Report       *compare.Report
	OracleErrors map[string]string     // engines the oracle could not dump, with why
	Dumps        map[string]*dump.Dump // the oracle's dumps, for the HTML report
	Unstable     compare.Unstable      // the oracle's "unstable", as given
	// Traces are the oracle's traces, for the HTML report.
	Traces map[string]*trace.Trace
}

// totals is the last line of output.
type totals struct {
	Cases    int                     `json:"cases"`
	Verdicts map[compare.Verdict]int `json:"verdicts"`
	// Skipped counts oracle lines that are not cases (ping, shutdown, trace, ...).
	Skipped     int     `json:"skipped_lines"`
	SumAbsDelta jsonNum `json:"sum_abs_delta"`
	MaxAbsDelta jsonNum `json:"max_abs_delta"`
	// Outvoted counts, per oracle engine, the items it was the outlier on.
	Outvoted map[string]int `json:"outvoted,omitempty"`
	// NotComparable counts, per oracle engine, the trace cases it was left out of
	// the vote for applying another emulation set than the voters.
	NotComparable map[string]int `json:"not_comparable,omitempty"`
	// Unstable counts the items left unvoted because an engine's runs differed on
	// them (the oracle's "unstable"), and the cases with any.
	Unstable      int `json:"unstable,omitempty"`
	UnstableCases int `json:"unstable_cases,omitempty"`
	// Attributed counts the cases with non-unanimous items, those items, and the
	// root causes they were attributed to (compare.Attribute).
	Attributed *attributed `json:"attributed,omitempty"`
	Exit       int         `json:"exit"`
}

type attributed struct {
	Cases  int `json:"cases"`
	Items  int `json:"items"`
	Causes int `json:"causes"`
}

type reporter interface {
	report(caseResult) error
	finish(totals) error
}

// session streams the oracle file, pairing each case with its candidate record.
type session struct {
	tol    float64
	axes   compare.Axes // what geometry cases are scored on
	cands  *candidates  // nil: only vote the oracle engines
	out    reporter
	stderr io.Writer
	t      totals
	// oracleCases counts the oracle file's cases; noneMatched says why the run
	// compared nothing, when no candidate record matched any of them.
	oracleCases int
	noneMatched string
}

// run returns an error only for input it cannot continue past (malformed JSON, an
// unreadable file); a case it cannot compare is reported as that case's verdict.
func (s *session) run(oracle io.Reader) error {
	s.t.Verdicts = map[compare.Verdict]int{}
	s.t.Outvoted = map[string]int{}
	s.t.NotComparable = map[string]int{}
	dec := json.NewDecoder(bufio.NewReaderSize(oracle, 1<<16))
	for n := 1; ; n++ {
		var line oracleLine
		err := decodeOracleLine(dec, &line)
		if errors.Is(err, io.EOF) {
			break
		}
		var typeErr *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &typeErr) {
			// A syntax error leaves the stream unreadable from here on.
			return fmt.Errorf("oracle record %d: %v", n, err)
		}
		if err == nil && !line.isCase() {
			if msg := line.swapped(n); msg != "" {
				return errors.New(msg)
			}
			s.t.Skipped++
			continue
		}
		if idKey(line.ID) == "" {
			if err == nil && line.Error != nil && line.kind == nil {
				// An error reply to a request whose id was unreadable matches nothing.
				fmt.Fprintf(s.stderr, "compare: oracle record %d: skipping error reply without id: %s\n", n, cli.Printable(*line.Error))
				s.t.Skipped++
				continue
			}
			return fmt.Errorf(`oracle record %d: no "id"`, n)
		}
		s.oracleCases++
		if err != nil {
			err = fmt.Errorf("oracle record %d: %v", n, err)
		} else {
			err = line.answer(n)
		}
		if err != nil {
			if err := s.emit(line, refused(err)); err != nil {
				return err
			}
			continue
		}
		if err := s.emit(line, s.compareCase(&line)); err != nil {
			return err
		}
	}
	if err := s.unmatched(); err != nil {
		return err
	}
	if s.oracleCases == 0 {
		s.noneMatched = fmt.Sprintf("the oracle file holds no case (%d lines that are not cases): nothing was compared", s.t.Skipped)
		return nil
	}
	if s.cands != nil && s.cands.records() > 0 && s.cands.matched() == 0 {
		// Every case is "missing": the files are not of one run.
		s.noneMatched = fmt.Sprintf("no candidate record matches an oracle case (%d oracle cases, %d candidate records): "+
			"the two files are not answers to the same corpus", s.oracleCases, s.cands.records())
	}
	return nil
}

func refused(err error) *compare.Report {
	return &compare.Report{Verdict: verdictError, Reason: err.Error()}
}

// compareCase finds the case's candidate record and scores it.
func (s *session) compareCase(line *oracleLine) *compare.Report {
	var cand *candidateLine
	if s.cands != nil {
		sp := s.cands.find(idKey(line.ID))
		switch {
		case sp == nil && s.cands.bare != nil:
			return refused(errors.New("the candidate is a bare dump, but the oracle file holds more than one case"))
		case sp == nil:
			return &compare.Report{Verdict: verdictMissing, Reason: "no candidate record with this id"}
		case sp.used:
			return refused(errors.New("duplicate oracle id"))
		}
		sp.used = true
		var err error
		if cand, err = s.cands.load(sp); err != nil {
			return refused(err)
		}
	}
	if line.kind == nil {
		return &compare.Report{Verdict: compare.Untrustworthy, Reason: "oracle error: " + *line.Error}
	}
	if cand != nil && cand.Error != nil {
		// A failure only where the engines give ground truth (the case voted alone).
		return compare.CandidateError(s.score(line, nil), *cand.Error)
	}
	return s.score(line, cand)
}

// score votes the oracle case and scores cand against it, by the case's kind (package
// kinds); cand nil only votes.
func (s *session) score(line *oracleLine, cand *candidateLine) *compare.Report {
	k := line.kind.About()
	var got any
	if cand != nil {
		if got = cand.answer(k.Record); got == nil {
			return refused(fmt.Errorf("the oracle case is %s, the candidate record has no %q", k.Case, k.Record))
		}
	}
	r, err := line.kind.Score(line.answers, got, compare.Options{Tolerance: s.tol, Unstable: line.Unstable, Axes: s.axes})
	if err != nil {
		return refused(err)
	}
	return r
}

// find returns the span for key, or the bare dump for the first case asking.
func (c *candidates) find(key string) *span {
	if c.bare != nil {
		if c.bare.used {
			return nil
		}
		return c.bare
	}
	return c.spans[key]
}

// unmatched reports candidate records no oracle case asked for.
func (s *session) unmatched() error {
	if s.cands == nil {
		return nil
	}
	spans := s.cands.order
	if s.cands.bare != nil {
		spans = []*span{s.cands.bare}
	}
	for _, sp := range spans {
		if sp.used {
			continue
		}
		id := sp.raw
		if id == nil { // the bare dump has no id
			id = json.RawMessage("null")
		}
		r := &compare.Report{Verdict: verdictMissing, Reason: "no oracle case with this id"}
		if err := s.emit(oracleLine{ID: id}, r); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) emit(line oracleLine, r *compare.Report) error {
	s.t.Cases++
	s.t.Verdicts[r.Verdict]++
	s.t.SumAbsDelta += jsonNum(r.SumAbsDelta)
	s.t.MaxAbsDelta = jsonNum(math.Max(float64(s.t.MaxAbsDelta), r.MaxAbsDelta))
	for _, o := range r.Outliers {
		s.t.Outvoted[o.Engine] += o.Count
	}
	for _, nc := range r.NotComparable {
		s.t.NotComparable[nc.Engine]++
	}
	if n := unstableItems(r); n > 0 {
		s.t.Unstable += n
		s.t.UnstableCases++
	}
	if len(r.Causes) > 0 {
		if s.t.Attributed == nil {
			s.t.Attributed = &attributed{}
		}
		s.t.Attributed.Cases++
		s.t.Attributed.Causes += len(r.Causes)
		s.t.Attributed.Items += compare.Explained(r.Causes)
	}
	return s.out.report(caseResult{ID: line.ID, Report: r, OracleErrors: line.Errors, Dumps: line.Dumps, Unstable: line.Unstable, Traces: line.Traces})
}

// unstableItems is how many of r's items were not voted for being unstable.
func unstableItems(r *compare.Report) int {
	n := r.Layout.Unstable + r.Style.Unstable
	if r.Reflection != nil {
		n += r.Reflection.Unstable
	}
	if r.Trace != nil {
		n += r.Trace.Unstable
	}
	return n
}

// exit is the exit status, and writes the totals line.
func (s *session) exit() int {
	s.t.Exit = exitOK
	switch {
	case s.t.Verdicts[verdictMissing]+s.t.Verdicts[verdictError] > 0:
		s.t.Exit = exitBadInput
	case s.t.Verdicts[compare.Fail] > 0:
		s.t.Exit = exitFail
	}
	if s.noneMatched != "" {
		fmt.Fprintf(s.stderr, "compare: %s\n", cli.Printable(s.noneMatched))
		s.t.Exit = exitBadInput
	}
	if err := s.out.finish(s.t); err != nil {
		fmt.Fprintf(s.stderr, "compare: %s\n", cli.Printable(err.Error()))
		return exitBadInput
	}
	return s.t.Exit
}
