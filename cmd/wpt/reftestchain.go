package main

// Which screenshots a reftest compares, and in what order, as wptrunner does: a
// graph of nodes whose edges are == or != comparisons, searched depth first for a
// path from the test to a leaf on which every comparison holds
// (executors/base.py, RefTestImplementation.run_test). docs/web-content.md, "wpt
// run", says which graph is built when.

import (
	"fmt"
	"path"
	"strings"

	"github.com/layout-oracle/oracle/dump"
)

// maxRefDepth bounds a chain of references (--ref-chains): deeper is an error.
const maxRefDepth = 16

// refNode is one node of the graph: a document, its own <meta name=fuzzy> (which
// wptrunner applies to the comparisons the node is the left side of), and its
// outgoing comparisons.
type refNode struct {
	URL   string
	Fuzzy []fuzzy
	Refs  []refEdge
}

type refEdge struct {
	Node     *refNode
	Mismatch bool
}

// manifestGraph is today's wptrunner graph (wpttest.py, ReftestTest.from_manifest,
// since WPT #20459, RFC 15): a reference's own references are not followed. Each
// match reference is an alternative, followed by the walk through every mismatch
// reference (m1 != test != m2 ...); without a match reference, the mismatch walk
// alone. So: one match reference (if any) equal AND every mismatch reference
// different. The nodes it adds besides the test carry no fuzziness, as there.
func manifestGraph(test string, fz []fuzzy, refs []reference) *refNode {
	root := &refNode{URL: test, Fuzzy: fz}
	var matches, mismatches []string
	for _, r := range refs {
		if r.Mismatch {
			mismatches = append(mismatches, "/"+r.Path)
		} else {
			matches = append(matches, "/"+r.Path)
		}
	}
	var tail []refEdge
	if len(mismatches) > 0 {
		walk := &refNode{URL: mismatches[0]}
		cmp := walk
		for _, m := range mismatches[1:] {
			self := &refNode{URL: test}
			cmp.Refs = append(cmp.Refs, refEdge{self, true})
			cmp = &refNode{URL: m}
			self.Refs = append(self.Refs, refEdge{cmp, true})
		}
		tail = []refEdge{{walk, true}}
	}
	if len(matches) == 0 {
		root.Refs = tail
		return root
	}
	for _, m := range matches {
		root.Refs = append(root.Refs, refEdge{&refNode{URL: m, Refs: tail}, false})
	}
	return root
}

// linkReader gives the references and fuzziness of the document at url (a path
// from the root with a leading "/"); a document it cannot read has none.
type linkReader func(url string) ([]reference, []fuzzy)

// chainGraph is wptrunner's graph before RFC 15, which followed chains of
// references: every link of a node is an alternative (OR), and a path passes when
// every comparison along it holds (AND along the chain). As there, a comparison
// (its relation and its unordered pair) already added is not added again when its
// target is already a node, which ends cycles (A == B == A stops; A != B != C != A
// keeps C != A). A chain deeper than maxRefDepth is an error.
func chainGraph(url string, read linkReader) (*refNode, error) {
	return chainNode(url, read, map[string]bool{}, map[string]bool{}, 0)
}

func chainNode(url string, read linkReader, nodes, seen map[string]bool, depth int) (*refNode, error) {
	refs, fz := read(url)
	n := &refNode{URL: url, Fuzzy: fz}
	nodes[url] = true
	for _, r := range refs {
		ref := "/" + r.Path
		a, b := url, ref
		if b < a {
			a, b = b, a
		}
		key := fmt.Sprintf("%t %s %s", r.Mismatch, a, b)
		if nodes[ref] && seen[key] {
			continue
		}
		seen[key] = true
		if depth+1 > maxRefDepth {
			return nil, fmt.Errorf("the chain of references is deeper than %d at %s", maxRefDepth, ref)
		}
		child, err := chainNode(ref, read, nodes, seen, depth+1)
		if err != nil {
			return nil, err
		}
		n.Refs = append(n.Refs, refEdge{child, r.Mismatch})
	}
	return n, nil
}

// graphURLs lists every document of the graph once, the root first.
func graphURLs(root *refNode) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(n *refNode)
	visit = func(n *refNode) {
		if !seen[n.URL] {
			seen[n.URL] = true
			out = append(out, n.URL)
		}
		for _, e := range n.Refs {
			visit(e.Node)
		}
	}
	visit(root)
	return out
}

// pairResult is one comparison the search made.
type pairResult struct {
	Left, Right string
	Mismatch    bool
	Pixels      bool // compared by pixels (else by geometry)
	Differ      int  // pixels that differ
	MaxChannel  int
	Held        bool // the comparison holds (== equal, != different)
}

// walkReftest is a reftest's status in one engine: wptrunner's search over the
// graph, each comparison by pixels (pixelDiff, pixelsEqual) when both documents
// have a screenshot, else by geometry (sameLayout), the geometry verdict given
// beside the pixels in the message. dumpOf gives a document's dump, or why there is
// none; a document the search reaches without one is ERROR, as in wptrunner. The
// last comparison made is returned (a failing test's last failed comparison).
func walkReftest(root *refNode, dumpOf func(url string) (*dump.Dump, string), tol float64) (string, *string, *pairResult) {
	if len(root.Refs) == 0 {
		return statusError, msg("geometry verdict: no reference found"), nil
	}
	type item struct {
		left *refNode
		edge refEdge
	}
	var stack []item
	push := func(n *refNode) {
		for i := len(n.Refs) - 1; i >= 0; i-- {
			stack = append(stack, item{n, n.Refs[i]})
		}
	}
	push(root)
	var notes []string
	allPixels := true
	var last *pairResult
	verdict := func(status string) (string, *string, *pairResult) {
		if allPixels {
			return status, msg("pixel verdict: " + strings.Join(notes, "; ")), last
		}
		return status, msg(fmt.Sprintf("geometry verdict (no screenshots; layout within %.4g px, not pixels): %s", tol, strings.Join(notes, "; "))), last
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		left, right := it.left, it.edge.Node
		var dumps [2]*dump.Dump
		for i, u := range []string{left.URL, right.URL} {
			d, why := dumpOf(u)
			if d == nil {
				what := "geometry verdict"
				if d0, _ := dumpOf(root.URL); d0 != nil && d0.Screenshot != "" {
					what = "pixel verdict"
				}
				if why == "" {
					why = "no dump"
				}
				if u == root.URL {
					return errorStatus(why), msg(fmt.Sprintf("%s: %s", what, why)), nil
				}
				return errorStatus(why), msg(fmt.Sprintf("%s: reference %s: %s", what, u, why)), nil
			}
			dumps[i] = d
		}
		layoutEqual, why, err := sameLayout(dumps[1], dumps[0], tol)
		if err != nil {
			return statusError, msg(fmt.Sprintf("geometry verdict: reference %s: %v", right.URL, err)), nil
		}
		layout := "layouts equal"
		if !layoutEqual {
			layout = "layouts differ (" + why + ")"
		}
		rel := "=="
		if it.edge.Mismatch {
			rel = "!="
		}
		if left != root {
			rel = left.URL + " " + rel
		}
		pr := &pairResult{Left: left.URL, Right: right.URL, Mismatch: it.edge.Mismatch}
		equal := layoutEqual
		note := fmt.Sprintf("%s %s: %s", rel, right.URL, layout)
		if dumps[0].Screenshot != "" && dumps[1].Screenshot != "" {
			maxChannel, n, err := pixelDiff(dumps[0].Screenshot, dumps[1].Screenshot)
			if err != nil {
				return statusError, msg(fmt.Sprintf("pixel verdict: reference %s: %v", right.URL, err)), nil
			}
			fz := fuzzyFor(left.Fuzzy, strings.TrimPrefix(right.URL, "/"))
			equal = pixelsEqual(maxChannel, n, fz)
			allowed := ""
			if fz != nil {
				allowed = fmt.Sprintf(", fuzzy allows maxDifference=%d-%d;totalPixels=%d-%d",
					fz.MaxDiff[0], fz.MaxDiff[1], fz.TotalPixels[0], fz.TotalPixels[1])
			}
			note = fmt.Sprintf("%s %s: %d pixels differ, max channel difference %d%s (geometry: %s)", rel, right.URL, n, maxChannel, allowed, layout)
			pr.Pixels, pr.Differ, pr.MaxChannel = true, n, maxChannel
		} else {
			allPixels = false
		}
		notes = append(notes, note)
		pr.Held = equal != it.edge.Mismatch
		last = pr
		if !pr.Held {
			continue
		}
		if len(right.Refs) == 0 {
			return verdict(statusPass)
		}
		push(right)
	}
	return verdict(statusFail)
}

// fileLinks is a linkReader over the files under root.
func fileLinks(root string) linkReader {
	return func(url string) ([]reference, []fuzzy) {
		rel := strings.TrimPrefix(url, "/")
		b, err := readTreeFile(root, rel)
		if err != nil || !testExt.MatchString(path.Base(rel)) {
			return nil, nil
		}
		return references(rel, b), fuzzyMetas(rel, b)
	}
}
