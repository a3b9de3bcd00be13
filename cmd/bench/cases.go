package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// benchCase is one generated geometry request: the same html (and script) goes to
// every way the benchmark measures.
type benchCase struct {
	ID     string `json:"id"`
	HTML   string `json:"html"`
	Script string `json:"script,omitempty"`
	Kind   string `json:"-"` // which generator made it, for the record only
}

// caseKinds are the generators, cycled by index so every kind appears in every run of
// at least len(caseKinds) cases, and chosen in proportion: mostly markup-only cases
// (the common load, one round trip each), a few with a script (which cost the oracle
// a page reset afterwards).
var caseKinds = []struct {
	name string
	gen  func(r *rand.Rand, b *strings.Builder) (script string)
}{
	{"blocks", genBlocks},
	{"inline", genInline},
	{"flex", genFlex},
	{"table", genTable},
	{"blocks", genBlocks},
	{"inline", genInline},
	{"flex", genFlex},
	{"table", genTable},
	{"mixed", genMixed},
	{"script", genScript}, // 1 in 10
}

// generateCases returns n deterministic cases: the same seed and n always give the
// same cases, byte for byte, and a prefix of a longer run is the shorter run.
func generateCases(seed uint64, n int) []benchCase {
	out := make([]benchCase, n)
	for i := range out {
		out[i] = generateCase(seed, i)
	}
	return out
}

// generateCase is case i of the seed's sequence; each case has its own generator state,
// so case i does not depend on how many cases came before it.
func generateCase(seed uint64, i int) benchCase {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	k := caseKinds[i%len(caseKinds)]
	var b strings.Builder
	b.WriteString("<!doctype html><style>html,body{margin:0}body{font:16px/1.25 'DejaVu Sans',sans-serif}</style>")
	script := k.gen(r, &b)
	return benchCase{ID: fmt.Sprintf("b%05d", i), HTML: b.String(), Script: script, Kind: k.name}
}

var words = strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua")

func text(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

func px(r *rand.Rand, lo, hi int) string { return fmt.Sprintf("%dpx", lo+r.IntN(hi-lo+1)) }

func pick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

// boxStyle is a random but always-valid block box: width, height or auto, padding,
// border and margin, sometimes box-sizing and overflow.
func boxStyle(r *rand.Rand) string {
	var s []string
	if r.IntN(3) > 0 {
		s = append(s, "width:"+pick(r, px(r, 20, 300), fmt.Sprintf("%d%%", 10+r.IntN(90)), "auto"))
	}
	if r.IntN(2) == 0 {
		s = append(s, "height:"+px(r, 5, 80))
	}
	s = append(s, "padding:"+px(r, 0, 12)+" "+px(r, 0, 12))
	if r.IntN(2) == 0 {
		s = append(s, "border:"+px(r, 1, 5)+" solid")
	}
	s = append(s, "margin:"+px(r, 0, 16)+" "+pick(r, px(r, 0, 20), "auto"))
	if r.IntN(4) == 0 {
		s = append(s, "box-sizing:border-box")
	}
	if r.IntN(6) == 0 {
		s = append(s, "overflow:hidden")
	}
	if r.IntN(8) == 0 {
		s = append(s, "float:"+pick(r, "left", "right"))
	}
	return strings.Join(s, ";")
}

// genBlocks nests block boxes a few levels deep.
func genBlocks(r *rand.Rand, b *strings.Builder) string {
	var nest func(depth int)
	nest = func(depth int) {
		for i, n := 0, 1+r.IntN(3); i < n; i++ {
			fmt.Fprintf(b, `<div style="%s">`, boxStyle(r))
			if depth < 3 && r.IntN(2) == 0 {
				nest(depth + 1)
			} else if r.IntN(2) == 0 {
				b.WriteString(text(r, 1+r.IntN(6)))
			}
			b.WriteString("</div>")
		}
	}
	nest(0)
	return ""
}

// genInline is paragraphs of text with inline elements that fragment across lines.
func genInline(r *rand.Rand, b *strings.Builder) string {
	fmt.Fprintf(b, `<div style="width:%s">`, px(r, 120, 500))
	for i, n := 0, 1+r.IntN(3); i < n; i++ {
		b.WriteString("<p>")
		for j, m := 0, 2+r.IntN(5); j < m; j++ {
			tag := pick(r, "span", "b", "i", "em", "code", "a")
			fmt.Fprintf(b, `%s <%s style="padding:0 %s;border-left:%s solid">%s</%s> `,
				text(r, 1+r.IntN(4)), tag, px(r, 0, 6), px(r, 0, 3), text(r, 1+r.IntN(8)), tag)
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(b, `<span style="display:inline-block;width:%s;height:%s;vertical-align:%s"></span>`,
				px(r, 10, 80), px(r, 10, 40), pick(r, "baseline", "middle", "top", "bottom"))
		}
		b.WriteString("</p>")
	}
	b.WriteString("</div>")
	return ""
}

// genFlex is a flex container with items of varied basis, grow and shrink.
func genFlex(r *rand.Rand, b *strings.Builder) string {
	fmt.Fprintf(b, `<div style="display:flex;flex-direction:%s;flex-wrap:%s;justify-content:%s;align-items:%s;width:%s;gap:%s">`,
		pick(r, "row", "row", "column", "row-reverse"), pick(r, "nowrap", "wrap"),
		pick(r, "flex-start", "center", "space-between", "space-around"),
		pick(r, "stretch", "flex-start", "center", "baseline"), px(r, 200, 780), px(r, 0, 10))
	for i, n := 0, 2+r.IntN(6); i < n; i++ {
		fmt.Fprintf(b, `<div style="flex:%d %d %s;min-width:0;padding:%s;height:%s">%s</div>`,
			r.IntN(3), r.IntN(3), pick(r, "auto", "0", px(r, 20, 160)), px(r, 0, 8),
			pick(r, "auto", px(r, 10, 60)), text(r, r.IntN(5)))
	}
	b.WriteString("</div>")
	return ""
}

// genTable is a table with a header, varied cell content and sometimes spans.
func genTable(r *rand.Rand, b *strings.Builder) string {
	cols, rows := 2+r.IntN(4), 2+r.IntN(5)
	fmt.Fprintf(b, `<table style="border-collapse:%s;border-spacing:%s;width:%s" border=1>`,
		pick(r, "separate", "collapse"), px(r, 0, 4), pick(r, "auto", px(r, 200, 700)))
	b.WriteString("<thead><tr>")
	for c := 0; c < cols; c++ {
		fmt.Fprintf(b, "<th>%s</th>", text(r, 1))
	}
	b.WriteString("</tr></thead><tbody>")
	for row := 0; row < rows; row++ {
		b.WriteString("<tr>")
		for c := 0; c < cols; c++ {
			if c == 0 && r.IntN(5) == 0 && cols > 2 {
				fmt.Fprintf(b, `<td colspan=2 style="padding:%s">%s</td>`, px(r, 0, 8), text(r, 1+r.IntN(4)))
				c++
				continue
			}
			fmt.Fprintf(b, `<td style="padding:%s;vertical-align:%s">%s</td>`, px(r, 0, 8),
				pick(r, "top", "middle", "bottom"), text(r, r.IntN(6)))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	return ""
}

// genMixed is a page: positioned header, floats beside text, a list.
func genMixed(r *rand.Rand, b *strings.Builder) string {
	fmt.Fprintf(b, `<header style="position:relative;top:%s;left:%s;height:%s;padding:4px">%s</header>`,
		px(r, 0, 10), px(r, 0, 10), px(r, 20, 50), text(r, 3))
	fmt.Fprintf(b, `<main style="width:%s"><div style="float:left;width:%s;height:%s;margin-right:8px"></div><p>%s</p><ul>`,
		px(r, 300, 700), px(r, 40, 150), px(r, 30, 120), text(r, 10+r.IntN(30)))
	for i, n := 0, 1+r.IntN(5); i < n; i++ {
		fmt.Fprintf(b, "<li>%s</li>", text(r, 1+r.IntN(6)))
	}
	b.WriteString("</ul></main>")
	return ""
}

// genScript is block markup plus a script that mutates the tree before the walk: the
// oracle resets the page after such a case.
func genScript(r *rand.Rand, b *strings.Builder) string {
	fmt.Fprintf(b, `<div id=root style="width:%s">`, px(r, 200, 600))
	genBlocks(r, b)
	b.WriteString("</div>")
	n := 1 + r.IntN(8)
	return fmt.Sprintf(`var root = document.getElementById('root');
for (var i = 0; i < %d; i++) {
  var d = document.createElement(i %% 2 ? 'span' : 'div');
  d.style.cssText = 'display:%s;width:' + (10 + i * %d) + 'px;height:%s;margin:2px';
  d.textContent = 'item ' + i;
  root.appendChild(d);
}
if (root.firstElementChild) root.firstElementChild.style.padding = '%s';`,
		n, pick(r, "block", "inline-block", "flex"), 3+r.IntN(20), px(r, 5, 30), px(r, 0, 10))
}
