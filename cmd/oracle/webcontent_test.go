package main

// Web content through the oracle binary, against the real three engines: documents
// served from --docroot (testdata/wpt, real web-platform-tests files at their WPT
// paths plus a few pages of our own under oracle-tests/), requested by "url";
// inline XML by "content_type"; testharness.js subtests as trace records.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var webContent sharedOracle

// wcArtifacts is webContent's --screenshot-dir. Only
// TestScreenshotArtifactsAreFiles asks it for screenshots: no other answer changes.
var wcArtifacts string

// wcOracle is one oracle with one page per engine serving testdata/wpt.
func wcOracle(t *testing.T) *client {
	testutil.NeedsBrowsers(t) // before once: a skip inside it would leave c nil for good
	webContent.once.Do(func() {
		wcArtifacts = filepath.Join(filepath.Dir(oracleBin), "artifacts") // removed with the binary
		require.NoError(t, os.MkdirAll(wcArtifacts, 0o755))
		webContent.c = startOracle(t, "--pages=1", "--log-level=warn", "--self-check=false", "--docroot=../../testdata/wpt", "--screenshot-dir", wcArtifacts)
	})
	return webContent.c
}

var shortDeadline sharedOracle

// sdOracle is wcOracle with a short --deadline, for the tests of a case that runs
// into it (a trace that never yields, a reftest-wait never removed): one page per
// engine, so the next case must come after that page's recovery.
func sdOracle(t *testing.T) *client {
	testutil.NeedsBrowsers(t)
	shortDeadline.once.Do(func() {
		shortDeadline.c = startOracle(t, "--pages=1", "--log-level=warn", "--self-check=false", "--deadline=8s", "--docroot=../../testdata/wpt")
	})
	return shortDeadline.c
}

// restartsOf is ping's count of relaunches, by engine (pingStates).
func restartsOf(t *testing.T, c *client) map[string]float64 {
	t.Helper()
	states := pingStates(t, c)
	out := map[string]float64{}
	for e, st := range states {
		out[e], _ = st["restarts"].(float64)
	}
	require.Len(t, out, len(engines), "ping's states: %v", states)
	return out
}

// dumpsOf sends a geometry request and returns each engine's dump, requiring all three
// (or those the request's "engines" names).
func dumpsOf(t *testing.T, c *client, req map[string]any) map[string]dumpJSON {
	t.Helper()
	resp := c.send(t, req)
	require.Nil(t, resp["error"], "request error")
	require.Nil(t, resp["errors"], "engine errors")
	raw, _ := json.Marshal(resp["dumps"])
	var dumps map[string]dumpJSON
	require.NoError(t, json.Unmarshal(raw, &dumps))
	want := 3
	if engines, ok := req["engines"].([]string); ok {
		want = len(engines)
	}
	require.Len(t, dumps, want)
	return dumps
}

func count(d dumpJSON, tag string) int {
	n := 0
	for _, nd := range d.Nodes {
		if nd.Tag == tag {
			n++
		}
	}
	return n
}

// An .xht's stylesheet in a CDATA section applies: the document is parsed as XML.
// Inlined as html, the same file loses it (the table is then as wide as its text, not
// 100%), which is what this replaces.
func TestXHTWithACDATAStylesheetIsStyledInEveryEngine(t *testing.T) {
	c := wcOracle(t)
	const path = "/css/CSS2/normal-flow/block-formatting-contexts-001-ref.xht"
	dumps := dumpsOf(t, c, map[string]any{"url": path})
	for _, e := range engines {
		assert.Equal(t, 784.0, width(t, dumps[e], "TABLE", 0), "%s: width:100%% from the CDATA stylesheet", e)
	}
	src, err := os.ReadFile("../../testdata/wpt" + path)
	require.NoError(t, err)
	inlined := dumpsOf(t, c, map[string]any{"html": string(src)})
	for _, e := range engines {
		assert.Less(t, width(t, inlined[e], "TABLE", 0), 784.0, "%s: inlined as html, the CDATA stylesheet should be lost", e)
	}
}

// WPT's Ahem, by /fonts/ahem.css, is loaded before the walk: each "XX" at 100px Ahem
// is exactly 200px wide (a fallback face is not).
func TestAhemWebFontFromTheDocRootIsLoadedBeforeTheWalk(t *testing.T) {
	c := wcOracle(t)
	dumps := dumpsOf(t, c, map[string]any{"url": "/css/CSS2/normal-flow/block-non-replaced-height-005.xht"})
	for _, e := range engines {
		_, _, rects := dumps[e].node(t, "SPAN", 0)
		require.Len(t, rects, 2, "%s: two lines of XX", e)
		for _, r := range rects {
			assert.Equal(t, 200.0, r.W, "%s: XX in Ahem", e)
			assert.Equal(t, 100.0, r.H, "%s: XX in Ahem", e)
		}
	}
}

// Four images by relative URL (support/test-*.png, 100x100, no size in the markup)
// are loaded before the walk.
func TestImagesByRelativeURLAreLoadedBeforeTheWalk(t *testing.T) {
	c := wcOracle(t)
	dumps := dumpsOf(t, c, map[string]any{"url": "/css/CSS2/css1/c414-flt-fit-001.xht"})
	for _, e := range engines {
		require.Equal(t, 4, count(dumps[e], "IMG"), e)
		for i := 0; i < 4; i++ {
			_, b, _ := dumps[e].node(t, "IMG", i)
			assert.Equal(t, rect{W: 100, H: 100}, rect{W: b.W, H: b.H}, "%s: img %d", e, i)
		}
	}
}

// A reftest-wait page is measured after the class is removed: ours changes a width
// 400 ms after load and removes the class a frame later (the settle point alone is
// over long before); WPT's delete-block test removes a block in its load handler.
func TestReftestWaitPageIsMeasuredAfterTheClassIsRemoved(t *testing.T) {
	c := wcOracle(t)
	dumps := dumpsOf(t, c, map[string]any{"url": "/oracle-tests/reftest-wait-late.html"})
	for _, e := range engines {
		assert.Equal(t, 77.0, width(t, dumps[e], "DIV", 0), "%s: measured before reftest-wait was removed", e)
	}
	dumps = dumpsOf(t, c, map[string]any{"url": "/css/CSS2/box-display/delete-block-in-inlines-beginning-001.xht"})
	for _, e := range engines {
		assert.Equal(t, 2, count(dumps[e], "DIV"), "%s: the block is removed", e)
		for i := 0; i < 2; i++ {
			_, b, _ := dumps[e].node(t, "DIV", i)
			assert.Equal(t, 40.0, b.H, "%s: div %d is two lines of 20px Ahem", e, i)
		}
	}
}

// A page that never removes reftest-wait is each engine's error naming it, within
// the deadline.
func TestReftestWaitNeverRemovedIsANamedError(t *testing.T) {
	c := sdOracle(t)
	before := restartsOf(t, c)
	resp := c.send(t, map[string]any{"url": "/oracle-tests/reftest-wait-forever.html"})
	errs, _ := resp["errors"].(map[string]any)
	require.Len(t, errs, 3, "%v", resp)
	for _, e := range engines {
		assert.Contains(t, errs[e], "the root element is still classed reftest-wait", e)
		// Firefox's BiDi route once took its remote agent's "Missing stack" answer to
		// the rejection for a broken browser, and relaunched it (bidi/bidi.go, missingStack).
		assert.NotContains(t, errs[e], "unknown error", e)
	}
	assert.Equal(t, before, restartsOf(t, c), "a page's own settle error relaunches no engine")
	// The engines serve on.
	dumps := dumpsOf(t, c, map[string]any{"url": "/oracle-tests/reftest-wait-late.html"})
	for _, e := range engines {
		assert.Equal(t, 77.0, width(t, dumps[e], "DIV", 0), e)
	}
}

// A page that never settles is named so even when its own script replaced Error:
// the program's errors come from the Error it captured on the fresh global, where
// the page's Error threw inside the settle's timer and the case ran into its deadline
// (Firefox, where a document.open() from a timer leaves the document loading).
func TestSettleErrorOfAPageThatReplacedError(t *testing.T) {
	c := sdOracle(t)
	resp := c.send(t, map[string]any{"html": `<p>x<script>window.Error = function () { throw 'forged'; };
setTimeout(function () { document.open(); }, 0)</script>`})
	errs, _ := resp["errors"].(map[string]any)
	dumps, _ := resp["dumps"].(map[string]any)
	require.Len(t, errs, len(engines)-len(dumps), "each engine answers once: %v", resp)
	for e, msg := range errs {
		assert.Contains(t, msg, "the page did not settle", e)
		assert.NotContains(t, msg, "timed out", e)
	}
}

// A document that is not well-formed XML is each engine's error naming it, by url and
// inline; an inline XHTML document with a CDATA stylesheet is styled.
func TestInlineXMLAndWellFormednessErrors(t *testing.T) {
	c := wcOracle(t)
	xhtml := `<html xmlns="http://www.w3.org/1999/xhtml"><head><style><![CDATA[ div > p { width: 123px } ]]></style></head>` +
		`<body><div><p>x</p></div></body></html>`
	dumps := dumpsOf(t, c, map[string]any{"html": xhtml, "content_type": "application/xhtml+xml"})
	for _, e := range engines {
		assert.Equal(t, 123.0, width(t, dumps[e], "P", 0), e)
	}
	dumps = dumpsOf(t, c, map[string]any{"html": xhtml}) // text/html, today's default
	for _, e := range engines {
		assert.Equal(t, 784.0, width(t, dumps[e], "P", 0), "%s: as HTML the CDATA block is a bogus comment", e)
	}
	dumps = dumpsOf(t, c, map[string]any{"html": `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200"><rect width="40" height="30"/></svg>`, "content_type": "image/svg+xml"})
	for _, e := range engines {
		_, b, _ := dumps[e].node(t, "RECT", 0)
		assert.Equal(t, rect{W: 40, H: 30}, rect{W: b.W, H: b.H}, e)
	}
	for _, req := range []map[string]any{
		{"html": `<html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</body></html>`, "content_type": "application/xhtml+xml"},
		{"url": "/oracle-tests/not-well-formed.xht"},
	} {
		resp := c.send(t, req)
		errs, _ := resp["errors"].(map[string]any)
		require.Len(t, errs, 3, "%v", resp)
		for _, e := range engines {
			assert.Contains(t, errs[e], "the document is not well-formed XML", e)
		}
	}
}

// A testharness.js test traced by url: each subtest's status and the harness's, in
// every engine, through the oracle's own testharnessreport.js.
func TestTestharnessSubtestsAreTraceRecords(t *testing.T) {
	c := wcOracle(t)
	resp := c.send(t, map[string]any{"op": "trace", "url": "/oracle-tests/testharness-pass-fail.html", "script": ""})
	require.Nil(t, resp["errors"])
	traces := resp["traces"].(map[string]any)
	require.Len(t, traces, 3)
	for _, e := range engines {
		tr := traces[e].(map[string]any)
		assert.Equal(t, false, tr["timed_out"], e)
		var got [][2]any
		for _, r := range records(tr) {
			got = append(got, [2]any{r["label"], r["value"]})
		}
		assert.Equal(t, [][2]any{{"box is 50px wide", "PASS"}, {"box is 51px wide", "FAIL"}, {"(harness)", "OK"}}, got, e)
	}
}

// A page cannot read outside the docroot: a symlink out, escaped "..", a directory.
// (Raw request spellings are tested against the server in oracle/origin/docroot_test.go.)
func TestPathEscapesAreRefused(t *testing.T) {
	c := wcOracle(t)
	script := `(async () => {
  for (const u of ['/oracle-tests/escape-link.txt', '/..%2fcases.ndjson', '/%2e%2e/cases.ndjson', '/oracle-tests/', '/fonts/ahem.css']) {
    const r = await fetch(u);
    const text = await r.text();
    trace.value(u, r.status + (text.indexOf('fixed-blocks') >= 0 ? ' LEAKED' : ''));
  }
  trace.done();
})()`
	resp := c.send(t, map[string]any{"op": "trace", "url": "/css/CSS2/normal-flow/block-formatting-contexts-001-ref.xht", "script": script})
	require.Nil(t, resp["errors"])
	for _, e := range engines {
		got := map[string]any{}
		for _, r := range records(resp["traces"].(map[string]any)[e].(map[string]any)) {
			got[r["label"].(string)] = r["value"]
		}
		assert.Equal(t, map[string]any{
			"/oracle-tests/escape-link.txt": "404", // a symlink out of the root
			"/..%2fcases.ndjson":            "400",
			"/%2e%2e/cases.ndjson":          "404", // the engine's URL parser makes it /cases.ndjson
			"/oracle-tests/":                "400", // no listing
			"/fonts/ahem.css":               "200",
		}, got, e)
	}
	for _, u := range []string{"/../cases.ndjson", "/oracle-tests/%2e%2e/x", "//evil.example/a"} {
		resp := c.send(t, map[string]any{"url": u})
		assert.Contains(t, resp["error"], "url", u)
	}
}

// Both html and url is a request error, and so is a url to an oracle without --docroot.
func TestURLRequestErrors(t *testing.T) {
	c := wcOracle(t)
	resp := c.send(t, map[string]any{"url": "/a.html", "html": "<p>"})
	assert.Equal(t, `give either "html" or "url", not both`, resp["error"])
	noRoot := gtOracle(t) // started without --docroot
	for _, op := range []string{"", "reflect", "trace"} {
		req := map[string]any{"url": "/css/CSS2/css1/c414-flt-fit-001.xht"}
		switch op {
		case "reflect":
			req["op"], req["probes"] = op, []any{map[string]any{"selector": "#a", "attr": "id"}}
		case "trace":
			req["op"], req["script"] = op, "trace.done()"
		}
		resp := noRoot.send(t, req)
		assert.True(t, strings.Contains(resp["error"].(string), "--docroot"), "%s: %v", op, resp)
	}
}

// A url whose main document the docroot does not serve (a missing file, a directory,
// a symlink out of it) is a request error for geometry, reflect and trace alike, not
// the 404 page's dump measured unanimously or a trace of "not found\n". (A FIFO and the wrappers are in oracle/origin/docroot_test.go.) The oracle serves a
// real document right after.
func TestURLOfADocumentNotServedIsAnError(t *testing.T) {
	c := wcOracle(t)
	for url, want := range map[string]string{
		"/oracle-tests/missing.html":    "no such file under --docroot",
		"/oracle-tests":                 "a directory, not a file",
		"/oracle-tests/escape-link.txt": "not served by --docroot",
	} {
		for _, op := range []string{"", "reflect", "trace"} {
			req := map[string]any{"url": url}
			switch op {
			case "reflect":
				req["op"], req["probes"] = op, []any{map[string]any{"selector": "#a", "attr": "id"}}
			case "trace":
				req["op"], req["script"] = op, "trace.value('text', document.body.textContent); trace.done()"
			}
			resp := c.send(t, req)
			var fields []string
			for k := range resp {
				fields = append(fields, k)
			}
			msg, _ := resp["error"].(string)
			assert.Contains(t, msg, want, "%s %s: an answer with %v", op, url, fields)
			assert.Nil(t, resp["dumps"], "%s %s", op, url)
			assert.Nil(t, resp["traces"], "%s %s", op, url)
			assert.Nil(t, resp["states"], "%s %s", op, url)
		}
	}
	dumpsOf(t, c, map[string]any{"url": "/oracle-tests/reftest-ref.html"})
}

// Reflection by url: a form control of a docroot page, read after the settle point.
func TestReflectByURL(t *testing.T) {
	c := wcOracle(t)
	resp := c.send(t, map[string]any{"op": "reflect", "url": "/oracle-tests/reftest-wait-late.html",
		"script": "document.getElementById('d').setAttribute('title', 'w' + document.getElementById('d').offsetWidth)",
		"probes": []any{map[string]any{"selector": "#d", "attr": "title"}}})
	require.Nil(t, resp["errors"], "%v", resp)
	states := resp["states"].(map[string]any)
	for _, e := range engines {
		b, _ := json.Marshal(states[e])
		assert.Contains(t, string(b), `w77`, e)
	}
}
