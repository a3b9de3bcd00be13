package reduce

import (
	"bytes"
	"context"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// doc is a variant parsed: the HTML tree and the script.
type doc struct {
	root   *html.Node
	script string
}

func parse(v Variant) (*doc, error) {
	root, err := html.Parse(strings.NewReader(v.HTML))
	if err != nil {
		return nil, err
	}
	return &doc{root: root, script: v.Script}, nil
}

// slot names a piece of text an edit can delete spans of: a node's text (attr
// -1), one of its attribute values (attr >= 0), or the request's script (nil node).
type slot struct {
	n    *html.Node
	attr int
}

var scriptSlot = slot{nil, -2}

type attrRef struct {
	n *html.Node
	i int
}

// edits is a set of applied units, rendered in one pass over the tree.
type edits struct {
	drop     map[*html.Node]bool
	unwrap   map[*html.Node]bool
	dropAttr map[attrRef]bool
	cut      map[slot][]span
}

func newEdits() *edits {
	return &edits{drop: map[*html.Node]bool{}, unwrap: map[*html.Node]bool{}, dropAttr: map[attrRef]bool{}, cut: map[slot][]span{}}
}

// render serializes the tree with e applied (nil: none).
func (d *doc) render(e *edits) (Variant, error) {
	if e == nil {
		e = newEdits()
	}
	var b bytes.Buffer
	for _, n := range clone(d.root, e) {
		if err := html.Render(&b, n); err != nil {
			return Variant{}, err
		}
	}
	return Variant{HTML: b.String(), Script: cutSpans(d.script, e.cut[scriptSlot])}, nil
}

// clone copies n with e applied: a dropped node is gone, an unwrapped one is
// replaced by its children.
func clone(n *html.Node, e *edits) []*html.Node {
	if e.drop[n] {
		return nil
	}
	var kids []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		kids = append(kids, clone(c, e)...)
	}
	if e.unwrap[n] {
		return kids
	}
	m := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace}
	if sp := e.cut[slot{n, -1}]; len(sp) > 0 {
		m.Data = cutSpans(n.Data, sp)
	}
	for i, a := range n.Attr {
		if e.dropAttr[attrRef{n, i}] {
			continue
		}
		if sp := e.cut[slot{n, i}]; len(sp) > 0 {
			a.Val = cutSpans(a.Val, sp)
		}
		m.Attr = append(m.Attr, a)
	}
	for _, k := range kids {
		m.AppendChild(k)
	}
	return []*html.Node{m}
}

// walk calls f on every node below root in tree order with its depth (root's
// children are depth 0).
func walk(root *html.Node, f func(n *html.Node, depth int)) {
	var rec func(n *html.Node, depth int)
	rec = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c, depth)
			rec(c, depth+1)
		}
	}
	rec(root, 0)
}

// rawText elements hold text the tokenizer does not parse as markup.
func rawText(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Style, atom.Script, atom.Textarea, atom.Title, atom.Xmp, atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript, atom.Plaintext:
		return true
	}
	return false
}

// domPass builds a pass from a function listing, on a parsed variant, the
// units of one level and how each applies to an edits.
func domPass(name string, levels func(d *doc) int, units func(d *doc, level int) []func(*edits)) pass {
	p := pass{name: name}
	if levels != nil {
		p.levels = func(v Variant) int {
			d, err := parse(v)
			if err != nil {
				return 0
			}
			return levels(d)
		}
	}
	p.units = func(v Variant, level int) (int, func([]bool) (Variant, bool)) {
		d, err := parse(v)
		if err != nil {
			return 0, nil
		}
		us := units(d, level)
		return len(us), func(applied []bool) (Variant, bool) {
			e := newEdits()
			for i, u := range us {
				if applied[i] {
					u(e)
				}
			}
			out, err := d.render(e)
			return out, err == nil
		}
	}
	return p
}

func depth(d *doc) int {
	m := 0
	walk(d.root, func(_ *html.Node, dep int) { m = max(m, dep+1) })
	return m
}

// domPasses run in this order: the tree (subtrees by level, then unwrapping,
// then attributes), CSS (rules, selectors, declarations, value components),
// then text words and script statements.
var domPasses = []pass{
	domPass("subtrees", depth, func(d *doc, level int) []func(*edits) {
		var us []func(*edits)
		walk(d.root, func(n *html.Node, dep int) {
			if dep == level && n.DataAtom != atom.Html {
				us = append(us, func(e *edits) { e.drop[n] = true })
			}
		})
		return us
	}),
	domPass("unwrap", nil, func(d *doc, _ int) []func(*edits) {
		var us []func(*edits)
		walk(d.root, func(n *html.Node, _ int) {
			if n.Type == html.ElementNode && n.FirstChild != nil && !rawText(n) &&
				n.DataAtom != atom.Html && n.DataAtom != atom.Head && n.DataAtom != atom.Body {
				us = append(us, func(e *edits) { e.unwrap[n] = true })
			}
		})
		return us
	}),
	domPass("attributes", nil, func(d *doc, _ int) []func(*edits) {
		var us []func(*edits)
		walk(d.root, func(n *html.Node, _ int) {
			for i := range n.Attr {
				us = append(us, func(e *edits) { e.dropAttr[attrRef{n, i}] = true })
			}
		})
		return us
	}),
	textPass("css rules", func(s slot, text string) []span { return cssUnits(s, text).rules }),
	textPass("css selectors", func(s slot, text string) []span { return cssUnits(s, text).selectors }),
	textPass("css declarations", func(s slot, text string) []span { return cssUnits(s, text).decls }),
	textPass("css values", func(s slot, text string) []span { return cssUnits(s, text).values }),
	textPass("text", func(s slot, text string) []span {
		switch {
		case s.n == nil:
		case s.attr >= 0 && s.n.Attr[s.attr].Key == "class":
			return words(text)
		case s.attr == -1 && s.n.Type == html.TextNode && (s.n.Parent == nil || !rawText(s.n.Parent)):
			return words(text)
		}
		return nil
	}),
	textPass("script", func(s slot, text string) []span {
		if s == scriptSlot || (s.attr == -1 && s.n.Type == html.TextNode && s.n.Parent != nil && s.n.Parent.DataAtom == atom.Script) {
			return statements(text)
		}
		return nil
	}),
}

// textPass is a pass whose units are spans of text to delete, found per slot.
func textPass(name string, find func(s slot, text string) []span) pass {
	return domPass(name, nil, func(d *doc, _ int) []func(*edits) {
		var us []func(*edits)
		add := func(s slot, text string) {
			for _, sp := range find(s, text) {
				us = append(us, func(e *edits) { e.cut[s] = append(e.cut[s], sp) })
			}
		}
		walk(d.root, func(n *html.Node, _ int) {
			if n.Type == html.TextNode {
				add(slot{n, -1}, n.Data)
			}
			for i, a := range n.Attr {
				add(slot{n, i}, a.Val)
			}
		})
		add(scriptSlot, d.script)
		return us
	})
}

// cssUnits finds the CSS spans of a slot: a <style> element's text, or a style
// attribute's declarations.
func cssUnits(s slot, text string) cssSpans {
	switch {
	case s.n == nil:
	case s.attr == -1 && s.n.Type == html.TextNode && s.n.Parent != nil && s.n.Parent.DataAtom == atom.Style:
		return scanCSS(text, false)
	case s.attr >= 0 && s.n.Attr[s.attr].Namespace == "" && s.n.Attr[s.attr].Key == "style":
		return scanCSS(text, true)
	}
	return cssSpans{}
}

// rawPasses reduce a case whose parsed-and-serialized form is not interesting:
// its lines, then the script's statements.
var rawPasses = []pass{
	{name: "lines", units: func(v Variant, _ int) (int, func([]bool) (Variant, bool)) {
		spans := lines(v.HTML)
		return len(spans), func(applied []bool) (Variant, bool) {
			return Variant{HTML: cutSpans(v.HTML, pick(spans, applied)), Script: v.Script}, true
		}
	}},
	{name: "script", units: func(v Variant, _ int) (int, func([]bool) (Variant, bool)) {
		spans := statements(v.Script)
		return len(spans), func(applied []bool) (Variant, bool) {
			return Variant{HTML: v.HTML, Script: cutSpans(v.Script, pick(spans, applied))}, true
		}
	}},
}

func pick(spans []span, applied []bool) []span {
	var out []span
	for i, sp := range spans {
		if applied[i] {
			out = append(out, sp)
		}
	}
	return out
}

// trimImplied tries the document without the tags the parser implies anyway
// (<html>, <head>, <body> and their end tags), one variant.
func (r *reducer) trimImplied(ctx context.Context) {
	h := r.best.HTML
	for _, t := range []string{"<html>", "</html>", "<head></head>", "<head>", "</head>", "<body>", "</body>"} {
		h = strings.Replace(h, t, "", 1)
	}
	v := Variant{HTML: h, Script: r.best.Script}
	if v.Size() < r.best.Size() && r.eval(ctx, []Variant{v})[0] {
		r.best = v
	}
}
