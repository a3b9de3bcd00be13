package main

// Trace requests through the oracle binary, against the real three engines.

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceAll runs a trace request on c and returns each engine's trace, requiring all three.
func traceAll(t *testing.T, c *client, html, script string) map[string]map[string]any {
	t.Helper()
	req := map[string]any{"op": "trace", "script": script}
	if html != "" {
		req["html"] = html
	}
	resp := c.send(t, req)
	require.Nil(t, resp["errors"])
	out := map[string]map[string]any{}
	for e, tr := range resp["traces"].(map[string]any) {
		out[e] = tr.(map[string]any)
	}
	require.Len(t, out, 3)
	return out
}

func records(tr map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range tr["records"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func TestTraceOnTheOraclesLocalhostOrigin(t *testing.T) {
	c := shared.get(t)
	for e, tr := range traceAll(t, c, `<script>trace.value('inline sees trace', typeof window.trace.value);</script>`,
		`trace.value('n', -0); trace.done();`) {
		assert.Equal(t, e, tr["engine"])
		assert.NotEmpty(t, tr["engine_version"])
		assert.Equal(t, "default", tr["profile"], e)
		assert.NotContains(t, tr, "emulated", "%s: nothing is emulated under default", e)
		assert.Equal(t, true, tr["is_secure_context"], e)
		assert.Regexp(t, `^http://c[0-9a-f]{20}\.localhost:\d+$`, tr["origin"], e)
		assert.Equal(t, false, tr["timed_out"], e)
		assert.Equal(t, []map[string]any{
			{"seq": 0.0, "kind": "value", "label": "inline sees trace", "value": "function"},
			{"seq": 1.0, "kind": "value", "label": "n", "value": map[string]any{"$num": "-0"}},
		}, records(tr), e)
	}
}

func TestTraceWithoutDoneTimesOut(t *testing.T) {
	for e, tr := range traceAll(t, shared.get(t), "", `trace.value('started', true);`) {
		assert.Equal(t, true, tr["timed_out"], e)
		assert.Len(t, records(tr), 1, e)
	}
}

func TestTraceStorageDoesNotReachTheNextTrace(t *testing.T) {
	c := shared.get(t)
	traceAll(t, c, "", `localStorage.setItem('k', 'v'); sessionStorage.setItem('s', 'v'); trace.done();`)
	for e, tr := range traceAll(t, c, "", `trace.value('k', localStorage.getItem('k')); trace.value('s', sessionStorage.getItem('s')); trace.done();`) {
		rs := records(tr)
		require.Len(t, rs, 2, e)
		assert.Nil(t, rs[0]["value"], "%s: localStorage leaked", e)
		assert.Nil(t, rs[1]["value"], "%s: sessionStorage leaked", e)
	}
	// And a geometry page after a trace has no recorder and no trace origin.
	resp := c.send(t, map[string]any{"html": "<p>", "script": "if (window.trace || location.protocol !== 'about:') throw new Error('trace page leaked into geometry')"})
	assert.Nil(t, resp["errors"])
}

func TestTraceThatNeverYieldsIsAnsweredAndServingGoesOn(t *testing.T) {
	c := sdOracle(t)
	resp := c.send(t, map[string]any{"op": "trace", "script": "while (true) {}"})
	errs, _ := resp["errors"].(map[string]any)
	require.Len(t, errs, 3, "every engine answers the stuck trace with an error")
	for e, msg := range errs {
		assert.Contains(t, msg, "timed out", e)
	}
	var ok bool
	for try := 0; try < 6 && !ok; try++ {
		r := c.send(t, map[string]any{"op": "trace", "script": "trace.value('x', 1); trace.done();"})
		ok = r["errors"] == nil && len(r["traces"].(map[string]any)) == 3
	}
	assert.True(t, ok, "traces are answered again after a stuck one")
}

func TestMediaProfileGivesFakeCameraAndMicrophone(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	// The self-check is not what it tests, and the media profile adds no check to it
	// (probes.SelfChecksFor).
	c := startOracle(t, "--pages=1", "--profile=media", "--log-level=warn", "--self-check=false")
	defer c.close()
	assert.Equal(t, "media", c.send(t, map[string]any{"op": "ping"})["profile"])
	script := `navigator.mediaDevices.getUserMedia({video: true, audio: true}).then(s => {
		const v = s.getVideoTracks()[0].getSettings();
		trace.value('video', [v.width, v.height]);
		trace.value('audio tracks', s.getAudioTracks().length);
		trace.done();
	}, e => { trace.error('gum', e); trace.done(); });`
	for e, tr := range traceAll(t, c, "", script) {
		assert.Equal(t, "media", tr["profile"], e)
		rs := records(tr)
		require.Len(t, rs, 2, "%s: %v", e, rs)
		assert.Equal(t, "value", rs[0]["kind"], "%s: getUserMedia resolves", e)
		assert.Equal(t, 1.0, rs[1]["value"], e)
		t.Logf("%s fake camera settings: %v", e, rs[0]["value"])
	}
}

// traceEach sends one trace request and returns each engine's trace and error; every
// engine (or every one req's "engines" names) must answer one way or the other.
func traceEach(t *testing.T, c *client, req map[string]any) (map[string]map[string]any, map[string]string) {
	t.Helper()
	req["op"] = "trace"
	n := len(all3)
	if named, ok := req["engines"].([]string); ok {
		n = len(named)
	}
	resp := c.send(t, req)
	traces := map[string]map[string]any{}
	if m, ok := resp["traces"].(map[string]any); ok {
		for e, tr := range m {
			traces[e] = tr.(map[string]any)
		}
	}
	errs := map[string]string{}
	if m, ok := resp["errors"].(map[string]any); ok {
		for e, msg := range m {
			errs[e] = msg.(string)
		}
	}
	require.Equal(t, n, len(traces)+len(errs), "every engine answers: %v", resp)
	return traces, errs
}

// wantSameRecords requires all three traces, none timed out, each with records want
// (compared as JSON).
func wantSameRecords(t *testing.T, traces map[string]map[string]any, want string) {
	t.Helper()
	wantRecordsIn(t, all3, traces, want)
}

// wantRecordsIn is wantSameRecords for the engines named.
func wantRecordsIn(t *testing.T, engines []string, traces map[string]map[string]any, want string) {
	t.Helper()
	require.Len(t, traces, len(engines))
	var w any
	require.NoError(t, json.Unmarshal([]byte(want), &w))
	for _, e := range engines {
		tr := traces[e]
		require.NotNil(t, tr, "%s: no trace", e)
		assert.Equal(t, false, tr["timed_out"], "%s: timed out", e)
		assert.Equal(t, w, tr["records"], e)
	}
}

// TestTraceScriptNoMarkupCanSwallow: the script used to be appended to the html as a
// <script>, so markup left open turned it into text and every engine timed out with
// no records. It now runs whatever the html leaves open.
func TestTraceScriptNoMarkupCanSwallow(t *testing.T) {
	c := shared.get(t)
	for _, html := range []string{"<textarea>", "<math>", "<template>", "<!--", "<plaintext>", "<noscript>", "<title>",
		"<xmp>", "<iframe>", "<style>", "<script>", "<svg><style>", "<select><option>"} {
		t.Run(html, func(t *testing.T) {
			traces, errs := traceEach(t, c, map[string]any{"html": html, "script": "trace.value('ran', document.readyState); trace.done();"})
			require.Empty(t, errs)
			wantSameRecords(t, traces, `[{"seq":0,"kind":"value","label":"ran","value":"complete"}]`)
		})
	}
}

// TestTraceScriptTextRunsAsWritten: "<!--<script" in the script's text used to keep
// the appended </script> from closing the element.
func TestTraceScriptTextRunsAsWritten(t *testing.T) {
	c := shared.get(t)
	for _, tc := range []struct{ script, want string }{
		{`trace.value('s','<!--<script>'); trace.done()`, `"<!--<script>"`},
		{"// <!-- <script>\ntrace.value('s', 1); trace.done()", `1`},
		{`trace.value('s', '</script><script>'); trace.done()`, `"</script><script>"`},
		{`trace.value('s', '<\/script>' + String.raw` + "`<!--`" + `); trace.done()`, `"</script><!--"`},
	} {
		traces, errs := traceEach(t, c, map[string]any{"script": tc.script})
		require.Empty(t, errs, tc.script)
		wantSameRecords(t, traces, `[{"seq":0,"kind":"value","label":"s","value":`+tc.want+`}]`)
	}
}

// TestTraceScriptRunsAfterLoad: the script runs once the document has loaded:
// readyState complete, the load event's handlers run, every <img> complete. It used
// to run while the document was still "loading".
func TestTraceScriptRunsAfterLoad(t *testing.T) {
	// A 3x2 PNG, and an SVG image that a load handler adds an attribute after.
	png := "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAYAAACddGYaAAAAEUlEQVR4nGP4z8DAAMMMyBwAT9YF+6Cn4P4AAAAASUVORK5CYII="
	html := `<img id=a src="` + png + `"><img id=b src="data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' width='7' height='5'/>">
<script>trace.value('parsing', document.readyState); addEventListener('load', () => { window.loadRan = true; });</script>`
	script := `trace.value('state', document.readyState);
trace.value('load handlers ran', window.loadRan === true);
trace.value('images', [...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight]));
trace.value('current script', document.currentScript);
trace.done();`
	traces, errs := traceEach(t, shared.get(t), map[string]any{"html": html, "script": script})
	require.Empty(t, errs)
	wantSameRecords(t, traces, `[
{"seq":0,"kind":"value","label":"parsing","value":"loading"},
{"seq":1,"kind":"value","label":"state","value":"complete"},
{"seq":2,"kind":"value","label":"load handlers ran","value":true},
{"seq":3,"kind":"value","label":"images","value":{"$shape":"array","length":2,"elements":[
  {"$shape":"array","length":3,"elements":[true,3,2]},{"$shape":"array","length":3,"elements":[true,7,5]}]}},
{"seq":4,"kind":"value","label":"current script","value":null}
]`)
}

// TestTraceScriptThatThrows: a script that throws synchronously behaves as an
// uncaught error in a script element did: an error event on window, and the trace
// goes on (here to the timeout, as the script never reaches trace.done()).
func TestTraceScriptThatThrows(t *testing.T) {
	html := `<script>addEventListener('error', e => trace.value('error event', e.error && e.error.name));</script>`
	traces, errs := traceEach(t, shared.get(t), map[string]any{"html": html,
		"script": "setTimeout(() => { trace.value('later', 1); trace.done(); }, 0); trace.value('before', 1); null.x; trace.value('after', 1);"})
	require.Empty(t, errs)
	wantSameRecords(t, traces, `[
{"seq":0,"kind":"value","label":"before","value":1},
{"seq":1,"kind":"value","label":"error event","value":"TypeError"},
{"seq":2,"kind":"value","label":"later","value":1}
]`)
}

// TestTraceIDsAreNotPaths: the page URL used to carry the id as a path segment, so
// the id ".." failed in every engine. Any id works now, and the URL never shows it.
func TestTraceIDsAreNotPaths(t *testing.T) {
	c := shared.get(t)
	for _, id := range []string{"..", ".", "a/b", "?#%", "%2e%2e", "é☃😀", "a b\t<c>&", ""} {
		traces, errs := traceEach(t, c, map[string]any{"id": id,
			"script": "trace.value('title', document.title); trace.value('path', /^\\/trace\\/[0-9a-f]{32}$/.test(location.pathname) && location.search === '' && location.hash === ''); trace.done();"})
		require.Empty(t, errs, "id %q", id)
		want, _ := json.Marshal(strings.TrimSpace(strings.Join(strings.Fields(id), " ")))
		wantSameRecords(t, traces, `[{"seq":0,"kind":"value","label":"title","value":`+string(want)+`},{"seq":1,"kind":"value","label":"path","value":true}]`)
	}
}

// TestTraceOtherCasesPagesAreNotServed: a page is served once, at a key no id names.
func TestTraceOtherCasesPagesAreNotServed(t *testing.T) {
	traces, errs := traceEach(t, shared.get(t), map[string]any{"html": "<p>secret", "script": `
fetch(location.href).then(r => { trace.value('again', r.status); return fetch('/trace/' + '0'.repeat(32)); })
  .then(r => { trace.value('other', r.status); trace.done(); }, e => { trace.error('fetch', e); trace.done(); });`})
	require.Empty(t, errs)
	wantSameRecords(t, traces, `[{"seq":0,"kind":"value","label":"again","value":404},{"seq":1,"kind":"value","label":"other","value":404}]`)
}

// forgedTrace is what a hostile page tries to pass off as its trace.
const forgedTrace = `{timed_out: false, records: [{seq: 0, kind: 'value', label: 'forged', value: 1}], origin: location.origin, is_secure_context: true}`

// TestTraceBuiltinOverridesCannotForgeRecords: a page that replaces the built-ins the
// recorder and the collection path use gets its real records or an error, never
// records it made up. The apply and JSON.stringify cases made Chromium
// report the forged record before the recorder sealed its result.
func TestTraceBuiltinOverridesCannotForgeRecords(t *testing.T) {
	c := shared.get(t)
	real := `trace.value('real', [1, {a: 2}]); trace.settle('p', Promise.resolve(3)); setTimeout(() => trace.done(), 0);`
	want := `[{"seq":0,"kind":"value","label":"real","value":{"$shape":"array","length":2,"elements":[1,{"$shape":"object","keys":["a"],"props":{"a":{"type":"number","value":2}}}]}},
{"seq":1,"kind":"settle","label":"p","state":"fulfilled","value":3}]`
	for _, tc := range []struct{ name, html, script string }{
		// WebKit's navigation never completes under this markup: its answer is the
		// deadline's error, so this case runs on sdOracle's 8 s, not the shared 30 s.
		{"apply in markup", `<script>Function.prototype.apply = function () { return Promise.resolve(` + forgedTrace + `); };</script>`, real},
		{"apply in script", "", `Function.prototype.apply = function () { return ` + forgedTrace + `; };` + real},
		{"call", "", `Function.prototype.call = function () { return ` + forgedTrace + `; };` + real},
		{"push", "", `Array.prototype.push = function () { return 0; };` + real},
		{"stringify", "", `JSON.stringify = () => '{"timed_out":false,"records":[{"seq":0,"kind":"value","label":"forged","value":1}]}';` + real},
		{"stringify, non-configurable", "", `{ const s = JSON.stringify; const forged = s(` + forgedTrace + `);
Object.defineProperty(JSON, 'stringify', {value: () => forged, writable: false, configurable: false}); }` + real},
		{"stringify wraps the result", "", `{ const s = JSON.stringify;
Object.defineProperty(JSON, 'stringify', {value: v => { if (v && v.payload) v.payload = v.payload.replace('"real"', '"forged"'); return s(v); }, writable: false, configurable: false}); }` + real},
		{"toJSON", "", `Object.prototype.toJSON = function () { return ` + forgedTrace + `; }; Array.prototype.toJSON = Object.prototype.toJSON;` + real},
		{"keys", "", `Object.keys = () => ['forged'];` + real},
		{"then", "", `{ const then = Promise.prototype.then; Promise.prototype.then = function (f, r) { return then.call(this, () => f(` + forgedTrace + `), r); }; }` + real},
		{"then, non-configurable", "", `{ const then = Promise.prototype.then; Object.defineProperty(Promise.prototype, 'then', {value: function (f, r) { return then.call(this, () => f && f(` + forgedTrace + `), r); }, writable: false, configurable: false}); }` + real},
		{"constructor", "", `Promise.prototype.constructor = function (ex) { return new Promise(res => ex(() => res(` + forgedTrace + `), () => {})); };` + real},
		{"trace replaced", "", `window.trace = {value() {}, done() {}}; try { Object.defineProperty(window, 'trace', {value: {}}); } catch (e) { trace.value('refused', e.name); } window.__traceRun = () => (` + forgedTrace + `);` + real},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oc := c
			if tc.name == "apply in markup" {
				oc = sdOracle(t)
			}
			traces, errs := traceEach(t, oc, map[string]any{"html": tc.html, "script": tc.script})
			w := want
			if tc.name == "trace replaced" {
				w = `[{"seq":0,"kind":"value","label":"refused","value":"TypeError"},
{"seq":1,"kind":"value","label":"real","value":{"$shape":"array","length":2,"elements":[1,{"$shape":"object","keys":["a"],"props":{"a":{"type":"number","value":2}}}]}},
{"seq":2,"kind":"settle","label":"p","state":"fulfilled","value":3}]`
			}
			var wantRecs any
			require.NoError(t, json.Unmarshal([]byte(w), &wantRecs))
			for e, tr := range traces {
				raw, _ := json.Marshal(tr["records"])
				assert.NotContains(t, string(raw), "forged", "%s: a forged record got through", e)
				assert.Equal(t, wantRecs, tr["records"], e)
			}
			// An error may quote what the page handed over; it is never a trace.
			for e, msg := range errs {
				t.Logf("%s: %.300s", e, msg)
				assert.NotEmpty(t, msg, e)
			}
		})
	}
}

// vmKB reads a /proc/<pid>/status field (VmRSS, VmHWM) in KiB.
func vmKB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestTraceMillionRecordsIsRefused: a trace of a million records used to take the
// oracle process to 1.5 GB. The recorder stops at --trace-max-records (default
// 100000) and every engine answers with an error naming the bound, while the oracle
// process's memory stays bounded.
func TestTraceMillionRecordsIsRefused(t *testing.T) {
	c := shared.get(t)
	pid := c.pid()
	before := vmKB(t, pid, "VmRSS")
	start := time.Now()
	traces, errs := traceEach(t, c, map[string]any{"script": "for (let i = 0; i < 1e6; i++) trace.value('i', i); trace.done();"})
	assert.Empty(t, traces)
	for e, msg := range errs {
		assert.Contains(t, msg, "--trace-max-records=100000", e)
	}
	after, peak := vmKB(t, pid, "VmRSS"), vmKB(t, pid, "VmHWM")
	t.Logf("oracle pid %d VmRSS %d kB before, %d kB after, VmHWM %d kB; %v", pid, before, after, peak, time.Since(start))
	assert.Less(t, peak, 400*1024, "the oracle's peak RSS stays bounded")
	// And the engines serve the next trace.
	traces, errs = traceEach(t, c, map[string]any{"script": "trace.value('next', 1); trace.done();"})
	require.Empty(t, errs)
	wantSameRecords(t, traces, `[{"seq":0,"kind":"value","label":"next","value":1}]`)
}

// TestTraceBoundsFlags: --trace-max-records and --trace-max-bytes set the bounds, and
// a trace within them is answered as before.
func TestTraceBoundsFlags(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	// The bounds reach the recorder by each driver's own route: Playwright's (Chromium,
	// as Firefox) and WebDriver's (WebKit).
	two := []string{"chromium", "webkit"}
	c := startOracle(t, "--engines=chromium,webkit", "--pages=1", "--self-check=false", "--log-level=warn", "--trace-max-records=3", "--trace-max-bytes=300")
	defer c.close()
	traces, errs := traceEach(t, c, map[string]any{"engines": two, "script": "for (let i = 0; i < 4; i++) trace.value('i', i); trace.done();"})
	assert.Empty(t, traces)
	for e, msg := range errs {
		assert.Contains(t, msg, "--trace-max-records=3 ", e)
	}
	traces, errs = traceEach(t, c, map[string]any{"engines": two, "script": "trace.value('s', 'é'.repeat(100)); trace.value('t', 'x'.repeat(100)); trace.done();"})
	assert.Empty(t, traces)
	for e, msg := range errs {
		assert.Contains(t, msg, "--trace-max-bytes=300 ", e)
	}
	// Records inline markup made before the run count against the same bounds.
	traces, errs = traceEach(t, c, map[string]any{"engines": two, "html": "<script>for (let i = 0; i < 5; i++) trace.value('i', i);</script>", "script": "trace.done();"})
	assert.Empty(t, traces)
	for e, msg := range errs {
		assert.Contains(t, msg, "--trace-max-records=3 ", e)
	}
	traces, errs = traceEach(t, c, map[string]any{"engines": two, "script": "trace.value('i', 0); trace.value('s', 'é'.repeat(50)); trace.done();"})
	require.Empty(t, errs)
	wantRecordsIn(t, two, traces, `[{"seq":0,"kind":"value","label":"i","value":0},{"seq":1,"kind":"value","label":"s","value":"`+strings.Repeat("é", 50)+`"}]`)
}

// TestTraceEachCaseHasItsOwnOrigin: every trace page is on an origin of its own,
// http://<token>.localhost:<port>, which all three engines resolve to loopback and
// treat as a secure context; the same server on another host name is another origin,
// whose responses the case cannot read, and storage is the case's own. All trace
// pages used to share http://localhost:<port>.
func TestTraceEachCaseHasItsOwnOrigin(t *testing.T) {
	c := shared.get(t)
	// The engines of one case share its origin, so a record of it is unanimous (the
	// origin's text is compared below); no other case ever gets it.
	script := `trace.value('secure', isSecureContext);
localStorage.setItem('mine', location.host); trace.value('keys', localStorage.length);
trace.value('origin', location.origin);
const other = location.protocol + '//localhost:' + location.port + '/favicon.ico';
fetch('/favicon.ico').then(r => trace.value('own', r.status))
  .then(() => fetch(other)).then(r => trace.value('other', r.status), e => trace.error('other', e))
  .then(() => trace.done());`
	seen := map[string]bool{}
	for i := 0; i < 2; i++ {
		traces, errs := traceEach(t, c, map[string]any{"script": script})
		require.Empty(t, errs)
		require.Len(t, traces, 3)
		var caseOrigin string
		for e, tr := range traces {
			o := tr["origin"].(string)
			assert.Regexp(t, `^http://c[0-9a-f]{20}\.localhost:\d+$`, o, e)
			if caseOrigin == "" {
				caseOrigin = o
			}
			assert.Equal(t, caseOrigin, o, "%s: the engines of one case share its origin", e)
		}
		assert.False(t, seen[caseOrigin], "origin %s was already another case's", caseOrigin)
		seen[caseOrigin] = true
		originJSON, _ := json.Marshal(caseOrigin)
		want := `[{"seq":0,"kind":"value","label":"secure","value":true},{"seq":1,"kind":"value","label":"keys","value":1},
{"seq":2,"kind":"value","label":"origin","value":` + string(originJSON) + `},
{"seq":3,"kind":"value","label":"own","value":204},{"seq":4,"kind":"error","label":"other","value":{"$error":true,"name":"TypeError"}}]`
		wantSameRecords(t, traces, want)
	}
}
