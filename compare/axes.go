package compare

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/layout-oracle/oracle/dump"
)

// Axes selects what a geometry case is scored on: a candidate team can take
// layout first and style later (compare --axes).
//
//   - layout: the box geometry items: bounding.w, bounding.h, rects.count,
//     rects[i].w, rects[i].h, offset.x, offset.y.
//   - style: the style subset's computed values, style.<property>.
//
// Shape (the parse divergence) and overflow gate every axis: they decide whether the
// items can be paired up at all. An axis not selected is neither voted nor scored,
// and gives no findings and no causes.
type Axes string

const (
	axesAll    Axes = "all"
	axesLayout Axes = "layout"
	axesStyle  Axes = "style"
)

// ParseAxes reads a --axes value: "layout", "style" or "all" ("" is all).
func ParseAxes(s string) (Axes, error) {
	switch a := Axes(s); a {
	case "", axesAll:
		return axesAll, nil
	case axesLayout, axesStyle:
		return a, nil
	}
	return "", fmt.Errorf("axes %q: want layout, style or all", s)
}

// Layout reports whether the layout axis is scored ("" is all).
func (a Axes) Layout() bool { return a != axesStyle }

// Style reports whether the style axis is scored ("" is all).
func (a Axes) Style() bool { return a != axesLayout }

// has reports whether item prop (a Finding or StyleFinding property) is on a.
func (a Axes) has(prop string) bool {
	if len(prop) > 6 && prop[:6] == "style." {
		return a.Style()
	}
	return a.Layout()
}

// Options are how a geometry case is scored (GeometryWith, NodeOutcomesWith).
type Options struct {
	// Tolerance is the geometry tolerance in CSS px (dump.DefaultTolerance); it
	// also bounds the lengths inside style values (StyleEqual).
	Tolerance float64
	// Unstable are the engines' unstable items, a response's "unstable".
	Unstable Unstable
	// Axes is what is scored; "" is AxesAll.
	Axes Axes
}

// styleLength finds a px length in a computed style value: a CSS number followed by
// "px", not inside an identifier. Group 1 is what precedes it, group 2 the number.
var styleLength = regexp.MustCompile(`(^|[\s,(/*+])([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)px\b`)

// StyleEqual compares two computed style values as getComputedStyle resolves them:
// every px length in them (one, as in "64px", or several, as in "0px 2.5px" or
// "calc(10px + 5%)") numerically within tol, and all the rest of the text exactly.
// Blink's 64.0156px is 64px: one 1/64 px layout unit in a resolved length is
// quantization, not a style-pipeline difference. "auto" is never "0px".
func StyleEqual(a, b string, tol float64) bool {
	if a == b {
		return true
	}
	am := styleLength.FindAllStringSubmatchIndex(a, -1)
	bm := styleLength.FindAllStringSubmatchIndex(b, -1)
	if len(am) == 0 || len(am) != len(bm) {
		return false
	}
	ai, bi := 0, 0 // how far the text outside lengths has been compared
	for k := range am {
		// The text before the number (its boundary group included) must match.
		if a[ai:am[k][4]] != b[bi:bm[k][4]] {
			return false
		}
		x, err1 := strconv.ParseFloat(a[am[k][4]:am[k][5]], 64)
		y, err2 := strconv.ParseFloat(b[bm[k][4]:bm[k][5]], 64)
		if err1 != nil || err2 != nil || !dump.Within(x-y, tol) {
			return false
		}
		ai, bi = am[k][5], bm[k][5]
	}
	return a[ai:] == b[bi:]
}
