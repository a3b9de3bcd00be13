package oracle

// Unit tests of the line protocol only: parsing, error responses and the request
// loop. The loop tests use fakeEngine, a stand-in written for this file that runs no
// browser; the real engines are tested in cmd/oracle's end-to-end tests.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRequestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, line, wantID, wantErr string
	}{
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
		{"geometry without html", `{"id":"g"}`, `"g"`, `geometry request needs "html"`},
		{"trace without script", `{"id":"tr","op":"trace"}`, `"tr"`, `trace request needs "script"`},
		{"reflect without probes", `{"id":"r","op":"reflect","html":""}`, `"r"`, `non-empty "probes"`},
		{"class selector", `{"id":"r","op":"reflect","probes":[{"selector":".a","attr":"x"}]}`, `"r"`, `probes[0]: selector ".a" is not a bare #id`},
		{"compound selector", `{"id":"r","op":"reflect","probes":[{"selector":"#a","attr":"x"},{"selector":"div > #a","attr":"x"}]}`, `"r"`, `probes[1]: selector "div > #a" is not a bare #id`},
		{"probes wrong type", `{"id":"r","op":"reflect","probes":"#a"}`, `"r"`, `field "probes" must be an array of {"selector","attr","idl"} objects, not string`},
		{"engine not a string", `{"id":"e","html":"","engines":[1]}`, `"e"`, `field "engines" must be an array of strings, not number`},
		{"probe without attr", `{"id":"r","op":"reflect","probes":[{"selector":"#a"}]}`, `"r"`, `probes[0] needs`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, id, err := ParseRequest([]byte(tc.line))
			assert.Nil(t, req)
			assert.Equal(t, tc.wantID, string(id))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
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
	name  string
	delay time.Duration
}

func (f *fakeEngine) Name() string    { return f.name }
func (f *fakeEngine) Version() string { return "0.0-fake" }
func (f *fakeEngine) Route() string   { return "fake" }
func (f *fakeEngine) Close() error    { return nil }
func (f *fakeEngine) Visit(ctx context.Context, url, fn string, args ...any) (json.RawMessage, error) {
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
	return json.RawMessage(`{"dump":{"viewport":{"width":800,"height":600},"overflowed":false,"nodes":[
		{"index":0,"parent":-1,"tag":"HTML","depth":0,"bounding":{"x":0,"y":0,"w":800,"h":10},"rects":[],"style":{}}]}}`), nil
}

func fakeOracle(engines ...*fakeEngine) *Oracle {
	o := &Oracle{engines: map[string]*slot{}, profile: "default", deadline: time.Second, log: zerolog.Nop()}
	for _, e := range engines {
		o.engines[e.name] = &slot{engine: e}
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

func TestServeAnswersEveryLineAndKeepsServing(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: Chromium})
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
	assert.Equal(t, map[string]any{"id": nil, "error": "request must be a JSON object"}, got[0])
	assert.Equal(t, "a", got[1]["id"])
	assert.Contains(t, got[1]["error"], "unknown op")
	assert.Equal(t, nil, got[2]["id"])
	assert.Equal(t, "ok", got[3]["id"])
	assert.Contains(t, got[3]["dumps"], Chromium)
	assert.NotContains(t, got[3], "errors", "errors is omitted when empty")
	assert.Equal(t, map[string]any{"webkit": "engine not launched"}, got[4]["errors"])
	assert.Equal(t, map[string]any{"chromium": "script threw: Error: boom"}, got[5]["errors"])
	assert.Equal(t, map[string]any{}, got[5]["dumps"])
	if diff := cmp.Diff(map[string]any{
		"id": "p", "ok": true, "engines": []any{"chromium"}, "versions": map[string]any{"chromium": "0.0-fake"},
		"profile": "default", "routes": map[string]any{"chromium": "fake"},
	}, got[6]); diff != "" {
		t.Errorf("ping (-want +got):\n%s", diff)
	}
}

func TestServeStopsAtShutdownAndAtEOFWithoutNewline(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: Chromium})
	got := serveLines(t, o, `{"id":"s","op":"shutdown"}`+"\n"+`{"id":"never","op":"ping"}`+"\n")
	assert.Equal(t, []map[string]any{{"id": "s", "ok": true}}, got)

	got = serveLines(t, o, `{"id":"last","op":"ping"}`) // no trailing newline
	require.Len(t, got, 1)
	assert.Equal(t, "last", got[0]["id"])
}

func TestServeDeadlineIsAnEngineError(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: Chromium, delay: time.Hour}, &fakeEngine{name: Firefox})
	o.deadline = 50 * time.Millisecond
	got := serveLines(t, o, `{"id":"slow","html":"<p>"}`+"\n")
	require.Len(t, got, 1)
	assert.Equal(t, map[string]any{"chromium": "timed out after 50ms"}, got[0]["errors"])
	assert.Contains(t, got[0]["dumps"], Firefox)
}

func TestServeRejectsOverlongLineAndReadsTheNext(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: Chromium})
	o.maxLine = 100
	long := `{"id":"big","html":"` + strings.Repeat("x", 200_000) + `"}`
	got := serveLines(t, o, long+"\n"+`{"id":"next","op":"ping"}`+"\n")
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"id": nil, "error": "request line exceeds the maximum of 100 bytes"}, got[0])
	assert.Equal(t, "next", got[1]["id"])
}
