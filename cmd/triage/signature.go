package main

// Signatures: what makes two failures one defect, read from a scored case's
// report, and whether a report shows one.

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/compare"
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
