package main

import (
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/layout-oracle/oracle/compare"
)

// candidateName is the candidate's name among a cause's engines (compare.Attribute).
const candidateName = "candidate"

// Signature is what makes two failures one defect (docs/triage.md, "Buckets"): the
// kind of the cause (compare.CauseKind, or "error" for a candidate that gave no
// dump), the tag of its box, the properties the candidate fails on that box itself
// (fragment indices folded: rects[].h), and the sign of the candidate's delta on
// the first numeric one ("+" larger than the engines, "-" smaller, "" none). For
// style properties, the candidate's value is kept too ("display=inline"): a
// wrong computed value is one defect per value. An error's signature is its kind
// ("timeout", "exit", "dump").
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

// Label is the signature in one phrase: "layout P bounding.h,rects[].h +".
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

var fragmentIndex = regexp.MustCompile(`\[\d+\]`)

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
	props := map[string]bool{}
	for _, it := range c.Items {
		if it.Node != c.Node {
			continue
		}
		p := fragmentIndex.ReplaceAllString(it.Property, "[]")
		if v, ok := styleGot(r, c.Node, it.Property); ok {
			p += "=" + v
		}
		if !failed(r, c.Node, it.Property) {
			continue // an engine's own outvoted item, which the candidate matches
		}
		props[p] = true
		if s.Sign == "" {
			if d, ok := delta(r, c.Node, it.Property); ok && d != 0 {
				s.Sign = map[bool]string{true: "+", false: "-"}[d > 0]
			}
		}
	}
	s.Props = slices.Sorted(mapKeys(props))
	return s
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

func styleGot(r *compare.Report, node int, prop string) (string, bool) {
	if !strings.HasPrefix(prop, "style.") || prop == "style.width" || prop == "style.height" {
		return "", false // a resolved size follows the geometry: its value is no defect of its own
	}
	for _, f := range r.StyleFindings {
		if f.Node == node && f.Property == prop {
			return f.Got, true
		}
	}
	return "", false
}

// Bucket is one defect: every case whose scored answer shows its signature.
type Bucket struct {
	Signature      Signature `json:"signature"`
	Cases          []string  `json:"cases"`
	Items          int       `json:"items"`  // the candidate's failed items its causes explain
	Causes         int       `json:"causes"` // its causes over all cases
	Representative string    `json:"representative"`
	Reduced        *Reduced  `json:"reduced"`

	key      string
	repBytes int
	confirm  *probe // the confirming run of Reduced, for the index page
}

// Reduced is a bucket's reduced representative.
type Reduced struct {
	HTML        string  `json:"html"`
	Bytes       int     `json:"bytes"`
	BytesBefore int     `json:"bytes_before"`
	Reproduced  bool    `json:"reproduced"`
	Seconds     float64 `json:"seconds"`
	Variants    int     `json:"variants"`
	Error       string  `json:"error,omitempty"`
	// Page is the reduced case's page in DIR/reduced (boxes and values), when drawn.
	Page string `json:"page,omitempty"`
}

// bucketer groups failures across cases.
type bucketer struct {
	by map[string]*Bucket
}

func newBucketer() *bucketer { return &bucketer{by: map[string]*Bucket{}} }

// add files one case's failures: its causes' signatures (r) or its candidate
// error (errKind), with the case's size in bytes for choosing representatives.
func (b *bucketer) add(id string, size int, r *compare.Report, errKind string) {
	type hit struct {
		sig   Signature
		items int
	}
	var hits []hit
	if errKind != "" {
		hits = append(hits, hit{Signature{Kind: "error", Error: errKind}, 0})
	} else if r != nil {
		for _, c := range r.Causes {
			if slices.Contains(c.Engines, candidateName) {
				hits = append(hits, hit{causeSignature(r, c), c.Explains})
			}
		}
	}
	seen := map[string]bool{}
	for _, h := range hits {
		k := h.sig.Key()
		bk := b.by[k]
		if bk == nil {
			bk = &Bucket{Signature: h.sig, key: k}
			b.by[k] = bk
		}
		bk.Causes++
		bk.Items += h.items
		if !seen[k] {
			seen[k] = true
			bk.Cases = append(bk.Cases, id)
			if bk.Representative == "" || size < bk.repBytes || (size == bk.repBytes && id < bk.Representative) {
				bk.Representative, bk.repBytes = id, size
			}
		}
	}
}

// ranked is every bucket, best first: most cases, then most causes, then most
// items, then the signature's text (a stable order).
func (b *bucketer) ranked() []*Bucket {
	out := make([]*Bucket, 0, len(b.by))
	for _, bk := range b.by {
		out = append(out, bk)
	}
	slices.SortFunc(out, func(x, y *Bucket) int {
		return cmp.Or(-cmp.Compare(len(x.Cases), len(y.Cases)), -cmp.Compare(x.Causes, y.Causes),
			-cmp.Compare(x.Items, y.Items), strings.Compare(x.key, y.key))
	})
	return out
}

// shows says r (or a candidate error of kind errKind) has a failure of signature s.
func shows(s Signature, r *compare.Report, errKind string) bool {
	if s.Kind == "error" {
		return errKind == s.Error
	}
	if errKind != "" || r == nil {
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
