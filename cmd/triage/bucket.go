package main

// Entries: the variants and entries buckets.json lists, filing each scored
// case's failures under them, and what an entry says of its defect.

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
)

// Variant is one signature of a defect: every case whose scored answer shows it.
type Variant struct {
	Signature Signature `json:"signature"`
	Cases     []string  `json:"cases"`
	Items     int       `json:"items"`  // the candidate's failed items its causes explain
	Causes    int       `json:"causes"` // its causes over all cases
	// Display is the display type of its boxes (the engines' majority), when the
	// same in most of its causes: tags of one display type fold into one entry.
	Display string `json:"display,omitempty"`
	// AgreeingEngines are the real engines whose value equals the candidate's
	// (within the tolerance) on the root items of more than half of its causes.
	AgreeingEngines []string `json:"agreeing_engines"`

	key            string
	representative string
	repBytes       int
	displays       map[string]int
	agree          map[string]int
}

// Bucket is one entry of buckets.json: one root defect, whatever signatures
// (Variants) it shows as. Signature is its variants' common signature, Tags
// every tag they show on.
type Bucket struct {
	Signature EntrySignature `json:"signature"`
	// Trigger says the defect in words: "block box (P, DIV): height larger".
	Trigger string `json:"trigger"`
	// Severity ranks entries first: crash (the candidate exited or timed out),
	// error (no dump of the contract), overflow (only the candidate's page
	// overflows), then failure.
	Severity string   `json:"severity"`
	Cases    []string `json:"cases"`
	// Fixes is how many cases fixing this entry makes pass, once every entry
	// ranked above it is fixed too (a case passes when all its entries are fixed).
	Fixes           int        `json:"fixes"`
	Items           int        `json:"items"`
	Causes          int        `json:"causes"`
	AgreeingEngines []string   `json:"agreeing_engines"`
	Variants        []*Variant `json:"variants"`
	Representative  string     `json:"representative"`
	Reduced         *Reduced   `json:"reduced"`

	// Merged are the signatures of entries folded into this one because their
	// reduced cases were the same page.
	Merged []string `json:"merged,omitempty"`

	// Status is the entry against --baseline: new, still (an entry of the
	// baseline shares one of its signatures: BaselineRank is its rank there), or
	// fixed (an entry of the baseline that no entry of this run matches, listed
	// after this run's). Recheck is the baseline's reduced case rerun first in this
	// build: fails, passes or cannot judge.
	Status       string `json:"status,omitempty"`
	BaselineRank int    `json:"baseline_rank,omitempty"`
	Recheck      string `json:"recheck,omitempty"`
	// Report and Rerun are the entry's entries/N/report.md and entries/N/rerun.sh,
	// relative to the output directory.
	Report string `json:"report,omitempty"`
	Rerun  string `json:"rerun,omitempty"`

	key   string
	split []*Variant // variants the tag swap on the reduced case did not confirm
	// stylesheet: the candidate's answer matches the engines' answer to the
	// reduced case without its author CSS on this entry's defect.
	stylesheet bool
	rep        *Variant // the variant whose representative is reduced
	repBytes   int
	confirm    *probe // the confirming run of Reduced, for the index page
}

// EntrySignature is an entry's signature: its variants' kind, properties and
// sign (empty when its variants differ in sign), Tag the first of Tags.
type EntrySignature struct {
	Kind  string   `json:"kind"`
	Tag   string   `json:"tag,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	Props []string `json:"properties,omitempty"`
	Sign  string   `json:"sign,omitempty"`
	Error string   `json:"error,omitempty"`
}

// Label is the entry's signature in one phrase: "layout P,DIV bounding.h +".
func (s EntrySignature) Label() string {
	return Signature{Kind: s.Kind, Tag: strings.Join(s.Tags, ","), Props: s.Props, Sign: s.Sign, Error: s.Error}.Label()
}

// Reduced is an entry's reduced representative.
type Reduced struct {
	HTML        string  `json:"html"`
	Bytes       int     `json:"bytes"`
	BytesBefore int     `json:"bytes_before"`
	Reproduced  bool    `json:"reproduced"`
	Seconds     float64 `json:"seconds"`
	Variants    int     `json:"variants"`
	Error       string  `json:"error,omitempty"`
	// HangBound is how long each variant of a timeout entry had before it counted
	// as still hanging (hangBound), when shorter than --candidate-timeout.
	HangBound string `json:"hang_bound,omitempty"`
	// OtherFailures are the other signatures the reduced case still fails in
	// the confirming run (another defect it still shows).
	OtherFailures []string `json:"other_failures"`
	// Page is the reduced case's page in DIR/reduced (boxes and values), when drawn.
	Page string `json:"page,omitempty"`
}

// bucketer groups failures across cases.
type bucketer struct {
	by      map[string]*Variant
	byCase  map[string][]string // case id -> its variants' keys
	caseIDs []string
	opts    compare.Options // the tolerance and axes cases are scored with
}

func newBucketer(opts compare.Options) *bucketer {
	return &bucketer{by: map[string]*Variant{}, byCase: map[string][]string{}, opts: opts}
}

// hit is one failure of a case: its signature, and for a cause, its items, box
// display and the engines that agree with the candidate on its root items.
type hit struct {
	sig     Signature
	items   int
	display string
	agree   []string
}

// hits are a scored case's failures: its candidate error, its candidate-only
// overflow, or its causes the candidate fails.
func hits(s *scored, opts compare.Options) []hit {
	switch {
	case s.errKind != "":
		return []hit{{sig: Signature{Kind: "error", Error: s.errKind}}}
	case s.overflow:
		return []hit{{sig: Signature{Kind: "overflow"}}}
	case s.report == nil:
		return nil
	}
	var dumps map[string]*dump.Dump
	if s.resp != nil {
		dumps = s.resp.Dumps
	}
	var outcomes *compare.Outcomes
	var out []hit
	for _, c := range s.report.Causes {
		if !slices.Contains(c.Engines, candidateName) {
			continue
		}
		h := hit{sig: causeSignature(s.report, c), items: c.Explains, display: causeDisplay(s.report, dumps, c)}
		if outcomes == nil && dumps != nil {
			opts.Unstable = compare.Unstable(s.resp.Unstable)
			outcomes, _ = compare.NodeOutcomesWith(dumps, s.cand, opts)
		}
		h.agree = agreeing(s.report, outcomes, c, opts.Tolerance)
		out = append(out, h)
	}
	return out
}

// causeDisplay is the outer display type of the cause's box in the majority's
// dump ("block", "inline", "table-cell").
func causeDisplay(r *compare.Report, dumps map[string]*dump.Dump, c compare.Cause) string {
	for _, e := range r.Engines {
		if d := dumps[e]; d != nil && c.Node >= 0 && c.Node < len(d.Nodes) {
			disp := d.Nodes[c.Node].Style["display"]
			if f := strings.Fields(disp); len(f) > 1 && f[1] == "list-item" || disp == "list-item" {
				return "block"
			}
			if f := strings.Fields(disp); len(f) > 0 {
				return f[0]
			}
			return disp
		}
	}
	return ""
}

// agreeing are the real engines whose value equals the candidate's on every
// root item of cause c the candidate fails (the items its signature is made
// of: the first geometry item, or its style items), within the tolerance.
func agreeing(r *compare.Report, o *compare.Outcomes, c compare.Cause, tol float64) []string {
	if o == nil {
		return []string{}
	}
	var items []compare.NodeItem
	for _, n := range o.Nodes {
		if n.Node != c.Node {
			continue
		}
		style := c.Kind == compare.CauseStyle
		root := ""
		for _, ref := range c.Items { // its root items first: the first the candidate fails of its class
			if _, isStyle := foldProperty(r, c.Node, ref.Property); ref.Node == c.Node && isStyle == style && failed(r, c.Node, ref.Property) {
				root = ref.Property
				break
			}
		}
		for _, it := range n.Items {
			if !it.Failed {
				continue
			}
			if _, isStyle := foldProperty(r, c.Node, it.Property); style && isStyle || !style && it.Property == root {
				items = append(items, it)
			}
		}
	}
	out := []string{}
	if len(items) == 0 {
		return out
	}
	for _, e := range o.Engines {
		same := true
		for _, it := range items {
			if !sameValue(it.Values[e], it.Values[candidateName], tol) {
				same = false
				break
			}
		}
		if same {
			out = append(out, e)
		}
	}
	return out
}

// sameValue compares two values as NodeItem.Values writes them: numbers within
// the tolerance, style values as StyleEqual compares them.
func sameValue(a, b string, tol float64) bool {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA == nil && errB == nil {
		return math.Abs(x-y) <= tol
	}
	return compare.StyleEqual(a, b, tol)
}

// add files one scored case's failures.
func (b *bucketer) add(s *scored) {
	id, size := s.c.id, len(s.c.html)
	seen := map[string]bool{}
	for _, h := range hits(s, b.opts) {
		k := h.sig.Key()
		v := b.by[k]
		if v == nil {
			v = &Variant{Signature: h.sig, key: k, displays: map[string]int{}, agree: map[string]int{}}
			b.by[k] = v
		}
		v.Causes++
		v.Items += h.items
		v.displays[h.display]++
		for _, e := range h.agree {
			v.agree[e]++
		}
		if !seen[k] {
			seen[k] = true
			v.Cases = append(v.Cases, id)
			b.byCase[id] = append(b.byCase[id], k)
			if v.representative == "" || size < v.repBytes || (size == v.repBytes && id < v.representative) {
				v.representative, v.repBytes = id, size
			}
		}
	}
	if len(seen) > 0 {
		b.caseIDs = append(b.caseIDs, id)
	}
}

// entryKey is what folds variants into one entry (the cheap, sound merges): a
// text width's sign (a glyph advance wrong either way is one text defect), and
// tags of one display type with the same kind, properties and sign.
func entryKey(v *Variant) string {
	s := v.Signature
	switch s.Kind {
	case "error", "overflow", string(compare.CauseShape):
		return s.Key()
	}
	sign := s.Sign
	if s.Kind == string(compare.CauseText) {
		sign = ""
	}
	return strings.Join([]string{s.Kind, v.Display, strings.Join(s.Props, ","), sign}, "|")
}

// crashKind says whether a candidate error of kind is a crash or a hang (a
// non-zero exit, a signal included, or a timeout): a "crash" entry, and a failure
// whether or not the engines voted (judge).
func crashKind(kind string) bool { return kind == "exit" || kind == "timeout" }

// severity ranks an entry's kind of failure: a crash or timeout, another
// candidate error, a candidate-only overflow, then a failure.
func severity(s Signature) (string, int) {
	switch {
	case s.Kind == "error" && crashKind(s.Error):
		return "crash", 0
	case s.Kind == "error":
		return "error", 1
	case s.Kind == "overflow":
		return "overflow", 2
	}
	return "failure", 3
}

// finish fills an entry from its variants: its signature, severity, counts,
// agreeing engines, trigger, and the variant whose representative it reduces
// (the most cases, then the smallest representative).
func (e *Bucket) finish() {
	slices.SortFunc(e.Variants, func(x, y *Variant) int {
		return cmp.Or(-cmp.Compare(len(x.Cases), len(y.Cases)), -cmp.Compare(x.Causes, y.Causes), strings.Compare(x.key, y.key))
	})
	first := e.Variants[0].Signature
	e.Signature = EntrySignature{Kind: first.Kind, Props: first.Props, Sign: first.Sign, Error: first.Error}
	e.Items, e.Causes = 0, 0
	reduced := e.Reduced != nil // its representative is chosen for good
	agree := map[string]int{}
	for _, v := range e.Variants {
		// The signature is its main variant's kind and properties, with the tags
		// and signs they show on; a variant of another kind folded in (a
		// consequence, a stylesheet trigger) is listed, not named.
		own := v.Signature.Kind == first.Kind && slices.Equal(v.Signature.Props, first.Props)
		if own && v.Signature.Tag != "" && !slices.Contains(e.Signature.Tags, v.Signature.Tag) {
			e.Signature.Tags = append(e.Signature.Tags, v.Signature.Tag)
		}
		if own && v.Signature.Sign != e.Signature.Sign {
			e.Signature.Sign = ""
		}
		e.Items += v.Items
		e.Causes += v.Causes
		for _, a := range v.AgreeingEngines {
			agree[a] += v.Causes
		}
		if !reduced && (e.rep == nil || v.repBytes < e.rep.repBytes && len(v.Cases)*2 >= len(e.Variants[0].Cases)) {
			e.rep = v
		}
	}
	if len(e.Signature.Tags) > 0 {
		e.Signature.Tag = e.Signature.Tags[0]
	}
	e.AgreeingEngines = []string{}
	for _, a := range slices.Sorted(maps.Keys(agree)) {
		if agree[a]*2 > e.Causes {
			e.AgreeingEngines = append(e.AgreeingEngines, a)
		}
	}
	e.Severity, _ = severity(first)
	e.Representative, e.repBytes = e.rep.representative, e.rep.repBytes
	e.Trigger = trigger(e)
	if e.stylesheet {
		e.Trigger = "stylesheet parsing: the candidate lays the page out as the engines do without its author CSS (" + e.Trigger + ")"
	}
}

// swapTag is html with every start and end tag named from renamed to to.
func swapTag(html, from, to string) string {
	re := regexp.MustCompile(`(?i)(</?)` + regexp.QuoteMeta(from) + `\b`)
	return re.ReplaceAllString(html, "${1}"+strings.ToLower(to))
}

// trigger says an entry's defect in words.
func trigger(e *Bucket) string {
	s := e.Signature
	switch s.Kind {
	case "error":
		return "the candidate gave no dump: " + s.Error
	case "overflow":
		return "only the candidate's page overflows the viewport"
	case string(compare.CauseShape):
		return "the element tree differs (a parse divergence) at " + strings.Join(s.Tags, ", ")
	}
	what := e.Variants[0].Display + " box"
	if e.Variants[0].Display == "" {
		what = "box"
	}
	if s.Kind == string(compare.CauseText) {
		what = "text in a " + what
	}
	words := map[string]string{"bounding.w": "width", "bounding.h": "height", "rects.count": "fragment count", "offset.x": "x offset", "offset.y": "y offset"}
	var props []string
	for _, p := range s.Props {
		if w, ok := words[p]; ok {
			p = w
		}
		props = append(props, p)
	}
	t := fmt.Sprintf("%s (%s): %s", what, strings.Join(s.Tags, ", "), strings.Join(props, ", "))
	switch s.Sign {
	case "+":
		t += " larger than the engines'"
	case "-":
		t += " smaller than the engines'"
	default:
		if s.Kind != string(compare.CauseStyle) {
			t += " wrong, either way"
		}
	}
	return t
}
