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
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"syscall"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/oracle/answerbound"
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

// Dir is the report's directory; Index is the path of its index page.
func (w *Writer) Dir() string   { return w.dir.Path() }
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

// panel is one engine's drawing on a case page.
type panel struct {
	Engine  string
	Version string
	Note    string // outvoted on shape, an error, a shape divergence
	Shot    string // relative path of the screenshot, or ""
	Boxes   []box  // drawn in order: plain boxes first, highlighted ones on top
	Offview int    // boxes entirely outside the viewport (not visible in the panel)
	// Outvoted says what this panel's engine was outvoted on ("10 items", "shape"),
	// "" when on nothing: such a panel is the one highlighted (its frame, a badge,
	// and its outvoted boxes filled), not the majority's.
	Outvoted string
}

type box struct {
	Node     int
	Tag      string
	Status   string // compare.NodeStatus, "ok" when not highlighted
	Outlier  bool   // this panel's engine was outvoted on the node
	Fails    bool   // this panel is the candidate's, and it failed the node
	Cause    bool   // the node is a root cause (compare.Attribute)
	X, Y     float64
	W, H     float64
	Fragment int
}

// nodeInfo is what hovering a node shows: its tag, each engine's bounding box and
// the items that were not a unanimous pass.
type nodeInfo struct {
	Node     int                  `json:"node"`
	Tag      string               `json:"tag"`
	Status   compare.NodeStatus   `json:"status"`
	Outvoted []string             `json:"outvoted,omitempty"`
	Bounding map[string]dump.Rect `json:"bounding"`
	Items    []compare.NodeItem   `json:"items,omitempty"`
}

type casePage struct {
	N        int
	Total    string
	Row      row
	Report   *compare.Report
	Panels   []panel
	Outcomes *compare.Outcomes
	Causes   []compare.Cause // the page leads with them; their boxes are outlined
	Data     template.JS     // JSON of the hover details
	Errors   map[string]string
	Note     string
	Trace    *traceTable // trace cases only
	Items    *itemTable  // the items the engines disagreed on, with their values
}

func (w *Writer) writeCase(n int, rw row, c Case, r *compare.Report) error {
	p := casePage{N: n, Row: rw, Report: r, Errors: c.Errors}
	var out *compare.Outcomes
	if len(c.Dumps) > 0 {
		var err error
		if out, err = compare.NodeOutcomesWith(c.Dumps, c.Candidate, compare.Options{Tolerance: w.tol, Unstable: c.Unstable, Axes: r.Axes}); err != nil {
			p.Note = "not drawn: " + err.Error()
			out = nil
		}
	} else if r.Trace != nil {
		p.Note = "a trace case: its records are listed below"
		p.Trace = newTraceTable(r, c.Traces, c.CandidateTrace)
	} else if r.Reflection == nil {
		p.Note = "no dumps to draw"
	} else {
		p.Note = "a reflection case: no boxes to draw"
	}
	if out != nil && out.UnstableWhole != "" {
		p.Note = joinNote(p.Note, out.UnstableWhole+"'s runs differed in shape or overflow: nothing voted")
	}
	p.Outcomes = out
	outvoted := map[string]int{} // engine -> items it is the outlier on
	if out != nil {
		p.Items = newItemTable(out, c.Candidate != nil && out.Shape == nil && out.Nodes != nil)
		for _, nd := range out.Nodes {
			for _, it := range nd.Items {
				if it.Outlier != "" {
					outvoted[it.Outlier]++
				}
			}
		}
	}
	status := map[int]compare.NodeOutcome{}
	voters := map[string]bool{}
	causes := map[int]bool{}
	if out != nil {
		p.Causes = out.Causes
		for _, c := range out.Causes {
			causes[c.Node] = true
		}
		for _, nd := range out.Nodes {
			status[nd.Node] = nd
		}
		for _, e := range out.Engines {
			voters[e] = true
		}
	}
	infos := map[int]*nodeInfo{}
	if out != nil {
		for _, nd := range out.Nodes {
			for i, it := range nd.Items {
				if it.Delta != nil && (math.IsInf(*it.Delta, 0) || math.IsNaN(*it.Delta)) {
					nd.Items[i].Delta = nil // JSON has no Inf; the values still show both sides
				}
			}
			infos[nd.Node] = &nodeInfo{Node: nd.Node, Tag: nd.Tag, Status: nd.Status, Outvoted: nd.Outvoted,
				Bounding: map[string]dump.Rect{}, Items: nd.Items}
		}
	}
	if out != nil {
		sides := slices.Sorted(maps.Keys(c.Dumps))
		if c.Candidate != nil {
			sides = append(sides, "candidate")
		}
		for _, e := range sides {
			d := c.Dumps[e]
			if e == "candidate" {
				d = c.Candidate
			}
			pn := panel{Engine: e, Version: d.EngineVersion}
			switch n := outvoted[e]; {
			case e == out.ShapeOutlier:
				pn.Outvoted = "shape"
			case n == 1:
				pn.Outvoted = "1 item"
			case n > 1:
				pn.Outvoted = fmt.Sprintf("%d items", n)
			}
			// Highlights apply to the dumps whose node i is the voted node i: the voting
			// engines, and a candidate of the same shape.
			aligned := voters[e] || (e == "candidate" && out.Shape == nil && out.Nodes != nil)
			switch {
			case e == out.ShapeOutlier:
				pn.Note = "outvoted on shape: its nodes are not the others', nothing highlighted"
			case e == "candidate" && out.Shape != nil:
				pn.Note = fmt.Sprintf("shape differs at node %d (want %s, got %s): nothing highlighted", out.Shape.Index, out.Shape.Want, out.Shape.Got)
			case !aligned && out.UnstableWhole != "":
				pn.Note = "unstable as a whole: nothing highlighted"
			case !aligned:
				pn.Note = "the engines have no majority shape: nothing highlighted"
			}
			shot, err := w.screenshot(n, e, d)
			if err != nil {
				pn.Note = joinNote(pn.Note, "screenshot not usable: "+err.Error())
			}
			pn.Shot = shot
			var plain, marked, root []box
			for i, nd := range d.Nodes {
				st := compare.NodeOK
				outlier := false
				if aligned {
					if o, ok := status[i]; ok {
						st = o.Status
						outlier = slices.Contains(o.Outvoted, e)
					}
					if info := infos[i]; info != nil {
						info.Bounding[e] = nd.Bounding
					}
				}
				for j, rc := range nd.Rects {
					// The side that is off is the one filled: an outvoted engine's own
					// panel, and for a node the candidate failed the candidate's alone.
					b := box{Node: i, Tag: nd.Tag, Status: string(st), Outlier: outlier, Cause: aligned && causes[i],
						Fails: aligned && e == "candidate" && st == compare.NodeFailed,
						X:     rc.X, Y: rc.Y, W: rc.W, H: rc.H, Fragment: j}
					if rc.X >= dump.Viewport.Width || rc.Y >= dump.Viewport.Height || rc.X+rc.W <= 0 || rc.Y+rc.H <= 0 {
						pn.Offview++
					}
					switch {
					case b.Cause:
						root = append(root, b)
					case st == compare.NodeOK:
						plain = append(plain, b)
					default:
						marked = append(marked, b)
					}
				}
			}
			pn.Boxes = slices.Concat(plain, marked, root)
			p.Panels = append(p.Panels, pn)
		}
	}
	list := make([]*nodeInfo, 0, len(infos))
	for _, k := range slices.Sorted(maps.Keys(infos)) {
		list = append(list, infos[k])
	}
	data, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("report: case %d: %w", n, err)
	}
	p.Data = template.JS(data) // json.Marshal escapes <, > and &: safe inside <script>
	var b bytes.Buffer
	if err := caseTmpl.Execute(&b, p); err != nil {
		return fmt.Errorf("report: case %d: %w", n, err)
	}
	return w.writeFile(rw.Page, b.Bytes())
}

// screenshot puts the dump's screenshot under shots/ and returns its path relative
// to a case page, or "" when the dump has none.
func (w *Writer) screenshot(n int, engine string, d *dump.Dump) (string, error) {
	var png []byte
	switch {
	case d.Screenshot != "":
		if n := len(d.Screenshot); n > base64.StdEncoding.EncodedLen(answerbound.MaxScreenshot) {
			return "", fmt.Errorf("the base64 screenshot is %d bytes, over the %d of a %d-byte PNG", n, base64.StdEncoding.EncodedLen(answerbound.MaxScreenshot), answerbound.MaxScreenshot)
		}
		b, err := base64.StdEncoding.DecodeString(d.Screenshot)
		if err != nil {
			return "", fmt.Errorf("base64: %v", err)
		}
		png = b
	case d.ScreenshotFile != "":
		b, err := w.readArtifact(d.ScreenshotFile)
		if err != nil {
			return "", err
		}
		png = b
	default:
		return "", nil
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		return "", errors.New("not a PNG")
	}
	name := fmt.Sprintf("%06d-%s.png", n, unsafeName.ReplaceAllString(engine, "_"))
	if err := w.writeFile("shots/"+name, png); err != nil {
		return "", err
	}
	return "../shots/" + name, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// unsafeName is what an engine's name (any JSON key, in a hostile answers file)
// cannot keep in a file name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// readArtifact reads a screenshot_file: only under the screenshot directory
// (SetArtifacts), only a regular file, at most answerbound.MaxScreenshot bytes. A
// dump can name any path; these keep a report from copying in a file from elsewhere
// on disk, reading /dev/zero until memory runs out, or blocking on a FIFO.
func (w *Writer) readArtifact(file string) ([]byte, error) {
	if w.shots == nil {
		return nil, fmt.Errorf("screenshot_file %q not read: no screenshot directory was given (compare --screenshot-dir DIR, the oracle's --screenshot-dir)", file)
	}
	rel := file
	if filepath.IsAbs(file) {
		r, err := filepath.Rel(w.shotDir, file)
		if err != nil {
			return nil, fmt.Errorf("screenshot_file %q not read: %v", file, err)
		}
		rel = r
	}
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("screenshot_file %q not read: it is outside the screenshot directory %s", file, w.shotDir)
	}
	refuse := func(fi fs.FileInfo) error {
		switch {
		case !fi.Mode().IsRegular():
			return fmt.Errorf("screenshot_file %q not read: not a regular file (%v)", file, fi.Mode().Type())
		case fi.Size() > answerbound.MaxScreenshot:
			return fmt.Errorf("screenshot_file %q not read: %d bytes, over the %d a screenshot may have", file, fi.Size(), answerbound.MaxScreenshot)
		}
		return nil
	}
	fi, err := w.shots.Stat(rel) // a symlink is followed only within the directory
	if err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	if err := refuse(fi); err != nil {
		return nil, err
	}
	// Non-blocking, and checked again once open: the name may have changed since.
	f, err := w.shots.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	if err := refuse(fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, answerbound.MaxScreenshot+1))
	if err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	if len(b) > answerbound.MaxScreenshot {
		return nil, fmt.Errorf("screenshot_file %q not read: over the %d bytes a screenshot may have", file, answerbound.MaxScreenshot)
	}
	return b, nil
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
