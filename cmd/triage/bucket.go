package main

import (
	"cmp"
	"encoding/json"
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

// candidateName is the candidate's name among a cause's engines (compare.Attribute).
const candidateName = "candidate"

// Signature is what makes two failures one defect (docs/triage.md, "Buckets"): the
// kind of the cause (compare.CauseKind, or "error" for a candidate that gave no
// dump), the tag of its box, what the candidate fails on that box itself, and,
// for geometry, the sign of the candidate's delta on the first item it fails ("+"
// larger than the engines' majority, "-" smaller). What it fails is the cause's
// own class of items (style properties for a style cause, geometry for a layout
// or text one), folded to what tells defects apart. Geometry: the first item the
// candidate fails on the box (a root of the cause: the item that explains the
// rest), as a size whichever item shows it (bounding.h, rects[1].h and
// style.height are all bounding.h), rects.count, or an offset (offset.x,
// offset.y). Style: every property it fails on the box, with the candidate's value
// when it is a keyword ("display=inline"), and when it is a length, without the
// value and with its sides folded ("padding", "margin", "border-width",
// "min-size", "max-size"). An error's signature is its kind ("timeout", "exit",
// "dump", "output").
type Signature struct {
	Kind  string   `json:"kind"`
	Tag   string   `json:"tag,omitempty"`
	Props []string `json:"properties,omitempty"`
	Sign  string   `json:"sign,omitempty"`
	Error string   `json:"error,omitempty"`
}

// Key is the signature as one comparable string.
func (s Signature) Key() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hangs says s is a candidate timeout: its variants are reduced under hangBound.
func (s Signature) hangs() bool { return s.Kind == "error" && s.Error == "timeout" }

// Label is the signature in one phrase: "layout P bounding.h +".
func (s Signature) Label() string {
	if s.Kind == "error" {
		return "candidate error: " + s.Error
	}
	l := s.Kind + " " + s.Tag
	if len(s.Props) > 0 {
		l += " " + strings.Join(s.Props, ",")
	}
	if s.Sign != "" {
		l += " " + s.Sign
	}
	return l
}

// signatures are the signatures of the causes the candidate fails in one scored
// case, one per cause (a case can show the same signature more than once).
func signatures(r *compare.Report) []Signature {
	if r == nil {
		return nil
	}
	var out []Signature
	for _, c := range r.Causes {
		if !slices.Contains(c.Engines, candidateName) {
			continue
		}
		out = append(out, causeSignature(r, c))
	}
	return out
}

func causeSignature(r *compare.Report, c compare.Cause) Signature {
	s := Signature{Kind: string(c.Kind), Tag: c.Tag}
	if c.Kind == compare.CauseShape {
		return s
	}
	// The cause's own class of items: its style properties for a style cause, its
	// geometry for a layout or text one (a style difference moves the geometry of
	// its box too, and that is not another defect).
	wantStyle := c.Kind == compare.CauseStyle
	props := map[string]bool{}
	var all []string
	for _, it := range c.Items {
		if it.Node != c.Node || !failed(r, c.Node, it.Property) {
			continue // another box's item, or an engine's own outvoted item the candidate matches
		}
		p, isStyle := foldProperty(r, c.Node, it.Property)
		all = append(all, p)
		if isStyle != wantStyle || !isStyle && len(props) > 0 {
			continue // geometry: the first item only (a root: a cause lists its roots first)
		}
		props[p] = true
		if s.Sign == "" && !isStyle {
			if d, ok := sizeDelta(r, c.Node, it.Property); ok && d != 0 {
				s.Sign = map[bool]string{true: "+", false: "-"}[d > 0]
			}
		}
	}
	if len(props) == 0 {
		for _, p := range all {
			props[p] = true
		}
	}
	s.Props = slices.Sorted(mapKeys(props))
	return s
}

// foldProperty is an item's property as a signature names it, and whether it is
// a style property (not a size).
func foldProperty(r *compare.Report, node int, prop string) (string, bool) {
	switch {
	case prop == "bounding.w" || prop == "style.width" || strings.HasSuffix(prop, "].w"):
		return "bounding.w", false
	case prop == "bounding.h" || prop == "style.height" || strings.HasSuffix(prop, "].h"):
		return "bounding.h", false
	case prop == "rects.count" || strings.HasPrefix(prop, "offset."):
		return prop, false
	}
	name := strings.TrimPrefix(prop, "style.")
	if v, ok := styleGot(r, node, prop); ok && !isLength(v) {
		return name + "=" + v, true
	}
	// A length: its sides are one defect (a wrong default padding is wrong on
	// every side it shows on).
	for _, f := range []struct{ prefix, suffix, as string }{
		{"margin-", "", "margin"}, {"padding-", "", "padding"}, {"border-", "-width", "border-width"},
		{"min-", "", "min-size"}, {"max-", "", "max-size"},
	} {
		if strings.HasPrefix(name, f.prefix) && strings.HasSuffix(name, f.suffix) {
			return f.as, true
		}
	}
	return name, true
}

// isLength says a computed value is a number with a unit (or none): "16px", "0", "50%".
func isLength(v string) bool {
	v = strings.TrimLeft(v, "+-")
	return v != "" && (v[0] >= '0' && v[0] <= '9' || v[0] == '.')
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// failed says the candidate failed item (node, prop) of r.
func failed(r *compare.Report, node int, prop string) bool {
	for _, f := range r.Findings {
		if f.Node == node && f.Property == prop && !f.Within {
			return true
		}
	}
	for _, f := range r.StyleFindings {
		if f.Node == node && f.Property == prop {
			return true
		}
	}
	return false
}

func delta(r *compare.Report, node int, prop string) (float64, bool) {
	for _, f := range r.Findings {
		if f.Node == node && f.Property == prop && !f.Within {
			return f.Delta, true
		}
	}
	return 0, false
}

// sizeDelta is delta, or for a size first seen in style.width or style.height
// (a StyleFinding), the candidate's px value less the majority's.
func sizeDelta(r *compare.Report, node int, prop string) (float64, bool) {
	if d, ok := delta(r, node, prop); ok {
		return d, true
	}
	for _, f := range r.StyleFindings {
		if f.Node == node && f.Property == prop {
			got, err1 := strconv.ParseFloat(strings.TrimSuffix(f.Got, "px"), 64)
			want, err2 := strconv.ParseFloat(strings.TrimSuffix(f.Want, "px"), 64)
			if err1 == nil && err2 == nil {
				return got - want, true
			}
		}
	}
	return 0, false
}

func styleGot(r *compare.Report, node int, prop string) (string, bool) {
	for _, f := range r.StyleFindings {
		if f.Node == node && f.Property == prop {
			return f.Got, true
		}
	}
	return "", false
}

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

// severity ranks an entry's kind of failure: a crash or timeout, another
// candidate error, a candidate-only overflow, then a failure.
func severity(s Signature) (string, int) {
	switch {
	case s.Kind == "error" && (s.Error == "exit" || s.Error == "timeout"):
		return "crash", 0
	case s.Kind == "error":
		return "error", 1
	case s.Kind == "overflow":
		return "overflow", 2
	}
	return "failure", 3
}

// ranked is every entry, best first (docs/triage.md, "Ranking"): by severity,
// then (aloneFirst: the entries where the candidate is alone against all the
// engines first) by what a fix buys, greedily: each next entry is the one that
// covers most of the failures left once the entries above it are fixed, a case
// counting 1/its unfixed entries, then the one whose fix makes the most cases
// pass. Passes alone are myopic where defects share cases: a defect on every P
// whose cases all hold a second defect makes none pass by itself, and would rank
// below a two-case difference.
func (b *bucketer) ranked(aloneFirst bool) []*Bucket {
	for _, v := range b.by {
		v.Display = ""
		best := 0
		for d, n := range v.displays {
			if n*2 > v.Causes && n > best {
				v.Display, best = d, n
			}
		}
		v.AgreeingEngines = []string{}
		for e, n := range v.agree {
			if n*2 > v.Causes {
				v.AgreeingEngines = append(v.AgreeingEngines, e)
			}
		}
		slices.Sort(v.AgreeingEngines)
	}
	byKey := map[string]*Bucket{}
	var entries []*Bucket
	for _, k := range slices.Sorted(maps.Keys(b.by)) {
		v := b.by[k]
		ek := entryKey(v)
		e := byKey[ek]
		if e == nil {
			e = &Bucket{key: ek}
			byKey[ek] = e
			entries = append(entries, e)
		}
		e.Variants = append(e.Variants, v)
	}
	for _, e := range entries {
		e.finish()
	}
	return b.rank(entries, aloneFirst)
}

// rank orders entries as ranked says, filling each one's Cases and Fixes.
func (b *bucketer) rank(entries []*Bucket, aloneFirst bool) []*Bucket {
	entryOf := map[string]*Bucket{} // variant key -> entry
	for _, e := range entries {
		e.Cases = nil
		for _, v := range e.Variants {
			entryOf[v.key] = e
		}
	}
	// Cases of each entry, in corpus order, and entries of each case.
	caseEntries := map[string][]*Bucket{}
	for _, id := range b.caseIDs {
		seen := map[*Bucket]bool{}
		for _, k := range b.byCase[id] {
			e := entryOf[k]
			if !seen[e] {
				seen[e] = true
				e.Cases = append(e.Cases, id)
				caseEntries[id] = append(caseEntries[id], e)
			}
		}
	}
	tier := func(e *Bucket) int {
		_, sev := severity(e.Variants[0].Signature)
		t := 2 * sev
		if aloneFirst && sev == 3 && len(e.AgreeingEngines) > 0 {
			t++
		}
		return t
	}
	fixed := map[*Bucket]bool{}
	left := func(id string) int { // entries of case id not fixed yet
		n := 0
		for _, e := range caseEntries[id] {
			if !fixed[e] {
				n++
			}
		}
		return n
	}
	gain := func(e *Bucket) (int, float64) {
		pass, part := 0, 0.0
		for _, id := range e.Cases {
			l := left(id)
			if l == 1 {
				pass++
			}
			part += 1 / float64(l)
		}
		return pass, part
	}
	var out []*Bucket
	for len(out) < len(entries) {
		var best *Bucket
		var bestPass int
		var bestPart float64
		for _, e := range entries {
			if fixed[e] {
				continue
			}
			pass, part := gain(e)
			if best == nil || cmp.Or(cmp.Compare(tier(e), tier(best)), -cmp.Compare(part, bestPart), -cmp.Compare(pass, bestPass),
				-cmp.Compare(len(e.Cases), len(best.Cases)), -cmp.Compare(e.Causes, best.Causes),
				-cmp.Compare(e.Items, best.Items), strings.Compare(e.key, best.key)) < 0 {
				best, bestPass, bestPart = e, pass, part
			}
		}
		best.Fixes = bestPass
		fixed[best] = true
		out = append(out, best)
	}
	return out
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

// refine applies the evidence reduction gathered and ranks the entries again:
// a variant whose tag, swapped into the entry's reduced case, did not fail the
// same way (split) becomes an entry of its own (with the others of its tag),
// and entries of one kind and properties whose reduced cases are the same page
// are one entry.
func (b *bucketer) refine(entries []*Bucket, aloneFirst bool) []*Bucket {
	var out []*Bucket
	for _, e := range entries {
		out = append(out, e)
		if len(e.split) == 0 {
			continue
		}
		byTag := map[string]*Bucket{}
		for _, v := range e.split {
			n := byTag[v.Signature.Tag]
			if n == nil {
				n = &Bucket{key: e.key + "|" + v.Signature.Tag}
				byTag[v.Signature.Tag] = n
				out = append(out, n)
			}
			n.Variants = append(n.Variants, v)
			e.Variants = slices.DeleteFunc(e.Variants, func(x *Variant) bool { return x == v })
		}
		for _, n := range byTag {
			n.finish()
		}
		e.split = nil
		e.finish()
	}
	same := map[string]*Bucket{}
	merged := out[:0]
	var sheet *Bucket // the stylesheet-parsing entry
	for _, e := range out {
		if e.stylesheet {
			if sheet != nil {
				sheet.Variants = append(sheet.Variants, e.Variants...)
				sheet.Merged = append(sheet.Merged, e.Signature.Label())
				sheet.finish()
				continue
			}
			sheet = e
		}
		if r := e.Reduced; r != nil && r.Reproduced && r.Error == "" {
			// The same page, and the same kind and properties: two defects that
			// fall on one box (a wrong margin and a wrong height) reduce to one
			// page too, and stay two entries.
			page := strings.Join(append(strings.Fields(r.HTML), e.Signature.Kind, strings.Join(e.Signature.Props, ",")), " ")
			if into := same[page]; into != nil && into.Severity == e.Severity {
				into.Variants = append(into.Variants, e.Variants...)
				into.Merged = append(into.Merged, e.Signature.Label())
				into.finish()
				continue
			}
			same[page] = e
		}
		merged = append(merged, e)
	}
	return b.rank(foldConsequences(merged), aloneFirst)
}

// foldConsequences folds an entry into another whose defect it only shows
// through: every case of the entry is one of the other's, its reduced case still
// fails one of the other's signatures (no smaller page shows it without that
// failure), and the other's reduced case fails nothing else (its page shows its
// defect alone). A table cell padding defect on TH shows as the width and height
// of the TD beside it, in a subset of its cases, and those reduce to tables that
// keep the TH padding. Two defects that fall on one box keep two entries: each
// reduced case holds the other's failure too, so neither shows alone.
func foldConsequences(entries []*Bucket) []*Bucket {
	alone := func(e *Bucket) bool {
		r := e.Reduced
		return r != nil && r.Reproduced && r.Error == "" && len(r.OtherFailures) == 0 && e.Severity == "failure"
	}
	into := func(e *Bucket) *Bucket {
		r := e.Reduced
		if r == nil || !r.Reproduced || r.Error != "" || e.Severity != "failure" {
			return nil
		}
		for _, f := range entries {
			if f == e || !alone(f) || len(f.Cases) < len(e.Cases) || !subset(e.Cases, f.Cases) {
				continue
			}
			for _, v := range f.Variants {
				if slices.Contains(r.OtherFailures, v.Signature.Label()) {
					return f
				}
			}
		}
		return nil
	}
	folded := map[*Bucket]*Bucket{}
	for _, e := range entries {
		if f := into(e); f != nil {
			folded[e] = f
		}
	}
	var out []*Bucket
	for _, e := range entries {
		f, ok := folded[e]
		if !ok {
			out = append(out, e)
			continue
		}
		f.Variants = append(f.Variants, e.Variants...)
		f.Merged = append(f.Merged, e.Signature.Label())
	}
	for _, f := range folded {
		f.finish()
	}
	return out
}

// subset says every id of a is in b.
func subset(a, b []string) bool {
	in := make(map[string]bool, len(b))
	for _, id := range b {
		in[id] = true
	}
	for _, id := range a {
		if !in[id] {
			return false
		}
	}
	return true
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

// showsAny says r shows any of the entry's variants' signatures.
func (e *Bucket) showsAny(r *compare.Report, errKind string, overflow bool) bool {
	for _, v := range e.Variants {
		if shows(v.Signature, r, errKind, overflow) {
			return true
		}
	}
	return false
}

// shows says r (or a candidate error of kind errKind, or a candidate-only
// overflow) has a failure of signature s.
func shows(s Signature, r *compare.Report, errKind string, overflow bool) bool {
	switch {
	case s.Kind == "error":
		return errKind == s.Error
	case s.Kind == "overflow":
		return overflow
	case errKind != "" || overflow || r == nil:
		return false
	}
	k := s.Key()
	for _, got := range signatures(r) {
		if got.Key() == k {
			return true
		}
	}
	return false
}
