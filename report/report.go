// Package report writes compare's static HTML report: an index of every
// case, paged and filtered in the page itself so that it stays usable at 10,000
// cases, and one page per case with the engines side by side, each drawn from its
// dump (the screenshot when the dump carries one, a wireframe of every box
// otherwise), the outvoted, split and failed nodes highlighted in the same colour in
// every panel. Everything is written under one directory and opens from disk: no
// network, no CDN.
//
// Cases are written as they arrive (Add), so memory holds one index row per case,
// not the dumps.
package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

//go:embed assets/report.css
var css []byte

//go:embed assets/index.js
var indexJS []byte

//go:embed assets/case.js
var caseJS []byte

// Case is one compared case, as cmd/compare has it.
type Case struct {
	ID        json.RawMessage
	Report    *compare.Report
	Dumps     map[string]*dump.Dump // the oracle engines' dumps; nil for reflection or error cases
	Candidate *dump.Dump            // nil without a candidate
	Errors    map[string]string     // oracle engines that produced no dump, with why
	Unstable  compare.Unstable      // the oracle's "unstable": items not voted, drawn as such
	// Traces and CandidateTrace are a trace case's traces, listed record by record.
	Traces         map[string]*trace.Trace
	CandidateTrace *trace.Trace
}

// Writer writes one report directory.
type Writer struct {
	dir     *outdir.Dir
	own     bool     // dir was opened by New, and is closed by Close
	shots   *os.Root // screenshot_file is read only from here (SetArtifacts); nil: not at all
	shotDir string
	tol     float64
	rows    []row
	engines map[string]bool
	closed  bool
}

// row is one index entry; the index page filters and sorts these in the browser.
type row struct {
	N       int    `json:"n"`
	ID      string `json:"id"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	// Failed counts the items the candidate failed (geometry, style, reflection and
	// trace); MaxDelta is its largest geometry |delta| in px.
	Failed   int               `json:"failed,omitempty"`
	MaxDelta float64           `json:"max_delta,omitempty"`
	Votes    map[vote.Kind]int `json:"votes,omitempty"`
	Outvoted map[string]int    `json:"outvoted,omitempty"` // engine -> items it was outvoted on
	Errors   []string          `json:"errors,omitempty"`   // engines with no dump
	// NotComparable: engines left out of a trace vote for another emulation set.
	NotComparable []string `json:"not_comparable,omitempty"`
	Page          string   `json:"page"`
}

// New creates dir (and its cases/ and shots/ folders) and writes the shared assets.
// Every file is written through package outdir: a name already in dir that is a
// symlink or not a regular file is refused, not written through.
func New(dir string, tol float64) (*Writer, error) {
	d, err := outdir.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	w, err := NewIn(d, tol)
	if err != nil {
		d.Close()
		return nil, err
	}
	w.own = true
	return w, nil
}

// NewIn is New in a directory the caller opened (and closes).
func NewIn(d *outdir.Dir, tol float64) (*Writer, error) {
	for _, sub := range []string{"cases", "shots"} {
		if err := d.MkdirAll(sub); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	for name, b := range map[string][]byte{"report.css": css, "index.js": indexJS, "case.js": caseJS} {
		if err := d.WriteFile(name, b); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	return &Writer{dir: d, tol: tol, engines: map[string]bool{}}, nil
}

// SetArtifacts names the directory a dump's screenshot_file may be read from: the
// oracle's --screenshot-dir DIR, where it writes them. A screenshot_file anywhere else,
// or that is not a regular file of at most answerbound.MaxScreenshot bytes, is not
// read; its panel says why. Without it no screenshot_file is read.
func (w *Writer) SetArtifacts(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("report: artifacts: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return fmt.Errorf("report: artifacts: %w", err)
	}
	if w.shots != nil {
		w.shots.Close()
	}
	w.shots, w.shotDir = root, abs
	return nil
}

// Index is the path of the report's index page.
func (w *Writer) Index() string { return w.dir.Join("index.html") }

// Add writes c's page and keeps its index row.
func (w *Writer) Add(c Case) error {
	if w.closed {
		return errors.New("report: Add after Close")
	}
	r := c.Report
	if r == nil {
		r = &compare.Report{Verdict: "error", Reason: "no report"}
	}
	n := len(w.rows) + 1
	page := fmt.Sprintf("cases/%06d.html", n)
	rw := row{N: n, ID: displayID(c.ID), Verdict: string(r.Verdict), Reason: r.Reason, Votes: r.Votes, Page: page,
		Failed: failedItems(r), MaxDelta: finite(r.MaxAbsDelta)}
	if rw.Reason == "" && rw.Failed > 0 {
		rw.Reason = failReason(r, rw.Failed)
	}
	for _, o := range r.Outliers {
		if rw.Outvoted == nil {
			rw.Outvoted = map[string]int{}
		}
		rw.Outvoted[o.Engine] += o.Count
		w.engines[o.Engine] = true
	}
	rw.Errors = slices.Sorted(maps.Keys(c.Errors))
	for e := range c.Dumps {
		w.engines[e] = true
	}
	for e := range c.Traces {
		w.engines[e] = true
	}
	for _, nc := range r.NotComparable {
		rw.NotComparable = append(rw.NotComparable, nc.Engine)
	}
	for _, e := range rw.Errors {
		w.engines[e] = true
	}
	if err := w.writeCase(n, rw, c, r); err != nil {
		return err
	}
	w.rows = append(w.rows, rw)
	return nil
}

// finite is v for the index's JSON, which has no infinity: an overflowing delta
// (two values near ±MaxFloat64 subtracted) is the largest float instead.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return math.MaxFloat64
	}
	return v
}

// failedItems is every item the candidate failed, on each axis scored.
func failedItems(r *compare.Report) int {
	n := r.Layout.Failed + r.Style.Failed
	if r.Reflection != nil {
		n += r.Reflection.Failed
	}
	if r.Trace != nil {
		n += r.Trace.Failed
	}
	return n
}

// failReason says in a line why a case failed, for the index: how many items, and
// the largest geometry difference (else the first style one), by node and property.
func failReason(r *compare.Report, failed int) string {
	s := fmt.Sprintf("%d item", failed)
	if failed != 1 {
		s += "s"
	}
	s += " outside tolerance"
	var worst *compare.Finding
	for _, f := range r.Failures() {
		if worst == nil || math.Abs(f.Delta) > math.Abs(worst.Delta) {
			worst = &f
		}
	}
	switch {
	case worst != nil && worst.Property == "rects.count":
		s += fmt.Sprintf("; the largest: %s (node %d) %s %+g", worst.Tag, worst.Node, worst.Property, worst.Delta)
	case worst != nil:
		s += fmt.Sprintf("; the largest: %s (node %d) %s %+.2f px", worst.Tag, worst.Node, worst.Property, worst.Delta)
	case len(r.StyleFindings) > 0:
		f := r.StyleFindings[0]
		s += fmt.Sprintf("; first: %s (node %d) %s %q, majority %q", f.Tag, f.Node, f.Property, f.Got, f.Want)
	}
	return s
}

// Close writes the index. The report is complete only after it.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.shots != nil {
		defer w.shots.Close()
	}
	if w.own {
		defer w.dir.Close()
	}
	verdicts := map[string]int{}
	for _, r := range w.rows {
		verdicts[r.Verdict]++
	}
	data, err := json.Marshal(struct {
		Cases    []row          `json:"cases"`
		Engines  []string       `json:"engines"`
		Verdicts map[string]int `json:"verdicts"`
	}{w.rows, slices.Sorted(maps.Keys(w.engines)), verdicts})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// The rows are a script of their own, not inlined in the page: a <script src> loads
	// from disk where fetch() of a file: URL is refused.
	if err := w.dir.WriteFile("cases.js", append(append([]byte("window.REPORT = "), data...), ";\n"...)); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var b bytes.Buffer
	if err := indexTmpl.Execute(&b, struct{ Cases int }{len(w.rows)}); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return w.writeFile("index.html", b.Bytes())
}

func (w *Writer) writeFile(name string, b []byte) error {
	if err := w.dir.WriteFile(name, b); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// displayID shows a string id unquoted and any other id as its JSON, as compare's
// text output does.
func displayID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// votesText is "unanimous 120, majority 3" in a fixed order.
func votesText(v map[vote.Kind]int) string {
	var b bytes.Buffer
	for _, k := range []vote.Kind{vote.Unanimous, vote.Agree, vote.Majority, vote.Split, vote.Disagree, vote.Unstable} {
		if v[k] > 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", k, v[k])
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	k := slices.Collect(maps.Keys(m))
	sort.Strings(k)
	return k
}
