// Package dump holds the geometry answer of docs/dump-format.md ("The dump", "The
// style subset"; its JSON Schema is in dump/schema), the one in-page walk that
// produces it in every engine, and how two dumps compare (compare.go: Shape, then
// each item Within a tolerance). Voting on the engines' dumps and scoring a
// candidate is package compare's (Geometry).
package dump

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/layout-oracle/oracle/inpage"
)

// WalkJS is the in-page walk, a JavaScript function expression taking the style
// property list; the oracle runs the case's script before it (oracle.WithCaseScript).
// Every engine evaluates exactly this text, so a difference between two dumps is the
// engines', never the harness's. Its text is inpage/dump/walk.js.
var WalkJS = inpage.DumpWalk

// StyleProperties is the spec's fixed, ordered style subset.
var StyleProperties = []string{
	"display", "position", "box-sizing", "direction", "writing-mode", "float", "clear",
	"width", "height", "min-width", "max-width", "min-height", "max-height",
	"margin-top", "margin-right", "margin-bottom", "margin-left",
	"padding-top", "padding-right", "padding-bottom", "padding-left",
	"border-top-width", "border-right-width", "border-bottom-width", "border-left-width",
	"overflow-x", "overflow-y",
}

// Viewport is the spec's required viewport; every engine is verified against it.
var Viewport = Size{Width: 800, Height: 600}

// Dump is one engine's geometry dump of one case.
type Dump struct {
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Viewport      Size   `json:"viewport"`
	Overflowed    bool   `json:"overflowed"`
	Nodes         []Node `json:"nodes"`

	// Screenshot and ScreenshotFile are additive to the spec, set only when the
	// request asked for "screenshot": a PNG of the 800x600 viewport taken right after
	// the walk, base64, or (oracle --screenshot-dir DIR) the path of the file holding it.
	Screenshot     string `json:"screenshot,omitempty"`
	ScreenshotFile string `json:"screenshot_file,omitempty"`
}

// Size is a viewport size in CSS pixels.
type Size struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Node is one element, in document order.
type Node struct {
	Index    int    `json:"index"`
	Parent   int    `json:"parent"`
	Tag      string `json:"tag"`
	Depth    int    `json:"depth"`
	Bounding Rect   `json:"bounding"`
	Rects    []Rect `json:"rects"`
	Style    Style  `json:"style"`
}

// Rect is a viewport-relative box in CSS pixels.
type Rect struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	W float64 `json:"w"`
	H float64 `json:"h"`
}

// Style maps each StyleProperties name to its getComputedStyle value.
// It marshals in the spec's order, so dumps are byte-stable.
type Style map[string]string

// MarshalJSON writes the spec's properties first, in order, then any others sorted.
func (s Style) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	write := func(k, v string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	known := make(map[string]bool, len(StyleProperties))
	for _, k := range StyleProperties {
		known[k] = true
		if v, ok := s[k]; ok {
			write(k, v)
		}
	}
	var extra []string
	for k := range s {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		write(k, s[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Invalid is a dump that breaks one of the spec's structural promises: Pointer is
// the JSON pointer of the offending value inside the dump ("/nodes/3/parent"), Rule
// names the promise ("parent precedes").
type Invalid struct {
	Pointer string
	Rule    string
	msg     string
}

func (e *Invalid) Error() string { return e.msg }

func invalid(pointer, rule, format string, a ...any) *Invalid {
	return &Invalid{Pointer: pointer, Rule: rule, msg: fmt.Sprintf(format, a...)}
}

// Validate checks the structural promises the spec makes about a dump, so that a
// consumer (the comparator, a candidate engine's output) can rely on them. The
// error is an *Invalid. The JSON Schema (dump/schema) says the rest: the fields, their
// types and ranges.
func (d *Dump) Validate() error {
	if d.Engine == "" {
		return invalid("/engine", "engine", "dump: missing engine")
	}
	if d.EngineVersion == "" {
		return invalid("/engine_version", "engine_version", "dump %s: missing engine_version", d.Engine)
	}
	if len(d.Nodes) == 0 {
		return invalid("/nodes", "root", "dump %s: no nodes (index 0 must be <html>)", d.Engine)
	}
	for i, n := range d.Nodes {
		at := fmt.Sprintf("/nodes/%d", i)
		if n.Index != i {
			return invalid(at+"/index", "index is position", "dump %s: node %d has index %d", d.Engine, i, n.Index)
		}
		if i == 0 {
			if n.Parent != -1 || n.Depth != 0 {
				return invalid(at, "root", "dump %s: root must have parent -1 and depth 0", d.Engine)
			}
			continue
		}
		if n.Parent < 0 || n.Parent >= i {
			return invalid(at+"/parent", "parent precedes", "dump %s: node %d has parent %d, which does not precede it", d.Engine, i, n.Parent)
		}
		if n.Depth != d.Nodes[n.Parent].Depth+1 {
			return invalid(at+"/depth", "depth", "dump %s: node %d has depth %d, parent's is %d", d.Engine, i, n.Depth, d.Nodes[n.Parent].Depth)
		}
	}
	return nil
}
