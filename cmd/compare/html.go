package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/layout-oracle/oracle/report"
)

// htmlReport passes every case on to the text or JSON output and also writes it into
// the HTML report (--out DIR), page by page as the cases stream.
type htmlReport struct {
	next   reporter
	w      *report.Writer
	cands  *candidates
	stderr io.Writer
}

func withHTML(dir, artifacts string, next reporter, cands *candidates, tol float64, stderr io.Writer) (reporter, error) {
	w, err := report.New(dir, tol)
	if err != nil {
		return nil, err
	}
	if artifacts != "" {
		if err := w.SetArtifacts(artifacts); err != nil {
			w.Close()
			return nil, err
		}
	}
	return &htmlReport{next: next, w: w, cands: cands, stderr: stderr}, nil
}

func (h *htmlReport) report(c caseResult) error {
	if err := h.next.report(c); err != nil {
		return err
	}
	cand := h.candidate(c.ID)
	rc := report.Case{ID: c.ID, Report: c.Report, Dumps: c.Dumps, Errors: c.OracleErrors, Unstable: c.Unstable, Traces: c.Traces}
	if cand != nil {
		rc.Candidate, rc.CandidateTrace = cand.Dump, cand.Trace
	}
	return h.w.Add(rc)
}

func (h *htmlReport) finish(t totals) error {
	err := h.next.finish(t)
	if cerr := h.w.Close(); cerr != nil {
		return cerr
	}
	fmt.Fprintf(h.stderr, "compare: HTML report: %s\n", h.w.Index())
	return err
}

// candidate reads the case's candidate record back from the candidate file (the
// session does not keep it); nil when there is none or it cannot be read, in which
// case the page shows the oracle engines only.
func (h *htmlReport) candidate(id json.RawMessage) *candidateLine {
	if h.cands == nil {
		return nil
	}
	sp := h.cands.bare
	if sp == nil {
		sp = h.cands.spans[idKey(id)]
	}
	if sp == nil {
		return nil
	}
	line, err := h.cands.load(sp)
	if err != nil {
		return nil
	}
	return line
}
