package compare

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
)

// page is HTML > BODY > [P, DIV x10] with P > [SPAN, SPAN] (text-only spans), laid
// out as a block flow: style.width/height hold the used sizes, as getComputedStyle's
// resolved values do. grow(i, dw, dh) then re-lays it out.
type page struct{ d *dump.Dump }

func newPage(engine string) *page {
	nodes := []spec{
		{-1, "HTML", 0, 0, 800, 0},
		{0, "BODY", 0, 0, 800, 0},
		{1, "P", 0, 0, 800, 20},
		{2, "SPAN", 0, 0, 30, 20},
		{2, "SPAN", 30, 0, 40, 20},
	}
	for k := 0; k < 10; k++ {
		nodes = append(nodes, spec{1, "DIV", 0, 0, 800, 10})
	}
	p := &page{build(engine, nodes...)}
	p.d.Nodes[3].Style["display"] = "inline"
	p.d.Nodes[4].Style["display"] = "inline"
	p.layout()
	return p
}

// layout stacks BODY's children vertically, places the spans on one line, sizes
// HTML and BODY to their content, and writes sizes into rects and style.
func (p *page) layout() {
	n := p.d.Nodes
	y := 0.0
	for i := 2; i < len(n); i++ {
		if n[i].Parent != 1 {
			continue
		}
		n[i].Bounding.Y = y
		y += n[i].Bounding.H
	}
	n[3].Bounding.Y, n[4].Bounding.Y = n[2].Bounding.Y, n[2].Bounding.Y
	n[4].Bounding.X = n[3].Bounding.X + n[3].Bounding.W
	n[0].Bounding.H, n[1].Bounding.H = y, y
	for i := range n {
		n[i].Rects = []dump.Rect{n[i].Bounding}
		n[i].Style["width"] = fmt.Sprintf("%gpx", n[i].Bounding.W)
		n[i].Style["height"] = fmt.Sprintf("%gpx", n[i].Bounding.H)
	}
}

func (p *page) grow(i int, dw, dh float64) *page {
	p.d.Nodes[i].Bounding.W += dw
	p.d.Nodes[i].Bounding.H += dh
	p.layout()
	return p
}

// causesOf runs NodeOutcomes and checks the invariant: the causes' Explains sum to
// the non-unanimous items, and each item is listed by exactly one cause.
func causesOf(t *testing.T, oracle map[string]*dump.Dump, got *dump.Dump) []Cause {
	t.Helper()
	out, err := NodeOutcomes(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	items := map[ItemRef]int{}
	for _, n := range out.Nodes {
		for _, it := range n.Items {
			items[ItemRef{n.Node, it.Property}]++
		}
	}
	sum := 0
	for _, c := range out.Causes {
		assert.Len(t, c.Items, c.Explains)
		sum += c.Explains
		for _, it := range c.Items {
			if it.Property != "shape" {
				items[it]--
			}
		}
	}
	for it, n := range items {
		assert.Zero(t, n, "item %v attributed %d times too few", it, n)
	}
	if out.ShapeOutlier == "" && out.Shape == nil {
		assert.Equal(t, len(items), sum, "explains sum to the non-unanimous items")
	}
	return out.Causes
}

func threePages() (map[string]*dump.Dump, map[string]*page) {
	p := map[string]*page{"chromium": newPage("chromium"), "firefox": newPage("firefox"), "webkit": newPage("webkit")}
	return map[string]*dump.Dump{"chromium": p["chromium"].d, "firefox": p["firefox"].d, "webkit": p["webkit"].d}, p
}

func TestCausesTallerParagraphIsOneCause(t *testing.T) {
	oracle, p := threePages()
	p["firefox"].grow(2, 0, 20) // P 20px taller: ten DIVs move, BODY and HTML grow
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 1, "%+v", cs)
	c := cs[0]
	assert.Equal(t, 2, c.Node)
	assert.Equal(t, "HTML>BODY>P", c.Path)
	assert.Equal(t, CauseLayout, c.Kind)
	assert.Equal(t, []string{"firefox"}, c.Engines)
	// P's bounding.h, rects[0].h, style.height; the same on BODY and HTML; ten offset.y.
	assert.Equal(t, 19, c.Explains)
	assert.Equal(t, ItemRef{2, "bounding.h"}, c.Items[0], "the cause's own item first")
	assert.Equal(t, "firefox layout at HTML>BODY>P", c.Label())
}

func TestCausesDisplayIsStyle(t *testing.T) {
	oracle, p := threePages()
	p["webkit"].d.Nodes[2].Style["display"] = "flow-root"
	p["webkit"].grow(2, 0, 5)
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 1, "%+v", cs)
	assert.Equal(t, CauseStyle, cs[0].Kind)
	assert.Equal(t, 2, cs[0].Node)
	assert.Equal(t, []string{"webkit"}, cs[0].Engines)
}

func TestCausesGlyphWidthIsText(t *testing.T) {
	oracle, p := threePages()
	p["firefox"].grow(3, 5, 0) // the first span's text 5px wider: the second moves right
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 1, "%+v", cs)
	c := cs[0]
	assert.Equal(t, CauseText, c.Kind)
	assert.Equal(t, "HTML>BODY>P>SPAN[1]", c.Path)
	assert.Contains(t, c.Items, ItemRef{4, "offset.x"})
}

func TestCausesTwoIndependentRoots(t *testing.T) {
	oracle, p := threePages()
	p["firefox"].grow(4, 3, 0)  // the second span's text wider
	p["webkit"].grow(7, 0, 10)  // the third DIV taller
	p["webkit"].grow(14, 0, 10) // the last DIV taller
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 3, "%+v", cs)
	assert.Equal(t, "firefox text at HTML>BODY>P>SPAN[2]", cs[0].Label())
	assert.Equal(t, "webkit layout at HTML>BODY>DIV[3]", cs[1].Label())
	assert.Equal(t, "webkit layout at HTML>BODY>DIV[10]", cs[2].Label())
	// DIV[3]: its h, rects h, style.height, seven DIVs' offset.y; BODY's and HTML's
	// heights are explained by DIV[3] too, the first taller descendant.
	assert.Equal(t, 3+7+6, cs[1].Explains)
	assert.Equal(t, 3, cs[2].Explains, "%v", cs[2].Items)
}

func TestCausesCandidateFailures(t *testing.T) {
	oracle, _ := threePages()
	got := newPage("candidate").grow(2, 0, 20).d
	cs := causesOf(t, oracle, got)
	require.Len(t, cs, 1, "%+v", cs)
	assert.Equal(t, []string{"candidate"}, cs[0].Engines)
	assert.Equal(t, 19, cs[0].Explains)

	r, err := Geometry(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Equal(t, cs, r.Causes, "Geometry carries the same causes")
}

func TestCausesSplit(t *testing.T) {
	oracle, p := threePages()
	p["firefox"].grow(2, 0, 10)
	p["webkit"].grow(2, 0, 20)
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 1, "%+v", cs)
	assert.True(t, cs[0].Split)
	assert.Equal(t, []string{"chromium", "firefox", "webkit"}, cs[0].Engines)
}

func TestCausesShapeOutlier(t *testing.T) {
	oracle, p := threePages()
	d := p["webkit"].d
	d.Nodes[5].Tag = "SECTION"
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 1, "%+v", cs)
	assert.Equal(t, Cause{Node: 5, Tag: "DIV", Path: "HTML>BODY>DIV[1]", Kind: CauseShape, Engines: []string{"webkit"},
		Items: []ItemRef{{5, "shape"}}, Explains: 1}, cs[0])
}

func TestCausesNoneWhenUnanimous(t *testing.T) {
	oracle, _ := threePages()
	assert.Empty(t, causesOf(t, oracle, nil))
	r, err := Geometry(oracle, nil, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Nil(t, r.Causes)
}

// A resolved length one layout unit off ("64.0156px", Blink's 1/64 px) is the
// same value within the geometry tolerance, not a style-pipeline difference;
// any other style value still compares exactly.
func TestStyleLengthsWithinTolerance(t *testing.T) {
	assert.True(t, StyleEqual("64.0156px", "64px", dump.DefaultTolerance))
	assert.False(t, StyleEqual("64.5px", "64px", dump.DefaultTolerance))
	assert.False(t, StyleEqual("block", "flow-root", dump.DefaultTolerance))
	assert.False(t, StyleEqual("64px", "auto", dump.DefaultTolerance))
	assert.False(t, StyleEqual("1e400px", "1e400px ", dump.DefaultTolerance))

	oracle, p := threePages()
	p["chromium"].d.Nodes[5].Style["margin-top"] = "0.0156px"
	r, err := Geometry(oracle, nil, dump.DefaultTolerance)
	require.NoError(t, err)
	assert.Empty(t, r.Outliers)
	assert.Empty(t, causesOf(t, oracle, nil))
}

// Block widths flow down: a narrower BODY narrows every block in it, one cause.
func TestCausesNarrowerContainerIsOneCause(t *testing.T) {
	oracle, p := threePages()
	n := p["firefox"].d.Nodes
	for i := 1; i < len(n); i++ {
		if n[i].Tag != "SPAN" {
			n[i].Bounding.W -= 20
		}
	}
	p["firefox"].layout()
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 1, "%+v", cs)
	assert.Equal(t, "firefox layout at HTML>BODY", cs[0].Label())
	assert.Equal(t, 3*12, cs[0].Explains, "w, rects[0].w and style.width of BODY, P and ten DIVs")
}

// In a vertical writing mode the inline axis is the height: a text-only box taller
// there is text, and wider is layout.
func TestCausesTextAxisFollowsWritingMode(t *testing.T) {
	oracle, p := threePages()
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		p[e].d.Nodes[3].Style["writing-mode"] = "vertical-rl"
	}
	p["firefox"].d.Nodes[3].Bounding.H += 4
	p["firefox"].layout()
	cs := causesOf(t, oracle, nil)
	require.NotEmpty(t, cs)
	assert.Equal(t, "firefox text at HTML>BODY>P>SPAN[1]", cs[0].Label())

	oracle, p = threePages()
	p["webkit"].d.Nodes[3].Style["writing-mode"] = "vertical-rl"
	cs = causesOf(t, oracle, nil)
	require.Len(t, cs, 1)
	assert.Equal(t, "webkit style at HTML>BODY>P>SPAN[1]", cs[0].Label())
}

// Explanations can loop: a shrink-to-fit box's width comes from its child's, the
// child's from its own margin, and a (percentage) margin from the parent's width.
// The loop's style item is the root, and nothing is lost.
func TestCausesLoopHasOneRoot(t *testing.T) {
	oracle := map[string]*dump.Dump{}
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		w := 0.0
		if e == "firefox" {
			w = 10
		}
		d := build(e, spec{-1, "HTML", 0, 0, 800, 50}, spec{0, "BODY", 0, 0, 800, 50},
			spec{1, "DIV", 0, 0, 100 + w, 50}, spec{2, "P", w, 0, 100 + w, 50})
		d.Nodes[2].Style["display"] = "inline-block"
		d.Nodes[3].Style["margin-left"] = fmt.Sprintf("%gpx", w)
		oracle[e] = d
	}
	cs := causesOf(t, oracle, nil)
	require.Len(t, cs, 1, "%+v", cs)
	assert.Equal(t, "firefox style at HTML>BODY>DIV>P", cs[0].Label())
	assert.Equal(t, ItemRef{3, "style.margin-left"}, cs[0].Items[0])
	assert.Equal(t, 6, cs[0].Explains, "DIV's w and rects w; P's w, rects w, offset.x, margin-left")
}

// realAnswer reads the oracle answer in testdata/compare/oracle-paragraphs.ndjson:
// the three real engines' dumps of three paragraphs in blocks (written by bin/oracle).
// Firefox's paragraphs are 1px taller than Chromium's and WebKit's there.
func realAnswer(t *testing.T) map[string]*dump.Dump {
	t.Helper()
	b, err := os.ReadFile("../testdata/compare/oracle-paragraphs.ndjson")
	require.NoError(t, err)
	var resp struct {
		Dumps map[string]*dump.Dump `json:"dumps"`
	}
	require.NoError(t, json.Unmarshal(b, &resp))
	require.Len(t, resp.Dumps, 3)
	return resp.Dumps
}

// copyAs is a deep copy of d named engine: a candidate made from a real dump.
func copyAs(t *testing.T, d *dump.Dump, engine string) *dump.Dump {
	t.Helper()
	b, err := json.Marshal(d)
	require.NoError(t, err)
	var got dump.Dump
	require.NoError(t, json.Unmarshal(b, &got))
	got.Engine = engine
	return &got
}

// tallerTag makes every box tagged tag dh px taller in d, as a block flow would:
// its ancestors grow by as much and every later box moves down.
func tallerTag(d *dump.Dump, tag string, dh float64) {
	end := subtreeEnds(d)
	for i := range d.Nodes {
		if d.Nodes[i].Tag != tag {
			continue
		}
		for m := range d.Nodes {
			n := &d.Nodes[m]
			anc := m < i && i <= end[m]
			switch {
			case m == i || anc:
				n.Bounding.H += dh
				for r := range n.Rects {
					n.Rects[r].H += dh
				}
				n.Style["height"] = fmt.Sprintf("%gpx", n.Bounding.H)
			case m > end[i]:
				n.Bounding.Y += dh
				for r := range n.Rects {
					n.Rects[r].Y += dh
				}
			}
		}
	}
}

// Style does not swallow geometry: a candidate that reports another writing-mode
// on every node (as QtWebKit reports "lr-tb") and has every P 3px taller still
// shows the P's height as a cause of its own. A unit test of Attribute over real
// dumps: the candidate is Chromium's real dump, edited by the test.
func TestCausesStyleDoesNotSwallowGeometry(t *testing.T) {
	oracle := realAnswer(t)
	got := copyAs(t, oracle["chromium"], "candidate")
	for i := range got.Nodes {
		got.Nodes[i].Style["writing-mode"] = "lr-tb"
	}
	tallerTag(got, "P", 3)
	r, err := Geometry(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	var pHeight, wm []Cause
	for _, c := range r.Causes {
		if !slices.Contains(c.Engines, "candidate") {
			continue
		}
		if c.Tag == "P" && c.Kind == CauseLayout && c.Items[0].Property == "bounding.h" {
			pHeight = append(pHeight, c)
		}
		if c.Kind == CauseStyle {
			wm = append(wm, c)
		}
	}
	assert.Len(t, pHeight, 3, "each P's height is a cause of its own: %+v", r.Causes)
	require.Len(t, wm, 1, "one writing-mode cause, at the root: %+v", r.Causes)
	assert.Equal(t, "HTML", wm[0].Tag)
	for _, it := range wm[0].Items {
		assert.Equal(t, "style.writing-mode", it.Property, "the root's writing-mode explains no geometry")
	}
}

// A vertical margin moves a box but does not size it: a P whose margin and height
// are both wrong (two defects on one box) has a style cause and a layout cause.
// A unit test of Attribute over real dumps, the candidate edited from Chromium's.
func TestCausesMarginDoesNotExplainHeight(t *testing.T) {
	oracle := realAnswer(t)
	got := copyAs(t, oracle["chromium"], "candidate")
	for i := range got.Nodes {
		if got.Nodes[i].Tag == "P" {
			got.Nodes[i].Style["margin-top"] = "7px"
		}
	}
	tallerTag(got, "P", 3)
	r, err := Geometry(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	kinds := map[CauseKind]int{}
	for _, c := range r.Causes {
		if c.Tag == "P" && slices.Contains(c.Engines, "candidate") {
			kinds[c.Kind]++
			if c.Kind == CauseLayout {
				assert.Equal(t, "bounding.h", c.Items[0].Property)
			}
		}
	}
	assert.Equal(t, map[CauseKind]int{CauseStyle: 3, CauseLayout: 3}, kinds, "%+v", r.Causes)
}

// A padding is explained by an ancestor's width only when it can be a percentage
// of it (the differing side's ratio is the majority's): a P given 3px of padding
// where the engines have none stays a cause of its own though its DIV is wider.
// A unit test of Attribute over real dumps, the candidate edited from Chromium's.
func TestCausesPaddingIsAPercentageOnlyInProportion(t *testing.T) {
	oracle := realAnswer(t)
	got := copyAs(t, oracle["chromium"], "candidate")
	div, p := -1, -1
	for i, n := range got.Nodes {
		if n.Tag == "DIV" && div < 0 {
			div = i
		}
		if n.Tag == "P" && p < 0 {
			p = i
		}
	}
	require.True(t, div >= 0 && p > div)
	got.Nodes[div].Bounding.W += 10
	got.Nodes[div].Rects[0].W += 10
	got.Nodes[div].Style["width"] = fmt.Sprintf("%gpx", got.Nodes[div].Bounding.W)
	got.Nodes[p].Style["padding-left"] = "3px"
	r, err := Geometry(oracle, got, dump.DefaultTolerance)
	require.NoError(t, err)
	var labels []string
	for _, c := range r.Causes {
		labels = append(labels, fmt.Sprintf("%s %s", c.Tag, c.Kind))
	}
	assert.Contains(t, labels, "P style", "%+v", r.Causes)
	assert.Contains(t, labels, "DIV layout", "%+v", r.Causes)
}
