package oracle

// Unit tests of the line protocol only: parsing, error responses and the request
// loop. The loop tests use fakeEngine, a stand-in written for this file that runs no
// browser; the real engines are tested in cmd/oracle's end-to-end tests.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/google/go-cmp/cmp"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseErrorCase is a request line ParseRequest must refuse: the id it still reads
// (as raw JSON) and a part of the error's text.
type parseErrorCase struct{ name, line, wantID, wantErr string }

func assertParseErrors(t *testing.T, cases []parseErrorCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, id, err := ParseRequest([]byte(tc.line))
			assert.Nil(t, req)
			assert.Equal(t, tc.wantID, string(id))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestParseRequestErrors(t *testing.T) {
	assertParseErrors(t, []parseErrorCase{
		{"not json", `hello`, `null`, "request must be a JSON object"},
		{"truncated", `{"id":"a","html":`, `null`, "invalid JSON"},
		{"array", `[1,2]`, `null`, "request must be a JSON object"},
		{"string", `"x"`, `null`, "request must be a JSON object"},
		{"no id", `{"html":"<p>"}`, `null`, `request has no "id"`},
		{"null id", `{"id":null,"html":"<p>"}`, `null`, `request has no "id"`},
		{"object id", `{"id":{"a":1},"html":"<p>"}`, `null`, `"id" must be a string or a number`},
		{"unknown op", `{"id":"u","op":"dance"}`, `"u"`, `unknown op "dance"`},
		{"html wrong type", `{"id":7,"html":5}`, `7`, `field "html" must be a string, not number`},
		{"engines wrong type", `{"id":"e","html":"","engines":"chromium"}`, `"e"`, `field "engines" must be an array of strings, not string`},
		{"unknown engine", `{"id":"e","html":"","engines":["servo"]}`, `"e"`, `unknown engine "servo"`},
		{"typoed field", `{"id":"t","html":"","scirpt":"x"}`, `"t"`, `unknown field "scirpt"`},
		{"geometry without html", `{"id":"g"}`, `"g"`, `geometry request needs "html" or "url"`},
		{"trace without script", `{"id":"tr","op":"trace"}`, `"tr"`, `trace request needs "script"`},
		{"html and url", `{"id":"hu","html":"<p>","url":"/a.html"}`, `"hu"`, `give either "html" or "url", not both`},
		{"trace with html and url", `{"id":"hu","op":"trace","script":"","html":"<p>","url":"/a.html"}`, `"hu"`, `not both`},
		{"url with dot dot", `{"id":"u","url":"/css/../../etc/passwd"}`, `"u"`, `'..' segment`},
		{"url escaped dot dot", `{"id":"u","url":"/css/%2e%2e/x"}`, `"u"`, `escaped`},
		{"url relative", `{"id":"u","url":"css/a.xht"}`, `"u"`, `must be a path under --docroot`},
		{"url with host", `{"id":"u","url":"http://example.com/a.xht"}`, `"u"`, `must be a path under --docroot`},
		{"url wrong type", `{"id":"u","url":5}`, `"u"`, `field "url" must be a string, not number`},
		{"content_type with url", `{"id":"c","url":"/a.xht","content_type":"application/xhtml+xml"}`, `"c"`, `"content_type" goes with "html"`},
		{"unknown content_type", `{"id":"c","html":"","content_type":"text/xml"}`, `"c"`, `unknown "content_type" "text/xml"`},
		{"content_type spelled ContentType", `{"id":"c","html":"","Content_Type":"image/svg+xml"}`, `"c"`, `must be spelled "content_type"`},
		{"ping with url", `{"id":"p","op":"ping","url":"/a.html"}`, `"p"`, `ping takes no "url"`},
		{"reflect without probes", `{"id":"r","op":"reflect","html":""}`, `"r"`, `non-empty "probes"`},
		{"class selector", `{"id":"r","op":"reflect","probes":[{"selector":".a","attr":"x"}]}`, `"r"`, `probes[0]: selector ".a" is not a bare #id`},
		{"compound selector", `{"id":"r","op":"reflect","probes":[{"selector":"#a","attr":"x"},{"selector":"div > #a","attr":"x"}]}`, `"r"`, `probes[1]: selector "div > #a" is not a bare #id`},
		{"probes wrong type", `{"id":"r","op":"reflect","probes":"#a"}`, `"r"`, `field "probes" must be an array of {"selector","attr","idl"} objects, not string`},
		{"engine not a string", `{"id":"e","html":"","engines":[1]}`, `"e"`, `field "engines" must be an array of strings, not number`},
		{"probe without attr", `{"id":"r","op":"reflect","probes":[{"selector":"#a"}]}`, `"r"`, `probes[0] needs`},
		{"id over 1024 bytes", `{"id":"` + strings.Repeat("<", 1023) + `","html":""}`, `null`, `"id" is 1025 bytes long, over the 1024`},
	})
}

func TestParseRequestKeepsIDVerbatim(t *testing.T) {
	req, _, err := ParseRequest([]byte(`{"id": 1.50, "html": "<p>", "script": "x()", "engines": ["webkit"]}`))
	require.NoError(t, err)
	assert.Equal(t, "1.50", string(req.ID))
	assert.Equal(t, "<p>", *req.HTML)
	assert.Equal(t, "x()", *req.Script)
	assert.Equal(t, []string{"webkit"}, req.Engines)
}

// fakeEngine returns a canned walk result; it stands in for a browser in loop tests.
type fakeEngine struct {
	name   string
	delay  time.Duration
	resets atomic.Int32
	// failCheck: an inert case whose html holds it fails its check (fanout_test.go).
	failCheck string
}

func (f *fakeEngine) Name() string           { return f.name }
func (f *fakeEngine) Version() string        { return "0.0-fake" }
func (f *fakeEngine) Route() string          { return "fake" }
func (f *fakeEngine) Close() error           { return nil }
func (f *fakeEngine) Health() browser.Health { return browser.Health{State: browser.StateReady} }
func (f *fakeEngine) Reset(ctx context.Context) error {
	f.resets.Add(1)
	return nil
}
func (f *fakeEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	return nil, errors.New("not used")
}
func (f *fakeEngine) LoadURL(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
	return nil, errors.New("not used")
}
func (f *fakeEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s, _ := args[0].(string); s == "throw" {
		return json.RawMessage(`{"scriptError":"Error: boom"}`), nil
	}
	check := "" // an inert case's check (inpage/inert_check.js) passes, unless f.failCheck
	if strings.HasPrefix(fn, "(function inertChecked(") {
		check = `,"inert":""`
		if f.failCheck != "" && strings.Contains(html, f.failCheck) {
			check = `,"inert":"an element <html img> the classifier did not build"`
		}
	}
	return json.RawMessage(`{"result":{"viewport":{"width":800,"height":600},"overflowed":false,"nodes":[
		{"index":0,"parent":-1,"tag":"HTML","depth":0,"bounding":{"x":0,"y":0,"w":800,"h":10},"rects":[],"style":{}}]}` + check + `}`), nil
}

func fakeOracle(engines ...*fakeEngine) *Oracle {
	o := &Oracle{engines: map[string]*pool.Pool{}, profile: "default", deadline: time.Second, inflight: 1, log: zerolog.Nop(),
		origin: &origin.Server{}} // registers pages; the fake never fetches them
	for _, e := range engines {
		o.engines[e.name] = pool.New(e.name, []browser.Engine{e})
		o.order = append(o.order, e.name)
	}
	return o
}

func serveLines(t *testing.T, o *Oracle, input string) []map[string]any {
	t.Helper()
	var out strings.Builder
	require.NoError(t, o.Serve(context.Background(), strings.NewReader(input), &out))
	var got []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "every stdout line is JSON: %q", sc.Text())
		got = append(got, m)
	}
	return got
}

// byID indexes responses by id; responses to lines without a readable id are listed
// under "null" in arrival order. Order across ids is not promised.
func byID(t *testing.T, got []map[string]any) (map[string]map[string]any, []map[string]any) {
	t.Helper()
	ids := map[string]map[string]any{}
	var nulls []map[string]any
	for _, m := range got {
		if m["id"] == nil {
			nulls = append(nulls, m)
			continue
		}
		key := fmt.Sprint(m["id"])
		require.NotContains(t, ids, key, "one response per id")
		ids[key] = m
	}
	return ids, nulls
}

func TestServeAnswersEveryLineAndKeepsServing(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	input := strings.Join([]string{
		`not json`,
		`{"id":"a","op":"nope"}`,
		``, // blank: not a request, no answer
		`{"html":"<p>"}`,
		`{"id":"ok","html":"<p>"}`,
		`{"id":"w","html":"<p>","engines":["webkit"]}`,
		`{"id":"th","html":"<p>","script":"throw"}`,
		`{"id":"p","op":"ping"}`,
	}, "\n") + "\n"
	got := serveLines(t, o, input)
	require.Len(t, got, 7)
	ids, nulls := byID(t, got)
	assert.Equal(t, []map[string]any{
		{"id": nil, "error": "request must be a JSON object", "line": 1.0},
		{"id": nil, "error": `request has no "id"`, "line": 4.0}, // the blank line 3 counts
	}, nulls)
	assert.Contains(t, ids["a"]["error"], "unknown op")
	assert.Equal(t, 2.0, ids["a"]["line"], "a line that is no request says which")
	assert.NotContains(t, ids["th"], "line", "an answered case has no line number")
	assert.Contains(t, ids["ok"]["dumps"], browser.Chromium)
	assert.NotContains(t, ids["ok"], "errors", "errors is omitted when empty")
	assert.Equal(t, map[string]any{"webkit": "engine not launched"}, ids["w"]["errors"])
	assert.Equal(t, map[string]any{"chromium": "script threw: Error: boom"}, ids["th"]["errors"])
	assert.Equal(t, map[string]any{}, ids["th"]["dumps"])
	if diff := cmp.Diff(map[string]any{
		"id": "p", "ok": true, "protocol": 1.0, "engines": []any{"chromium"}, "versions": map[string]any{"chromium": "0.0-fake"},
		"profile": "default", "routes": map[string]any{"chromium": "fake"}, "environment": environment.Name(),
		"states": map[string]any{"chromium": map[string]any{"state": "ready", "restarts": 0.0, "pages": 1.0}},
	}, ids["p"]); diff != "" {
		t.Errorf("ping (-want +got):\n%s", diff)
	}
}

func TestServeStopsAtShutdownAndAtEOFWithoutNewline(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	got := serveLines(t, o, `{"id":"s","op":"shutdown"}`+"\n"+`{"id":"never","op":"ping"}`+"\n")
	assert.Equal(t, []map[string]any{{"id": "s", "ok": true}}, got)

	got = serveLines(t, o, `{"id":"last","op":"ping"}`) // no trailing newline
	require.Len(t, got, 1)
	assert.Equal(t, "last", got[0]["id"])
}

func TestServeDeadlineIsAnEngineError(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium, delay: time.Hour}, &fakeEngine{name: browser.Firefox})
	o.deadline = 50 * time.Millisecond
	got := serveLines(t, o, `{"id":"slow","html":"<p>"}`+"\n")
	require.Len(t, got, 1)
	assert.Equal(t, map[string]any{"chromium": "timed out after 50ms"}, got[0]["errors"])
	assert.Contains(t, got[0]["dumps"], browser.Firefox)
}

func TestServeRejectsOverlongLineAndReadsTheNext(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	o.maxLine = 100
	long := `{"id":"big","html":"` + strings.Repeat("x", 200_000) + `"}`
	got := serveLines(t, o, long+"\n"+`{"id":"next","op":"ping"}`+"\n")
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"id": nil, "error": "request line exceeds the maximum of 100 bytes", "line": 1.0}, got[0])
	assert.Equal(t, "next", got[1]["id"])
}

// A unit test of the pool's own bookkeeping, on a fake engine: every case is followed
// by a reset, whatever its markup (no pattern decides).
func TestServeResetsPageAfterEveryCase(t *testing.T) {
	e := &fakeEngine{name: browser.Chromium}
	o := fakeOracle(e)
	serveLines(t, o, strings.Join([]string{
		`{"id":1,"html":"<div style='width:10px'></div>"}`,
		`{"id":2,"html":"<img/onerror=\"setInterval(f)\" src=\"data:,\">"}`,
		`{"id":3,"html":"<p>","script":"window.x=1"}`,
		`{"id":4,"html":"<img src=\"data:,\"onerror=\"x()\">"}`,
		`{"id":5,"op":"reflect","html":"<input id=a>","probes":[{"selector":"#a","attr":"value"}]}`,
		`{"id":6,"html":"<p>on stage = fine</p>"}`,
	}, "\n")+"\n")
	o.resets.Wait() // resets run after the answers, so after Serve may return (Close waits, too)
	assert.Equal(t, int32(6), e.resets.Load(), "every case, pure markup too, is followed by a reset")
}

// countingEngine records how many calls overlap.
type countingEngine struct {
	fakeEngine
	now, max, calls atomic.Int32
}

func (c *countingEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	c.calls.Add(1)
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for {
		m := c.max.Load()
		if n <= m || c.max.CompareAndSwap(m, n) {
			break
		}
	}
	return c.fakeEngine.Load(ctx, html, fn, args...)
}

func TestServeKeepsInflightRequestsOnSeparatePages(t *testing.T) {
	a := &countingEngine{fakeEngine: fakeEngine{name: browser.Chromium, delay: 20 * time.Millisecond}}
	b := &countingEngine{fakeEngine: fakeEngine{name: browser.Chromium, delay: 20 * time.Millisecond}}
	o := &Oracle{engines: map[string]*pool.Pool{browser.Chromium: pool.New(browser.Chromium, []browser.Engine{a, b})}, order: []string{browser.Chromium},
		profile: "default", deadline: 5 * time.Second, inflight: 2, log: zerolog.Nop()}
	var lines []string
	for i := 0; i < 20; i++ {
		lines = append(lines, fmt.Sprintf(`{"id":%d,"html":"<p>"}`, i))
	}
	got := serveLines(t, o, strings.Join(lines, "\n")+"\n")
	ids, _ := byID(t, got)
	require.Len(t, ids, 20, "every request answered once")
	for i := 0; i < 20; i++ {
		assert.Contains(t, ids[fmt.Sprint(i)]["dumps"], browser.Chromium)
	}
	assert.Equal(t, int32(1), a.max.Load(), "a page serves one call at a time")
	assert.Equal(t, int32(1), b.max.Load(), "a page serves one call at a time")
	assert.Equal(t, int32(20), a.calls.Load()+b.calls.Load())
	assert.Positive(t, a.calls.Load(), "both pages serve when two requests are in flight")
	assert.Positive(t, b.calls.Load(), "both pages serve when two requests are in flight")
}

// FuzzServe feeds arbitrary input to the request loop (with stand-in engines): it
// must never panic, and must write only JSON lines, each carrying an "id" key.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a","html":"<p>"}`, `{"id":1,"op":"ping"}`, `{"id":"r","op":"reflect","probes":[{"selector":"#a","attr":"x"}]}`,
		`{"id":"t","op":"trace","script":"x"}`, `not json`, `{"id":{"x":1}}`, `{"id":"e","engines":[null]}`, "{\"id\":\"\xff\"}",
	} {
		f.Add(seed + "\n" + `{"id":"z","op":"ping"}`)
	}
	f.Fuzz(func(t *testing.T, input string) {
		o := fakeOracle(&fakeEngine{name: browser.Chromium})
		var out strings.Builder
		if err := o.Serve(context.Background(), strings.NewReader(input), &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line == "" {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("non-JSON output line %q: %v", line, err)
			}
			if !utf8.ValidString(line) {
				t.Fatalf("output line is not valid UTF-8: %q", line)
			}
			if _, ok := m["id"]; !ok {
				t.Fatalf("response without id: %s", line)
			}
		}
	})
}

type panickingEngine struct{ fakeEngine }

func (p *panickingEngine) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	panic("boom")
}

func TestServeTurnsAPanicIntoThatEnginesError(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Firefox})
	o.engines[browser.Chromium] = pool.New(browser.Chromium, []browser.Engine{&panickingEngine{fakeEngine{name: browser.Chromium}}})
	o.order = append(o.order, browser.Chromium)
	got := serveLines(t, o, `{"id":"p","html":"<p>"}`+"\n"+`{"id":"next","op":"ping"}`+"\n")
	ids, _ := byID(t, got)
	assert.Equal(t, map[string]any{"chromium": "internal error: boom"}, ids["p"]["errors"])
	assert.Contains(t, ids["p"]["dumps"], browser.Firefox)
	assert.Equal(t, true, ids["next"]["ok"])
}
