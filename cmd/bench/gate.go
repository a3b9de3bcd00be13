package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/kinds"
)

// The gate: every way of giving a case a cheaper start must answer
// exactly as a new document per case does. It runs the same requests through an
// oracle with --inert-reuse=false (the fresh-document path) and, in two random
// orders interleaved with hostile cases, through the oracle as it ships, and counts
// the engine answers (dump, state or trace, or error) that differ byte for byte.
// The hostile cases' own answers are not compared: timers make some of them
// differ run to run in any path; they are there to break the cases after them.

// gateRequest is one request of the gate.
type gateRequest struct {
	id  string
	req client.Request
}

// hostileCases try to leave something behind in the window or document for the
// cases after them: timers, replaced built-ins and prototypes, fonts added by
// script, adopted stylesheets, storage, history, window size, designMode, and
// markup that reaches past its document. The inert ones among them (scroll snapping,
// an initial scroll target) are written into kept windows and must leave them clean.
var hostileCases = []struct{ html, script string }{
	{`<div id=a></div>`, `setInterval(() => { document.body && (document.body.style.width = '10px'); }, 1);`},
	{`<div></div>`, `Element.prototype.getBoundingClientRect = () => ({x: 1, y: 1, width: 1, height: 1}); Document.prototype.open = function () {}; Document.prototype.write = function () {};`},
	{`<div></div>`, `Object.defineProperty(window, 'getComputedStyle', {value: () => ({getPropertyValue: () => '1px'})});`},
	{`<div></div>`, `document.fonts.add(new FontFace('DejaVu Sans', 'local("DejaVu Serif")')); document.fonts.add(new FontFace('sans-serif', 'local("DejaVu Serif")'));`},
	{`<div></div>`, `const s = new CSSStyleSheet(); s.replaceSync('div, p, span { width: 7px !important; height: 7px !important; display: block !important }'); document.adoptedStyleSheets = [s];`},
	{`<div></div>`, `try { localStorage.setItem('x', '1'); sessionStorage.setItem('x', '1'); } catch (e) {} document.cookie = 'x=1';`},
	{`<div></div>`, `history.pushState({}, '', '#x'); history.pushState({}, '');`},
	{`<div></div>`, `window.resizeTo(400, 300); window.moveTo(50, 50);`},
	{`<div></div>`, `document.designMode = 'on';`},
	{`<div></div>`, `window.name = 'hostile'; document.title = 'hostile';`},
	{`<div></div>`, `document.documentElement.style.zoom = '2'; document.body.style.fontSize = '40px';`},
	{`<div></div>`, `const st = document.createElement('style'); st.textContent = 'div { width: 3px !important }'; document.head.appendChild(st); document.open = undefined;`},
	{`<div></div>`, `addEventListener('DOMContentLoaded', () => { document.body.innerHTML = '<p>x</p>'; }); document.addEventListener('readystatechange', () => { document.body && document.body.appendChild(document.createElement('hr')); });`},
	{`<div></div>`, `CSS.registerProperty && CSS.registerProperty({name: '--w', syntax: '<length>', inherits: true, initialValue: '33px'});`},
	{`<meta http-equiv="Content-Security-Policy" content="style-src 'none'; font-src 'none'"><div style="width:5px"></div>`, ``},
	{`<base href="http://example.invalid/"><div></div>`, ``},
	{`<meta http-equiv=refresh content="0;url=about:blank#refreshed"><div></div>`, ``},
	{`<iframe srcdoc="<script>parent.document.body && (parent.document.body.style.margin = '50px')</script>"></iframe>`, ``},
	{`<body onload="document.body.style.padding = '9px'"><input autofocus style="margin-top: 3000px">`, ``},
	{`<style>html { scroll-snap-type: y mandatory } div { height: 900px; scroll-snap-align: end }</style><div></div><div></div><div></div>`, ``},
	{`<div style="height: 2000px"></div><div style="scroll-initial-target: nearest; height: 10px"></div><div style="height: 2000px"></div>`, ``},
	{`<style>@font-face { font-family: 'sans-serif'; src: local('DejaVu Serif') } * { font-family: sans-serif }</style><p>inert, but with a font face</p>`, ``},
	{`<dialog open>d</dialog><div popover>p</div><details open><summary>s</summary>x</details>`, ``},
	// A handler the classifier cannot see (x/net/html builds nothing after a
	// template in foreign content) in a closed shadow root, and CSS that switches
	// state an engine keeps past document.open.
	{`<template></template><div></div><svg><foreignObject><template></template></foreignObject></svg><div><template shadowrootmode=closed><img src=x onerror="Object.defineProperty(DOMRectReadOnly.prototype,'width',{get(){return 4242}})"></template></div>`, ``},
	{`<template></template><div></div><input><select><style><input><div><template shadowrootmode=closed><img src=x onerror="Object.defineProperty(DOMRectReadOnly.prototype,'width',{get(){return 4242}})">`, ``},
	{`<style>::-webkit-scrollbar{width:20px}</style><div style="height:3000px"></div>`, ``},
	{`<style>html{scrollbar-gutter:stable both-edges;color-scheme:dark}</style><div style="height:3000px"></div>`, ``},
}

// gateRequests is the gate's request set: the bundled cases, the corpora, n
// generated cases (a tenth with a script), and the hostile cases.
func gateRequests(seed uint64, n int, corpora []string) ([]gateRequest, error) {
	var out []gateRequest
	add := func(id string, r client.Request) {
		r.ID = id
		out = append(out, gateRequest{id: id, req: r})
	}
	for _, path := range corpora {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			r, err := corpusRequest(line)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			add(filepath.Base(path)+":"+r.ID, r)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	for _, c := range generateCases(seed, n) {
		add("gen:"+c.ID, caseRequest(c, "", nil))
	}
	for i, h := range hostileCases {
		r := client.Request{HTML: client.Str(h.html)}
		if h.script != "" {
			r.Script = client.Str(h.script)
		}
		add(fmt.Sprintf("hostile:%02d", i), r)
	}
	// The differential fuzzer's hostile markup (fuzzinert.go), inert to the
	// classifier, so written into kept windows.
	for i := range gateFuzzHostile {
		add(fmt.Sprintf("hostile:fuzz-%02d", i), client.Request{HTML: client.Str(fuzzHostile(seed, i))})
	}
	return out, nil
}

// gateFuzzHostile is how many of the fuzzer's hostile cases the gate adds.
const gateFuzzHostile = 12

// corpusRequest reads one corpus line into a request whose ID is the line's
// string id ("" for any other). A field the protocol does not have is an error.
func corpusRequest(line []byte) (client.Request, error) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(line, &v); err != nil {
		return client.Request{}, err
	}
	var id string
	json.Unmarshal(v["id"], &id)
	delete(v, "id")
	b, _ := json.Marshal(v)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r client.Request
	if err := dec.Decode(&r); err != nil {
		return r, err
	}
	r.ID = id
	return r, nil
}

func isHostile(id string) bool { return strings.HasPrefix(id, "hostile:") }

// gateOrder shuffles reqs with seed, then spreads the hostile cases evenly through
// the others, so that each is followed by ordinary cases on its engines' pages.
func gateOrder(reqs []gateRequest, seed uint64) []gateRequest {
	var plain, hostile []gateRequest
	for _, r := range reqs {
		if isHostile(r.id) {
			hostile = append(hostile, r)
		} else {
			plain = append(plain, r)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9a7e))
	rng.Shuffle(len(plain), func(i, j int) { plain[i], plain[j] = plain[j], plain[i] })
	rng.Shuffle(len(hostile), func(i, j int) { hostile[i], hostile[j] = hostile[j], hostile[i] })
	out := make([]gateRequest, 0, len(reqs))
	k := 0 // hostile case k goes before plain request (k+1)*len(plain)/(len(hostile)+1)
	for i, r := range plain {
		for k < len(hostile) && i == (k+1)*len(plain)/(len(hostile)+1) {
			out = append(out, hostile[k])
			k++
		}
		out = append(out, r)
	}
	return append(out, hostile[k:]...)
}

// exchange sends reqs with at most window outstanding and returns every answer
// line by id.
func (p *oracleProc) exchange(reqs []gateRequest, window int) (map[string]json.RawMessage, error) {
	slots := make(chan struct{}, window)
	done := make(chan *client.Call, len(reqs))
	writeErr := make(chan error, 1)
	go func() {
		for _, r := range reqs {
			slots <- struct{}{}
			if _, err := p.c.Start(context.Background(), r.req, done); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	got := make(map[string]json.RawMessage, len(reqs))
	wrote := writeErr
	for len(got) < len(reqs) {
		select {
		case call := <-done:
			if call.Err != nil {
				return got, fmt.Errorf("oracle output ended after %d of %d answers: %v (log %s)", len(got), len(reqs), call.Err, p.log.Name())
			}
			got[call.Request.ID] = call.Response.Raw
			<-slots
		case err := <-wrote:
			if err != nil {
				return got, err
			}
			wrote = nil
		}
	}
	if wrote != nil {
		return got, <-wrote
	}
	return got, nil
}

// gateResult counts engine answers compared and different, per engine; Unstable
// are differences the fresh path itself gives when asked again (recheck).
type gateResult struct {
	Compared, Different, Unstable map[string]int
	Examples                      []string
	diffs                         []gateDiff
}

// gateDiff is one engine answer that differed from the fresh path's.
type gateDiff struct {
	label, id, engine, fresh, got string
}

// engineAnswers splits one response line into its engines' answers: each engine's
// answer under any registered kind's field (package kinds: dump, state, trace, ...)
// as JSON text, or "error: ..." for its error; a line with a field of no registered
// kind is compared by those fields, under "*".
func engineAnswers(line json.RawMessage) map[string]string {
	var r struct {
		Errors map[string]string `json:"errors"`
		Error  *string           `json:"error"`
	}
	var fields map[string]json.RawMessage
	out := map[string]string{}
	if json.Unmarshal(line, &r) != nil || json.Unmarshal(line, &fields) != nil {
		out["*"] = "malformed: " + string(line)
		return out
	}
	for _, k := range kinds.All() {
		var m map[string]json.RawMessage
		if raw, ok := fields[k.About().Field]; ok && json.Unmarshal(raw, &m) != nil {
			out["*"] = "malformed: " + string(line)
			return out
		}
		for e, v := range m {
			out[e] = string(v)
		}
		delete(fields, k.About().Field)
	}
	for _, f := range kinds.ResponseFields {
		delete(fields, f)
	}
	if len(fields) > 0 {
		// Answers of a kind not registered: compared as those fields, not dropped.
		b, _ := json.Marshal(fields) // RawMessage values of a decoded line marshal
		out["*"] = "no registered kind: " + string(b)
	}
	for e, msg := range r.Errors {
		out[e] = "error: " + msg
	}
	if r.Error != nil {
		out["*"] = "request error: " + *r.Error
	}
	return out
}

// compareGate counts, for every request that is not hostile, each engine's answer
// in got against the same engine's answer in want.
func compareGate(want, got map[string]json.RawMessage, res *gateResult, label string) {
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if isHostile(id) {
			continue
		}
		w, g := engineAnswers(want[id]), engineAnswers(got[id])
		for e := range union(w, g) {
			res.Compared[e]++
			if w[e] != g[e] {
				res.diffs = append(res.diffs, gateDiff{label, id, e, w[e], g[e]})
			}
		}
	}
}

// settle sorts the differences: one whose request the fresh path answers
// differently itself when asked again (freshAgain: its answers by engine, per
// repetition) is unstable, counted apart; the others are different.
func (res *gateResult) settle(freshAgain map[string][]map[string]string) {
	for _, d := range res.diffs {
		unstable := false
		for _, again := range freshAgain[d.id] {
			if again[d.engine] != d.fresh {
				unstable = true
			}
		}
		kind := "differs"
		if unstable {
			res.Unstable[d.engine]++
			kind = "unstable on the fresh path too"
		} else {
			res.Different[d.engine]++
		}
		if len(res.Examples) < 20 {
			res.Examples = append(res.Examples, fmt.Sprintf("%s: %s %s %s: %s", kind, d.label, d.id, d.engine, firstDifference(d.fresh, d.got)))
		}
	}
}

// gateRechecks is how often a request that differed is asked of the fresh path again.
const gateRechecks = 3

// firstDifference shows where a and b first differ, with some context.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("at byte %d: fresh %q, got %q", i, a[from:min(len(a), i+60)], b[from:min(len(b), i+60)])
}

func union(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// runGate is `bench --gate`: it prints the counts and returns 1 when any answer
// differs.
func runGate(c config, corpora, oracleArgs []string, stdout, stderr io.Writer) int {
	reqs, err := gateRequests(c.seed, c.gateCases, corpora)
	if err != nil {
		fmt.Fprintln(stderr, "bench: gate:", err)
		return 1
	}
	// The fresh path: this oracle with --inert-reuse=false, or an earlier build's
	// oracle (--gate-fresh-oracle), which gives every case a new document by itself.
	freshBin, freshArgs := c.oracleBin, []string{"--inert-reuse=false"}
	if c.gateFreshOracle != "" {
		freshBin, freshArgs = c.gateFreshOracle, nil
	}
	run := func(name, bin string, extra []string, order []gateRequest) (map[string]json.RawMessage, error) {
		args := append(append([]string{}, oracleArgs...), extra...)
		p, _, err := startOracle(bin, args, filepath.Join(c.logDir, "gate-"+name+".log"))
		if err != nil {
			return nil, err
		}
		got, err := p.exchange(order, 8)
		if cerr := p.close(); cerr != nil && err == nil {
			// Every answer is in: an oracle slow to close its browsers (the
			// client's bound) or exiting badly afterwards does not make them wrong,
			// and it had cost a finished comparison.
			fmt.Fprintf(stderr, "bench: gate: warning: the %s oracle, after its last answer: %v\n", name, cerr)
		}
		return got, err
	}
	orderA, orderB := gateOrder(reqs, c.seed), gateOrder(reqs, c.seed+1)
	fmt.Fprintf(stderr, "bench: gate: %d requests (%d hostile), fresh path first\n", len(reqs), len(hostileCases)+gateFuzzHostile)
	fresh, err := run("fresh", freshBin, freshArgs, orderA)
	if err != nil {
		fmt.Fprintln(stderr, "bench: gate:", err)
		return 1
	}
	res := gateResult{Compared: map[string]int{}, Different: map[string]int{}, Unstable: map[string]int{}}
	for _, o := range []struct {
		name  string
		order []gateRequest
	}{{"order-a", orderA}, {"order-b", orderB}} {
		got, err := run(o.name, c.oracleBin, nil, o.order)
		if err != nil {
			fmt.Fprintln(stderr, "bench: gate:", err)
			return 1
		}
		compareGate(fresh, got, &res, o.name)
	}
	freshAgain := map[string][]map[string]string{}
	if len(res.diffs) > 0 {
		// Each request that differed, asked of a new fresh-path oracle again: an
		// answer the fresh path itself does not repeat is the engine's instability,
		// not the reuse's.
		byID := map[string]gateRequest{}
		for _, r := range reqs {
			byID[r.id] = r
		}
		var again []gateRequest
		seen := map[string]bool{}
		for _, d := range res.diffs {
			if seen[d.id] {
				continue
			}
			seen[d.id] = true
			for k := 0; k < gateRechecks; k++ {
				r := byID[d.id].req
				r.ID = fmt.Sprintf("%s#%d", d.id, k)
				again = append(again, gateRequest{id: r.ID, req: r})
			}
		}
		got, err := run("recheck", freshBin, freshArgs, again)
		if err != nil {
			fmt.Fprintln(stderr, "bench: gate:", err)
			return 1
		}
		for id, line := range got {
			base := id[:strings.LastIndex(id, "#")]
			freshAgain[base] = append(freshAgain[base], engineAnswers(line))
		}
	}
	res.settle(freshAgain)
	var engines []string
	for e := range res.Compared {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	fmt.Fprintf(stdout, "gate: inert reuse against a new document per case, two orders, %d hostile cases interleaved\n", len(hostileCases)+gateFuzzHostile)
	fmt.Fprintf(stdout, "%-10s %10s %10s %10s\n", "engine", "compared", "different", "unstable")
	total, diff, unstable := 0, 0, 0
	for _, e := range engines {
		fmt.Fprintf(stdout, "%-10s %10d %10d %10d\n", e, res.Compared[e], res.Different[e], res.Unstable[e])
		total += res.Compared[e]
		diff += res.Different[e]
		unstable += res.Unstable[e]
	}
	fmt.Fprintf(stdout, "%-10s %10d %10d %10d\n", "all", total, diff, unstable)
	fmt.Fprintf(stdout, "(unstable: differs, and the fresh path answers it differently too when asked %d times more)\n", gateRechecks)
	for _, ex := range res.Examples {
		fmt.Fprintln(stdout, "  "+ex)
	}
	if diff > 0 {
		return 1
	}
	return 0
}
