package report

// A case's page: each engine's panel drawn from its dump, with the outvoted,
// failed and cause boxes marked, and each node's hover details.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"slices"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
)

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

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
