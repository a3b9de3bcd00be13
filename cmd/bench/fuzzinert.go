package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/oracle/inert"
)

// The differential fuzzer of inert cases: generated hostile markup, each
// followed by an innocent generated case on the same page (one page per engine, one
// request at a time), through the oracle as it ships; the innocent cases alone
// through an oracle with --inert-reuse=false (a new document per case). Per engine,
// the innocent case's answer after its hostile one must be the new document's, byte
// for byte: whatever the hostile case ran, or left in its window, must not reach it.
//
// The hostile markup nests what makes HTML parsers disagree (templates, tables and
// foster parenting, select, svg and math with their integration points, raw-text and
// RCDATA elements, misnested formatting, comments and CDATA) around handlers that
// poison the window (a replaced built-in the walk reads, a timer adding nodes, a
// scroll). Most of it is not inert to the classifier and takes the fresh path; the
// rest is written into a kept window, where the engine's check must catch whatever
// the engine ran that the classifier did not foresee.

// fuzzPoison is what every handler of the hostile markup runs.
const fuzzPoison = `Object.defineProperty(DOMRectReadOnly.prototype,'width',{get(){return 4242}});` +
	`setInterval(function(){document.body&&document.body.appendChild(document.createElement('b'))},3);scrollTo(0,3000)`

// fuzzPayloads are the ways the hostile markup tries to run fuzzPoison.
var fuzzPayloads = []string{
	`<img src=x onerror="P">`,
	`<svg onload="P"></svg>`,
	`<script>P</script>`,
	`<body onload="P">`,
	`<input autofocus onfocus="P">`,
	`<details open ontoggle="P"><summary>s</summary></details>`,
	`<iframe srcdoc="<script>parent.eval(&quot;P&quot;)</script>"></iframe>`,
	`<video><source onerror="P"></video>`,
	`<style onload="P"></style>`,
	`<math><mtext><img src=x onerror="P"></mtext></math>`,
	`<svg><foreignObject><img src=x onerror="P"></foreignObject></svg>`,
	`<object data=x onerror="P"></object>`,
	`<div><template shadowrootmode=closed><img src=x onerror="P"></template></div>`,
	`<div><template shadowrootmode=open><img src=x onerror="P"></template></div>`,
	`<div><template shadowrootmode=closed><div><template shadowrootmode=open><svg onload="P"></svg></template></div></template></div>`,
	`<a href="javascript:P">a</a><iframe src="javascript:parent.eval(&quot;P&quot;)"></iframe>`,
}

// fuzzStoppers come before a payload: x/net/html builds no element after a
// <template> start tag meets foreign content on the stack (an integration point),
// so the classifier judges only the markup before them; fuzzAllowers are elements
// that, put first, allow in its tree those the engines build after a stopper.
var fuzzStoppers = []string{"", "", "",
	`<svg><foreignObject><template></template></foreignObject></svg>`,
	`<svg><desc><template></template></desc></svg>`,
	`<svg><title><template></template></title></svg>`,
	`<math><mi><template></template></mi></math>`,
	`<math><mtext><template></template></mtext></math>`,
	`<math><annotation-xml encoding="text/html"><template></template></annotation-xml></math>`,
}
var fuzzAllowers = []string{"", `<template></template><div></div>`, `<template></template><div></div><input><select></select>`}

// fuzzUAState are rules that switch state an engine may keep for its window past
// document.open (Gecko: classic root scrollbars after a ::-webkit-scrollbar width;
// WebKit: the style of a scrollbar made before the rule); a hostile case may start
// with one, and so may an innocent one, which must still answer as in a new document.
var fuzzUAState = []string{
	`<style>::-webkit-scrollbar{width:20px}</style>`,
	`<style>::-webkit-scrollbar{width:7px;background:red}::-webkit-scrollbar-thumb{background:blue}</style>`,
	`<style>html{scrollbar-gutter:stable both-edges}</style>`,
	`<style>html{scrollbar-width:thin}</style>`,
	`<style>:root{color-scheme:dark}</style>`,
	`<style>html{zoom:1.5}</style>`,
	`<style>body{zoom:0.5}</style>`,
}

// fuzzWrappers open and close what the payloads hide in; %s is the content.
var fuzzWrappers = []string{
	`<template>%s</template>`,
	`<div><template><col>%s</template>`,
	`<table>%s</table>`,
	`<table><tr><td>%s</td></tr></table>`,
	`<table><colgroup>%s</colgroup></table>`,
	`<select>%s</select>`,
	`<select><option>%s</option></select>`,
	`<select><style>%s</style></select>`,
	`<svg>%s</svg>`,
	`<svg><desc>%s</desc></svg>`,
	`<svg><style>%s</style></svg>`,
	`<math><mi>%s</mi></math>`,
	`<math><annotation-xml encoding="text/html">%s</annotation-xml></math>`,
	`<b><i>%s</b></i>`,
	`<a><p>%s</a></p>`,
	`<p><table>%s</p>`,
	`<noscript>%s</noscript>`,
	`<xmp>%s</xmp>`,
	`<noembed>%s</noembed>`,
	`<noframes>%s</noframes>`,
	`<title>%s</title>`,
	`<textarea>%s</textarea>`,
	`<style>%s</style>`,
	`<!-- %s -->`,
	`<![CDATA[%s]]>`,
	`<frameset>%s</frameset>`,
	`<div>%s`,
	`%s<plaintext>`,
}

// fuzzOpeners are unclosed start tags that change the parser's mode for what
// follows them; each hostile case may begin with some.
var fuzzOpeners = []string{"<table>", "<select>", "<svg>", "<math>", "<template>", "<colgroup>",
	"<frameset>", "<noscript>", "<xmp>", "<iframe>", "<noembed>", "<plaintext>", "<script>",
	"<style>", "<title>", "<textarea>", "<!--", "<b>", "<p>", "<ruby>", "<caption>", "<head>", "<body>"}

// fuzzHiders are raw-text and RCDATA elements: what a parser reads as text in them
// another may read as markup, if it never entered them (seen: a tag the tree
// builder ignores, another version's select parser).
var fuzzHiders = []string{`<style>%s</style>`, `<title>%s</title>`, `<textarea>%s</textarea>`,
	`<noscript>%s</noscript>`, `<xmp>%s</xmp>`, `<noembed>%s</noembed>`, `<noframes>%s</noframes>`,
	`<iframe>%s</iframe>`, `<plaintext>%s`, `<script>%s</script>`}

// fuzzBreakers come before a payload: tags that end a select or a table section in
// some parser versions and not in others.
var fuzzBreakers = []string{"", "", "<input>", "<keygen>", "<textarea>", "<select>", "<hr>", "<option>", "<optgroup>", "<tr>", "<td>", "<col>"}

// fuzzHostile is the hostile markup of pair i: the first of up to 64 candidates
// that the classifier calls inert (most are not, and would only test the reset a
// case that is not inert gets, which the gate covers), or the last one.
func fuzzHostile(seed uint64, i int) string {
	var s string
	for j := range 64 {
		if s = fuzzCandidate(seed, uint64(i)<<6|uint64(j)); inertMarkup(s) {
			break
		}
	}
	return s
}

func inertMarkup(s string) bool { ok, _ := inert.Check(s); return ok }

// fuzzCandidate is one hostile markup: one or two payloads, often hidden in a
// raw-text or RCDATA element, in up to three wrappers, behind up to two openers.
func fuzzCandidate(seed, k uint64) string {
	r := rand.New(rand.NewPCG(seed^0xf022, k))
	payload := func() string {
		p := fuzzPayloads[r.IntN(len(fuzzPayloads))]
		if r.IntN(2) == 0 { // no end tag: raw text with "</" in it is not inert
			p = p[:strings.Index(p, ">")+1]
		}
		return fuzzBreakers[r.IntN(len(fuzzBreakers))] + strings.ReplaceAll(p, "P", fuzzPoison)
	}
	s := payload()
	if r.IntN(3) == 0 {
		s += payload()
	}
	if r.IntN(3) > 0 {
		s = fmt.Sprintf(fuzzHiders[r.IntN(len(fuzzHiders))], s)
	}
	for range r.IntN(4) {
		s = fmt.Sprintf(fuzzWrappers[r.IntN(len(fuzzWrappers))], s)
	}
	for range r.IntN(3) {
		s = fuzzOpeners[r.IntN(len(fuzzOpeners))] + s
	}
	s = fuzzAllowers[r.IntN(len(fuzzAllowers))] + fuzzStoppers[r.IntN(len(fuzzStoppers))] + s
	if r.IntN(3) == 0 {
		s = fuzzUAState[r.IntN(len(fuzzUAState))] + s
	}
	if r.IntN(4) == 0 { // a scroll the next case must not inherit
		s = `<style>html{scroll-snap-type:y mandatory}</style><div style="height:3000px"></div><div style="scroll-snap-align:start;height:10px"></div><div style="height:3000px"></div>` + s
	}
	return s
}

// fuzzInnocent is the innocent case of pair i: a generated script-free case, tall
// enough to be scrolled; every fourth starts with a fuzzUAState rule.
func fuzzInnocent(seed uint64, i int) benchCase {
	var c benchCase
	for k := i; ; k += 7919 {
		if c = generateCase(seed, k); c.Script == "" {
			break
		}
	}
	c.ID = fmt.Sprintf("f%05d", i)
	c.HTML += `<div style="height:1500px"></div><p>end</p>`
	if i%4 == 3 { // after a tall case, in a window that may hold its scrollbar
		c.HTML = fuzzUAState[(i/4)%len(fuzzUAState)] + c.HTML
	}
	return c
}

// fuzzResult counts the fuzzer's pairs: innocent engine answers compared and
// different from a new document's, and the hostile cases the classifier let in.
type fuzzResult struct {
	Pairs, HostileInert int
	Compared, Different map[string]int
	CheckFailed         map[string]int // inert cases the engine's check sent the fresh way (the log's)
	Examples            []string
}

// runFuzzInert is `bench --fuzz-inert N`: it prints the counts and returns 1 when an
// innocent answer differs from a new document's.
func runFuzzInert(c config, pairs int, oracleArgs []string, stdout, stderr io.Writer) int {
	res, err := fuzzInert(c, pairs, oracleArgs, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "bench: fuzz-inert:", err)
		return 1
	}
	var engines []string
	for e := range res.Compared {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	fmt.Fprintf(stdout, "fuzz-inert: %d hostile-then-innocent pairs, %d hostile cases inert to the classifier\n", res.Pairs, res.HostileInert)
	fmt.Fprintf(stdout, "%-10s %10s %10s %12s\n", "engine", "compared", "different", "check failed")
	diff := 0
	for _, e := range engines {
		fmt.Fprintf(stdout, "%-10s %10d %10d %12d\n", e, res.Compared[e], res.Different[e], res.CheckFailed[e])
		diff += res.Different[e]
	}
	for _, ex := range res.Examples {
		fmt.Fprintln(stdout, "  "+ex)
	}
	if diff > 0 {
		return 1
	}
	return 0
}

func fuzzInert(c config, pairs int, oracleArgs []string, stderr io.Writer) (fuzzResult, error) {
	res := fuzzResult{Pairs: pairs, Compared: map[string]int{}, Different: map[string]int{}, CheckFailed: map[string]int{}}
	var kept, fresh []gateRequest
	for i := range pairs {
		h := fuzzHostile(c.seed, i)
		if inertMarkup(h) {
			res.HostileInert++
		}
		n := fuzzInnocent(c.seed, i)
		kept = append(kept, gateRequest{id: fmt.Sprintf("hostile:%05d", i), req: client.Request{ID: fmt.Sprintf("hostile:%05d", i), HTML: client.Str(h)}})
		r := caseRequest(n, "", nil)
		kept = append(kept, gateRequest{id: r.ID, req: r})
		fresh = append(fresh, gateRequest{id: r.ID, req: r})
	}
	fmt.Fprintf(stderr, "bench: fuzz-inert: %d pairs (%d hostile cases inert to the classifier)\n", pairs, res.HostileInert)
	run := func(name string, extra []string, reqs []gateRequest) (map[string]json.RawMessage, string, error) {
		args := append(append([]string{"--pages=1", "--self-check=false", "--log-level=info"}, oracleArgs...), extra...)
		logPath := filepath.Join(c.logDir, "fuzz-inert-"+name+".log")
		p, _, err := startOracle(c.oracleBin, args, logPath)
		if err != nil {
			return nil, logPath, err
		}
		got, err := p.exchange(reqs, 1) // one at a time: each innocent case follows its hostile one
		if cerr := p.close(); cerr != nil && err == nil {
			fmt.Fprintf(stderr, "bench: fuzz-inert: warning: the %s oracle, after its last answer: %v\n", name, cerr)
		}
		return got, logPath, err
	}
	want, _, err := run("fresh", []string{"--inert-reuse=false"}, fresh)
	if err != nil {
		return res, err
	}
	got, logPath, err := run("kept", nil, kept)
	if err != nil {
		return res, err
	}
	res.CheckFailed = checkFailures(logPath)
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		w, g := engineAnswers(want[id]), engineAnswers(got[id])
		for e := range union(w, g) {
			res.Compared[e]++
			if w[e] != g[e] {
				res.Different[e]++
				if len(res.Examples) < 20 {
					res.Examples = append(res.Examples, fmt.Sprintf("%s %s: %s", id, e, firstDifference(w[e], g[e])))
				}
			}
		}
	}
	return res, nil
}

// checkFailures counts, per engine, the oracle log's lines that say an inert case
// failed its check in the engine (oracle/fanout.go).
func checkFailures(logPath string) map[string]int {
	out := map[string]int{}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "failed its check in the engine") {
			continue
		}
		var l struct {
			Engine string `json:"engine"`
		}
		if json.Unmarshal([]byte(line), &l) == nil {
			out[l.Engine]++
		}
	}
	return out
}
