package main

import (
	"fmt"
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
)

// refAnswer is one reference of a reftest as one engine answered it, for the unit
// tests of one test against its direct references (reftestResult).
type refAnswer struct {
	URL      string
	Mismatch bool
	Dump     *dump.Dump // nil: Err says why
	Err      string
	Fuzzy    *fuzzy // the test's fuzziness for this reference; nil: exact
}

// reftestResult is walkReftest over wptrunner's graph (manifestGraph) of a test
// whose references answered as refs.
func reftestResult(test *dump.Dump, refs []refAnswer, tol float64) (string, *string) {
	var links []reference
	var fz []fuzzy
	byURL := map[string]refAnswer{}
	for _, r := range refs {
		p := strings.TrimPrefix(r.URL, "/")
		links = append(links, reference{Path: p, Mismatch: r.Mismatch})
		if r.Fuzzy != nil {
			f := *r.Fuzzy
			f.Ref = p
			fz = append(fz, f)
		}
		byURL[r.URL] = r
	}
	g := manifestGraph("/test.html", fz, links)
	st, m, _ := walkReftest(g, func(u string) (*dump.Dump, string) {
		if u == g.URL {
			return test, ""
		}
		return byURL[u].Dump, byURL[u].Err
	}, tol)
	return st, m
}

// edges prints a graph depth first as "a==b" and "a!=b" comparisons.
func edges(n *refNode) []string {
	var out []string
	for _, e := range n.Refs {
		rel := "=="
		if e.Mismatch {
			rel = "!="
		}
		out = append(out, n.URL+rel+e.Node.URL)
		out = append(out, edges(e.Node)...)
	}
	return out
}

// wptrunner's from_manifest: each match an alternative, each followed by the walk
// through every mismatch (m1 != test != m2).
func TestManifestGraphIsWptrunners(t *testing.T) {
	refs := []reference{{Path: "m1.html"}, {Path: "n1.html", Mismatch: true}, {Path: "m2.html"}, {Path: "n2.html", Mismatch: true}}
	g := manifestGraph("/t.html", nil, refs)
	assert.Equal(t, []string{
		"/t.html==/m1.html", "/m1.html!=/n1.html", "/n1.html!=/t.html", "/t.html!=/n2.html",
		"/t.html==/m2.html", "/m2.html!=/n1.html", "/n1.html!=/t.html", "/t.html!=/n2.html",
	}, edges(g))
	assert.Equal(t, []string{"/t.html!=/n1.html", "/n1.html!=/t.html", "/t.html!=/n2.html"},
		edges(manifestGraph("/t.html", nil, []reference{{Path: "n1.html", Mismatch: true}, {Path: "n2.html", Mismatch: true}})))
	assert.Equal(t, []string{"/t.html", "/m1.html", "/n1.html", "/n2.html", "/m2.html"}, graphURLs(g))
}

// Links as files would give them, for chainGraph.
func links(m map[string][]reference) linkReader {
	return func(url string) ([]reference, []fuzzy) { return m[url], nil }
}

func TestChainGraphEndsCyclesAndBoundsDepth(t *testing.T) {
	// WPT's legacy reftest_cycle: t == a == b == t, ended after b == t.
	g, err := chainGraph("/t.html", links(map[string][]reference{
		"/t.html": {{Path: "a.html"}}, "/a.html": {{Path: "b.html"}}, "/b.html": {{Path: "t.html"}}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"/t.html==/a.html", "/a.html==/b.html", "/b.html==/t.html"}, edges(g))
	// A == B == A stops at once; A != B != C != A keeps C != A.
	g, err = chainGraph("/a", links(map[string][]reference{"/a": {{Path: "b"}}, "/b": {{Path: "a"}}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"/a==/b"}, edges(g), "B == A is A == B again")
	g, err = chainGraph("/a", links(map[string][]reference{
		"/a": {{Path: "b", Mismatch: true}}, "/b": {{Path: "c", Mismatch: true}}, "/c": {{Path: "a", Mismatch: true}}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"/a!=/b", "/b!=/c", "/c!=/a"}, edges(g))
	// Alternatives at a node, chains below them.
	g, err = chainGraph("/a", links(map[string][]reference{"/a": {{Path: "b"}, {Path: "c"}}, "/b": {{Path: "b1"}}, "/c": {{Path: "c1", Mismatch: true}}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"/a==/b", "/b==/b1", "/a==/c", "/c!=/c1"}, edges(g))

	// A chain of 40 distinct references is cut at maxRefDepth.
	deep := map[string][]reference{}
	for i := range 40 {
		deep[fmt.Sprintf("/r%d", i)] = []reference{{Path: fmt.Sprintf("r%d", i+1)}}
	}
	_, err = chainGraph("/r0", links(deep))
	require.ErrorContains(t, err, "deeper than 16")
}

// The search: the first alternative that reaches a leaf passes; a failed comparison
// moves to the next alternative; a missing document on the way is ERROR.
func TestWalkReftestSearchesDepthFirst(t *testing.T) {
	white := screenshot(t, nil)
	all := map[image.Point]color.RGBA{}
	for y := range 10 {
		for x := range 20 {
			all[image.Pt(x, y)] = color.RGBA{0, 0, 0, 255}
		}
	}
	black := screenshot(t, all)
	shots := map[string]string{"/t": white, "/w": white, "/w2": white, "/b": black}
	dumpOf := func(u string) (*dump.Dump, string) {
		s, ok := shots[u]
		if !ok {
			return nil, "not found under the root"
		}
		d := page(100)
		d.Screenshot = s
		return d, ""
	}
	read := links(map[string][]reference{"/t": {{Path: "b"}, {Path: "w"}}, "/w": {{Path: "w2"}}})
	g, err := chainGraph("/t", read)
	require.NoError(t, err)
	st, m, last := walkReftest(g, dumpOf, 0.01)
	assert.Equal(t, "PASS", st)
	assert.Contains(t, *m, "== /b: 200 pixels differ")
	assert.Contains(t, *m, "/w == /w2: 0 pixels differ")
	assert.Equal(t, &pairResult{Left: "/w", Right: "/w2", Pixels: true, Held: true}, last)

	// The chain's second link fails: no alternative is left.
	read = links(map[string][]reference{"/t": {{Path: "w"}}, "/w": {{Path: "b"}}})
	g, _ = chainGraph("/t", read)
	st, m, last = walkReftest(g, dumpOf, 0.01)
	require.Equal(t, "FAIL", st, *m)
	assert.Equal(t, "/b", last.Right)
	assert.Equal(t, 200, last.Differ)

	read = links(map[string][]reference{"/t": {{Path: "w"}}, "/w": {{Path: "gone"}}})
	g, _ = chainGraph("/t", read)
	st, m, _ = walkReftest(g, dumpOf, 0.01)
	assert.Equal(t, "ERROR", st)
	assert.Equal(t, "pixel verdict: reference /gone: not found under the root", *m)
}
