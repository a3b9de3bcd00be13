package inert

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestInertCases(t *testing.T) {
	for _, c := range []string{
		``,
		`<!doctype html><div style="width:100px;height:50px"></div>`,
		`<style>div { display: flex } .a > p:hover { width: 3em }</style><div class=a><p>x</p><p>y</p></div>`,
		`<table border=1 cellpadding=2><tr><td colspan=2>a<td>b</table>`,
		`<!doctype html><meta charset=utf-8><title>t</title><link rel=help href="https://drafts.csswg.org/"><meta name=assert content="a < b">`,
		`<svg width=100 height=100><rect x=1 y=2 width=3 height=4 fill=red /><text>hi</text></svg>`,
		`<math><mfrac><mi>x</mi><mn>2</mn></mfrac></math>`,
		`<my-element data-x=1 aria-label=y>text</my-element>`,
		`<input type=text value=5><select><option selected>a</select><textarea>a &lt; b</textarea>`,
		`<!-- a comment --><p>a < b and c > d</p>`,
		`<details open><summary>s</summary>x</details><dialog open>d</dialog>`,
		`<style><![CDATA[ p { color: red } ]]></style><link rel="reviewer" href="x"><p>x</p>`,
	} {
		if ok, why := Check(c); !ok {
			t.Errorf("Check(%q) = not inert (%s), want inert", c, why)
		}
	}
}

func TestCasesThatCanRunScriptOrReachPastTheirDocument(t *testing.T) {
	for _, c := range []string{
		`<script>x=1</script>`,
		`<SCRIPT>x=1</SCRIPT>`,
		`<div><svg><script>x=1</script></svg></div>`,
		`<svg><ScRiPt href=data:,x=1 /></svg>`,
		`<math><mi><script>1</script></mi></math>`,
		`<body onload="x=1">`,
		`<div onclick=x()>`,
		`<svg onload=x()></svg>`,
		`<svg><rect onmouseover=x() /></svg>`,
		`<svg><a href="javascript:x()"><rect /></a></svg>`,
		`<svg><set attributeName=href to="javascript:x()" /></svg>`,
		`<svg><animate attributeName=x /></svg>`,
		`<svg><use xlink:href="#a" /></svg>`,
		`<svg><image href="x.png" /></svg>`,
		`<a href="javascript:x()">a</a>`,
		`<a href="/elsewhere">a</a>`,
		`<iframe srcdoc="<script>x=1</script>"></iframe>`,
		`<iframe></iframe>`,
		`<frameset><frame></frameset>`,
		`<object data=x></object>`,
		`<embed src=x>`,
		`<img src=x.png>`,
		`<video autoplay></video>`,
		`<meta http-equiv=refresh content="0;url=javascript:x()">`,
		`<meta http-equiv=Content-Security-Policy content="default-src 'none'">`,
		`<meta name=referrer content=no-referrer>`,
		`<meta name=color-scheme content=dark>`,
		`<base href="http://x/">`,
		`<link rel=stylesheet href=x.css>`,
		`<link rel=preload href=x as=script>`,
		`<input autofocus>`,
		`<input type=image src=x>`,
		`<form action="javascript:x()"><button>b</button></form>`,
		`<div is=x-y></div>`,
		`<marquee>m</marquee>`,
		`<noscript><p>x</p></noscript>`,
		`<plaintext><script>`,
		`<xmp><script>x</script></xmp>`,
		`<unknownthing></unknownthing>`,
		`<!-- x --!><script>x=1</script>-->`,
		`<!-- <script>x=1</script> -->`,
		`<style></style ><script>x=1</script>`,
		`<style>p{}</style><title><script>x</script></title>`,
		`<textarea></textarea><script>x=1</script>`,
		`<math><annotation-xml encoding="text/html"><p>x</p></annotation-xml></math>`,
		`<math><maction actiontype=toggle><mi>x</mi></maction></math>`,
		`<div style="x" xml:base="http://x/"></div>`,
		`<p>x</p><sCript`,
		`<p>x</p><!-- <script>`,
		strings.Repeat("<p>x</p>", maxBytes/8+1),
		`<div><template shadowrootmode=open><p>x</p></template></div>`,
	} {
		if ok, _ := Check(c); ok {
			t.Errorf("Check(%q) = inert, want not", c)
		}
	}
}

// FuzzCheck: Check never panics, and markup it calls inert, parsed again as a
// fragment in a <body> (the tree builder in another state, as a cross-check of the
// walk: not of the engines), holds no element or attribute the allowlists lack.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`<div style="width:1px"></div>`, `<svg><script>1</script></svg>`,
		`<!-- --!><script>`, `<p onclick=1>`, `<style>a{}</style>`, `<?x><!x>`, `<math><mi>`,
		`<svg <sCript00>`, `<table><td><svg><p>`} {
		f.Add(s)
	}
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	f.Fuzz(func(t *testing.T, s string) {
		ok, _ := Check(s)
		if !ok {
			return
		}
		nodes, err := html.ParseFragment(strings.NewReader(s), body)
		if err != nil {
			return
		}
		for _, n := range nodes {
			if ok, why := walk(n); !ok {
				t.Fatalf("Check(%q) is inert, but as a fragment: %s", s, why)
			}
		}
	})
}

// The hostile vectors: x/net/html's tokenizer switches to raw text on a start tag
// its tree builder then ignores ("in column group"), so what follows is dropped text
// to it and markup to an engine. Each was called inert before.
func TestARawTextStartTagTheTreeDoesNotHoldIsNotInert(t *testing.T) {
	const tail = `<img src=x onerror="Object.defineProperty(DOMRectReadOnly.prototype,'width',{get(){return 4242}})">`
	for _, tag := range []string{"noscript", "plaintext", "xmp", "script", "noembed", "iframe", "noframes", "style", "title", "textarea", "NoScript"} {
		c := `<div><template><col><` + tag + `></template>` + tail
		if ok, _ := Check(c); ok {
			t.Errorf("Check(%q) = inert, want not", c)
		}
	}
	// A <style> x/net/html's tokenizer reads as raw text (svg) must not hide the tag.
	c := `<svg><style><table><col><noscript></style></svg>` + tail
	if ok, _ := Check(c); ok {
		t.Errorf("Check(%q) = inert, want not", c)
	}
	// Held raw-text elements stay inert.
	for _, c := range []string{`<style>p{}</style><title>t</title><textarea>x</textarea>`, `<svg><style>rect{}</style><title>x</title></svg>`} {
		if ok, why := Check(c); !ok {
			t.Errorf("Check(%q) = not inert (%s), want inert", c, why)
		}
	}
}

func TestJudgeKeysAreTheTreeTheClassifierAllowed(t *testing.T) {
	keys, why := Judge(`<link rel=help href=x><svg viewBox="0 0 1 1" xml:lang=en><linearGradient/></svg><input type=text class=a>`)
	require.Empty(t, why)
	for _, k := range []string{"e html html", "e html head", "e html body", "e html link", "a html link rel=help",
		"a html link href", "e svg svg", "a svg svg viewBox", "a svg svg xml:lang", "e svg linearGradient",
		"e html input", "a html input type=text", "a html input class"} {
		assert.Contains(t, keys, k)
	}
	assert.True(t, slices.IsSorted(keys))
	keys, why = Judge(`<script>1</script>`)
	assert.Nil(t, keys)
	assert.NotEmpty(t, why)
}

// BenchmarkJudge: the classifier's cost per case, on a generated-size inert case.
func BenchmarkJudge(b *testing.B) {
	c := `<!doctype html><style>html,body{margin:0}</style>` + strings.Repeat(`<div class=a style="width:10px;padding:2px"><span>lorem ipsum</span><table><tr><td colspan=2>x</td></tr></table></div>`, 20)
	for b.Loop() {
		if keys, _ := Judge(c); keys == nil {
			b.Fatal("not inert")
		}
	}
}
