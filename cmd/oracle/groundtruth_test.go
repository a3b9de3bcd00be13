package main

// Ground truth that depends only on the case and the engine: the settle point, the
// reset after every case, and a walk the page cannot fool, against the real three
// engines. One oracle with one page per engine serves these tests, so each case
// really follows the one sent before it on the same page.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var groundTruth sharedOracle

func gtOracle(t *testing.T) *client {
	testutil.NeedsBrowsers(t) // before once: a skip inside it would leave c nil for good
	// Info: sandbox_test.go reads the "xvfb started" line.
	groundTruth.once.Do(func() { groundTruth.c = startOracle(t, "--pages=1", "--log-level=info") })
	return groundTruth.c
}

// gtDumps sends a geometry case and returns each engine's dump, requiring all three.
func gtDumps(t *testing.T, c *client, html, script string) map[string]dumpJSON {
	t.Helper()
	req := map[string]any{"html": html}
	if script != "" {
		req["script"] = script
	}
	resp := c.send(t, req)
	require.Nil(t, resp["errors"], "engine errors")
	raw, _ := json.Marshal(resp["dumps"])
	var dumps map[string]dumpJSON
	require.NoError(t, json.Unmarshal(raw, &dumps))
	require.Len(t, dumps, 3)
	return dumps
}

// width is the bounding width of the n-th (0-based) element with tag.
func width(t *testing.T, d dumpJSON, tag string, n int) float64 {
	t.Helper()
	_, b, _ := d.node(t, tag, n)
	return b.W
}

func TestSettleAppliesARequestAnimationFrameQueuedAtLoad(t *testing.T) {
	c := gtOracle(t)
	dumps := gtDumps(t, c, `<div style="height:5px;width:10px"></div>
<script>addEventListener('load', function () {
  requestAnimationFrame(function () { document.querySelector('div').style.width = '77px'; });
});</script>`, "")
	for _, e := range engines {
		assert.Equal(t, 77.0, width(t, dumps[e], "DIV", 0), "%s: the frame queued at load was not applied", e)
	}
}

func TestSettleShowsLoadHandlerEffectsEverywhere(t *testing.T) {
	c := gtOracle(t)
	dumps := gtDumps(t, c, `<div style="height:5px"></div><div style="height:5px"></div>
<script>document.addEventListener('DOMContentLoaded', function () { document.querySelectorAll('div')[0].style.width = '21px'; });
addEventListener('load', function () { setTimeout(function () { document.querySelectorAll('div')[1].style.width = '44px'; }, 0); });</script>`, "")
	for _, e := range engines {
		assert.Equal(t, 21.0, width(t, dumps[e], "DIV", 0), "%s: DOMContentLoaded", e)
		// A task queued by a load handler has run: the settle waits a task after load.
		assert.Equal(t, 44.0, width(t, dumps[e], "DIV", 1), "%s: load handler's task", e)
	}
}

// Rule: finite CSS animations and transitions are finished (finish()), so the walk
// sees their end state with their fill mode applied; infinite ones are cancelled, so
// the walk sees the style without them.
func TestSettleFinishesFiniteAnimationsAndCancelsInfiniteOnes(t *testing.T) {
	c := gtOracle(t)
	dumps := gtDumps(t, c, `<style>
@keyframes grow { from { width: 0 } to { width: 100px } }
#a { height: 5px; width: 50px; animation: grow 10s linear forwards }
#b { height: 5px; width: 30px; animation: grow 1s linear infinite }
#c { height: 5px; width: 10px; transition: width 10s linear }
</style><div id=a></div><div id=b></div><div id=c></div>`,
		`var el = document.getElementById('c'); el.getBoundingClientRect(); el.style.width = '200px';`)
	for _, e := range engines {
		assert.Equal(t, 100.0, width(t, dumps[e], "DIV", 0), "%s: a finite animation is measured at its end", e)
		assert.Equal(t, 30.0, width(t, dumps[e], "DIV", 1), "%s: an infinite animation is cancelled", e)
		assert.Equal(t, 200.0, width(t, dumps[e], "DIV", 2), "%s: a transition the script started is finished", e)
	}
}

// An <img> with a data: URL no engine has seen, inserted by the script: loaded and
// decoded before the walk, and the same request twice gives the identical dump (no
// memory-cache effect).
func TestScriptInsertedImageIsLoadedAndTheSameTwice(t *testing.T) {
	c := gtOracle(t)
	svg := fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="43" height="31"><!-- %d --></svg>`, time.Now().UnixNano())
	script := `var i = document.createElement('img'); i.src = 'data:image/svg+xml,' + encodeURIComponent(` +
		jsString(svg) + `); document.body.appendChild(i);`
	first := gtDumps(t, c, `<p>x</p>`, script)
	second := gtDumps(t, c, `<p>x</p>`, script)
	for _, e := range engines {
		_, b, _ := first[e].node(t, "IMG", 0)
		assert.Equal(t, rect{b.X, b.Y, 43, 31}, b, "%s: first time", e)
		assert.Equal(t, first[e], second[e], "%s: the second identical request differs", e)
	}
}

// A web font (data: URL @font-face, Ahem from web-platform-tests) used only by text the
// script inserts: loaded before the walk, so XXXX at 20px is 80x20 everywhere.
func TestWebFontUsedOnlyByScriptInsertedTextIsLoaded(t *testing.T) {
	c := gtOracle(t)
	font, err := os.ReadFile("../../testdata/fonts/Ahem.ttf")
	require.NoError(t, err)
	html := `<style>@font-face { font-family: TestAhem; src: url(data:font/ttf;base64,` +
		base64.StdEncoding.EncodeToString(font) + `) }</style><p>x</p>`
	script := `var s = document.createElement('span'); s.style.font = '20px/1 TestAhem'; s.textContent = 'XXXX'; document.body.appendChild(s);`
	for round := 0; round < 2; round++ {
		dumps := gtDumps(t, c, html, script)
		for _, e := range engines {
			_, b, _ := dumps[e].node(t, "SPAN", 0)
			assert.Equal(t, 80.0, b.W, "%s round %d: the web font was not used", e, round)
			assert.Equal(t, 20.0, b.H, "%s round %d: the web font was not used", e, round)
		}
	}
}

// Markup-only cases that start an interval (two spellings the old script regex did
// not see) leave nothing for the unrelated case after them.
func TestIntervalsFromMarkupDoNotReachTheNextCase(t *testing.T) {
	c := gtOracle(t)
	handler := `setInterval(function(){document.body&&document.body.appendChild(document.createElement('i'))},5)`
	for _, html := range []string{
		`<img/onerror="` + handler + `" src="data:,">`,
		`<img src="data:,"onerror="` + handler + `">`,
	} {
		gtDumps(t, c, html, "")
		time.Sleep(50 * time.Millisecond) // the interval, were it alive, would fire now
		dumps := gtDumps(t, c, `<div style="height:3px"></div>`, "")
		for _, e := range engines {
			var tags []string
			for _, n := range dumps[e].Nodes {
				tags = append(tags, n.Tag)
			}
			assert.Equal(t, []string{"HTML", "HEAD", "BODY", "DIV"}, tags, "%s: after %s", e, html)
		}
	}
}

// An image on a loopback server outside the oracle's origins (one that accepts and
// never answers) neither reaches that server nor holds the case: the network
// allowlist refuses it at once (docs/untrusted.md), so the image is broken, the page
// settles, every engine answers within the deadline and serves the next case. (Before
// the allowlist, Firefox and WebKitGTK waited on it until the settle's budget ran out;
// the bounded settle is still tested by a reftest-wait never removed, in
// webcontent_test.go.)
func TestAnImageOutsideTheAllowlistNeitherLoadsNorHoldsTheCase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var accepted atomic.Int32
	go func() { // count, and never answer
		for {
			cn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer cn.Close()
		}
	}()
	defer ln.Close()
	// The default deadline (30 s) is far above the 6 s bound: an engine that waited
	// on the image fails the bound, or times out.
	c := gtOracle(t)
	c.send(t, map[string]any{"op": "ping"}) // serving: startup is not in the timing
	start := time.Now()
	resp := c.send(t, map[string]any{"html": `<p>x</p>`,
		"script": `var i = document.createElement('img'); i.src = 'http://` + ln.Addr().String() + `/never.png'; document.body.appendChild(i);`})
	assert.Less(t, time.Since(start), 6*time.Second, "answered within the deadline")
	assert.Nil(t, resp["errors"], "every engine answers")
	for _, e := range engines {
		assert.Contains(t, resp["dumps"], e)
	}
	assert.Zero(t, accepted.Load(), "no engine reached the server outside the allowlist")
	next := c.send(t, map[string]any{"html": `<div></div>`})
	assert.Nil(t, next["errors"], "the next case is served")
}

// A lazy image the engine has not loaded (far below the viewport) is not waited for:
// engines defer those by their own distance rules, possibly forever.
func TestSettleDoesNotWaitForDeferredLazyImages(t *testing.T) {
	c := gtOracle(t)
	dumps := gtDumps(t, c, `<p>x</p><img loading=lazy style="margin-top:5000px" width=43 height=31 src="data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%2243%22 height=%2231%22/%3E">`, "")
	for _, e := range engines {
		_, b, _ := dumps[e].node(t, "IMG", 0)
		assert.Equal(t, 43.0, b.W, "%s", e)
	}
}

// overrideBase is the case every override is compared against: text that wraps into
// several fragments, nested blocks, a scroller, and an empty <script> slot in <head>
// where the html variants put their override.
func overrideBase(slot string) string {
	return `<!doctype html><head><script>` + slot + `</script></head><body style="margin:8px">
<div id=a style="width:120px;padding:3px;border:1px solid"><span>one two three four five six</span></div>
<section><p>para</p><ul><li>i</li><li>j</li></ul></section>
<div style="overflow:scroll;width:50px;height:20px"><div style="height:100px"></div></div></body>`
}

// theOverrides replace what a walk or serializer might use; each must leave the dump
// identical to the case without it, whether it runs in the markup or in the script.
var theOverrides = map[string]string{
	"JSON.stringify":          `JSON.stringify = function () { return '{}'; }; JSON.parse = function () { return {}; };`,
	"getComputedStyle":        `window.getComputedStyle = function () { return { getPropertyValue: function () { return 'evil'; } }; }; CSSStyleDeclaration.prototype.getPropertyValue = function () { return 'evil'; };`,
	"getBoundingClientRect":   `Element.prototype.getBoundingClientRect = function () { return { x: 1, y: 2, width: 3, height: 4 }; };`,
	"getClientRects":          `Element.prototype.getClientRects = function () { return []; };`,
	"DOM traversal getters":   `['firstElementChild', 'nextElementSibling', 'tagName'].forEach(function (k) { Object.defineProperty(Element.prototype, k, { get: function () { return null; }, configurable: true }); }); Object.defineProperty(Document.prototype, 'documentElement', { get: function () { return null; }, configurable: true });`,
	"Array push and setters":  `Array.prototype.push = function () { return 0; }; for (var k = 0; k < 8; k++) Object.defineProperty(Array.prototype, k, { get: function () { return 'evil'; }, set: function () {}, configurable: true });`,
	"Function apply and call": `Function.prototype.apply = function () { return 'evil'; }; Function.prototype.call = function () { return 'evil'; }; Function.prototype.bind = function () { return function () { return 'evil'; }; };`,
	"innerWidth":              `window.innerWidth = 5; window.innerHeight = 6;`,
	"DOMRect getters":         `['x', 'y', 'width', 'height'].forEach(function (k) { Object.defineProperty(DOMRectReadOnly.prototype, k, { get: function () { return 7; }, configurable: true }); });`,
	"toJSON":                  `Object.prototype.toJSON = function () { return 'evil'; }; Array.prototype.toJSON = function () { return 'evil'; };`,
	"descriptor get":          `Object.defineProperty(Object.prototype, 'get', { __proto__: null, value: function () { return 'evil'; }, configurable: true, writable: true }); Object.defineProperty(Object.prototype, 'set', { __proto__: null, value: function () {}, configurable: true, writable: true });`,
	"Promise":                 `Promise.prototype.then = function () { return this; }; Promise.prototype.constructor = function () {}; Promise.resolve = function () { return {}; };`,
	"String methods":          `String.prototype.toUpperCase = function () { return 'EVIL'; }; String.prototype.slice = function () { return 'evil'; };`,
	"Object and Reflect":      `Object.keys = function () { return []; }; Object.defineProperty = function () {}; Object.getPrototypeOf = function () { return null; }; Reflect.apply = function () { return 'evil'; };`,
	"timers":                  `window.setTimeout = function () { return 0; }; window.requestAnimationFrame = function () { return 0; };`,
}

func TestOverridesInTheCaseDoNotChangeTheDump(t *testing.T) {
	c := gtOracle(t)
	base := gtDumps(t, c, overrideBase(""), "")
	for name, js := range theOverrides {
		for _, where := range []string{"html", "script"} {
			html, script := overrideBase(""), js
			if where == "html" {
				html, script = overrideBase(js), ""
			}
			resp := c.send(t, map[string]any{"html": html, "script": script})
			if !assert.Nil(t, resp["errors"], "%s in %s: engine errors", name, where) {
				continue
			}
			raw, _ := json.Marshal(resp["dumps"])
			var dumps map[string]dumpJSON
			require.NoError(t, json.Unmarshal(raw, &dumps))
			for _, e := range engines {
				assert.Equal(t, base[e], dumps[e], "%s in %s changed the %s dump", name, where, e)
			}
		}
	}
}

func TestOverridesInTheCaseDoNotChangeTheReflection(t *testing.T) {
	c := gtOracle(t)
	reflect := func(html, script string) map[string]any {
		resp := c.send(t, map[string]any{"op": "reflect", "html": html, "script": script,
			"probes": []map[string]any{probe("#a", "value", "value"), probe("#b", "hidden", "hidden")}})
		require.Nil(t, resp["errors"], "engine errors")
		states := resp["states"].(map[string]any)
		require.Len(t, states, 3)
		return states
	}
	set := `document.querySelector('#a').setAttribute('value', '5');`
	base := reflect(`<input id=a><p id=b hidden>`, set)
	overrides := map[string]string{
		"getElementById": `Document.prototype.getElementById = function () { return null; };`,
		"getAttribute":   `Element.prototype.getAttribute = function () { return 'evil'; };`,
		"JSON and slice": theOverrides["JSON.stringify"] + theOverrides["String methods"] + theOverrides["Array push and setters"],
	}
	for name, js := range overrides {
		got := reflect(`<input id=a><p id=b hidden>`, set+js)
		assert.Equal(t, base, got, "%s in script changed the reflection", name)
		got = reflect(`<script>`+js+`</script><input id=a><p id=b hidden>`, set)
		assert.Equal(t, base, got, "%s in html changed the reflection", name)
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "</", `<\/`)
}
