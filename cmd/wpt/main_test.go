package main

// Unit tests of the command's own code: requests reads testdata/wpt (real WPT files
// plus the oracle's own test pages) and runs no browser; summary is fed response
// lines written here. The requests it prints are run against the real engines in
// cmd/oracle's webcontent tests (the same files, by url).

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What wpt run refuses, requests refuses too: a root that is no directory, a
// pattern that matches nothing; and a kind or limit that means nothing. Each exited
// 0 with nothing printed before.
func TestRequestsRefusesWhatMatchesNothing(t *testing.T) {
	for want, args := range map[string][]string{
		"not a directory":      {"--root", "/nonexistent", "*"},
		"no test file under":   {"--root", "../../testdata/wpt", "no/such/dir"},
		`--kinds "bogus"`:      {"--root", "../../testdata/wpt", "--kinds", "reftest,bogus", "css"},
		"--limit must be >= 0": {"--root", "../../testdata/wpt", "--limit", "-1", "css"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, run(append([]string{"requests"}, args...), nil, &out, &errb), "%v", args)
		assert.Contains(t, errb.String(), want, "%v", args)
		assert.Empty(t, out.String(), "%v", args)
	}
}

func TestRequestsListsReftestsTheirReferencesAndTestharnessTests(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"requests", "--root", "../../testdata/wpt", "css/CSS2/css1", "oracle-tests/*.html"}, nil, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		got = append(got, m)
	}
	assert.Equal(t, []map[string]any{
		{"id": "/css/CSS2/css1/c414-flt-fit-001.xht", "url": "/css/CSS2/css1/c414-flt-fit-001.xht"},
		{"id": "/oracle-tests/reftest-fail.html", "url": "/oracle-tests/reftest-fail.html"},
		{"id": "/oracle-tests/reftest-ref.html", "url": "/oracle-tests/reftest-ref.html"},
		{"id": "/oracle-tests/reftest-match.html", "url": "/oracle-tests/reftest-match.html"},
		{"id": "/oracle-tests/reftest-mismatch.html", "url": "/oracle-tests/reftest-mismatch.html"},
		{"id": "/oracle-tests/reftest-pixels-match.html", "url": "/oracle-tests/reftest-pixels-match.html"},
		{"id": "/oracle-tests/testharness-pass-fail.html", "op": "trace", "url": "/oracle-tests/testharness-pass-fail.html", "script": ""},
	}, got)
	// Its reference (c414-flt-fit-001-ref.xht) is not in testdata: named, not requested.
	assert.Contains(t, errb.String(), "reference css/CSS2/css1/c414-flt-fit-001-ref.xht")
}

func TestReferencesResolveRelativeAndAbsoluteHrefs(t *testing.T) {
	got := references("css/a/b.html", []byte(`<link rel="match" href="b-ref.html"><link href='../reference/r.xht' rel=mismatch>`+
		`<link rel="help" href="x.html"><LINK REL="match" HREF="/css/z.html#f"><link rel="match" href="../../../out.html">`))
	assert.Equal(t, []reference{{"css/a/b-ref.html", false}, {"css/reference/r.xht", true}, {"css/z.html", false}}, got)
}

// An href is a URL: the HTML parser strips its leading and trailing ASCII
// whitespace (WPT's css/CSS2/tables/border-collapse-005.html links "...-ref.html "),
// and about:blank is no path under the test's directory (other schemes are dropped).
func TestReferencesTrimWhitespaceAndSkipSchemes(t *testing.T) {
	got := references("css/a/b.html", []byte("<link rel=match href=\" b-ref.html\t\"><link rel=mismatch href=\"about:blank\"><link rel=match href=\"data:text/html,x\">"))
	assert.Equal(t, []reference{{"css/a/b-ref.html", false}, {"about:blank", true}}, got)

	// The reftest naming about:blank is skipped, with the reason, never an ERROR.
	tests, ok := planSpecial(nil, t.TempDir(), "css/a/t.html", []byte(`<link rel="mismatch" href="about:blank"><p>x`))
	require.True(t, ok)
	require.Len(t, tests, 1)
	assert.Contains(t, tests[0].Skip, "about:blank")
}

// A geometry case voted 2-1 on one item, a testharness case with a split subtest.
func TestSummaryCountsVotesPerDirectory(t *testing.T) {
	d := func(engine string, w float64) string {
		return `{"engine":"` + engine + `","engine_version":"1","viewport":{"width":800,"height":600},"overflowed":false,"nodes":[` +
			`{"index":0,"parent":-1,"tag":"HTML","depth":0,"bounding":{"x":0,"y":0,"w":800,"h":10},"rects":[{"x":0,"y":0,"w":800,"h":10}],"style":{}},` +
			`{"index":1,"parent":0,"tag":"DIV","depth":1,"bounding":{"x":0,"y":0,"w":` + strconv.FormatFloat(w, 'f', -1, 64) + `,"h":10},"rects":[{"x":0,"y":0,"w":10,"h":10}],"style":{}}]}`
	}
	tr := func(engine, second string) string {
		return `{"engine":"` + engine + `","engine_version":"1","profile":"default","origin":"http://x","is_secure_context":true,"timed_out":false,"records":[` +
			`{"seq":0,"kind":"value","label":"a","value":"PASS"},{"seq":1,"kind":"value","label":"b","value":"` + second + `"}]}`
	}
	in := `{"id":"/css/x/a.html","dumps":{"chromium":` + d("chromium", 10) + `,"firefox":` + d("firefox", 10) + `,"webkit":` + d("webkit", 12) + `}}
{"id":"/css/x/b.html","dumps":{"chromium":` + d("chromium", 10) + `,"firefox":` + d("firefox", 10) + `,"webkit":` + d("webkit", 10) + `}}
{"id":"/css/y/t.html","traces":{"chromium":` + tr("chromium", "PASS") + `,"firefox":` + tr("firefox", "FAIL") + `,"webkit":` + tr("webkit", "TIMEOUT") + `}}
{"id":"/css/y/e.html","dumps":{"chromium":` + d("chromium", 10) + `},"errors":{"firefox":"timed out","webkit":"timed out"}}
{"id":"/css/y/r.html","error":"give either \"html\" or \"url\", not both"}
`
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"summary", "--json"}, strings.NewReader(in), &out, &errb), errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	var x, y struct {
		Dir   string    `json:"dir"`
		Stats *dirStats `json:"stats"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &x))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &y))
	assert.Equal(t, "/css/x", x.Dir)
	assert.Equal(t, 2, x.Stats.Cases)
	assert.Equal(t, 1, x.Stats.Unanimous)
	assert.Equal(t, 1, x.Stats.Majority)
	assert.Equal(t, 1, x.Stats.Outvoted["webkit"])
	assert.Equal(t, "/css/y", y.Dir)
	assert.Equal(t, 3, y.Stats.Cases)
	assert.Equal(t, 1, y.Stats.Split)
	assert.Equal(t, map[string]int{"unanimous": 1, "split": 1}, y.Stats.Subtests)
	assert.Equal(t, 1, y.Stats.RequestErrs)
	assert.Equal(t, 1, y.Stats.Unvoted)
	assert.Equal(t, map[string]int{"firefox": 1, "webkit": 1}, y.Stats.EngineErrs)
}

// WPT's manifest ignores the name: a file that links a reference is a reftest, one
// named as a reference ("-ref") too, and a file without links is none.
func TestClassifyFollowsWPTsManifest(t *testing.T) {
	link := []byte(`<link rel="mismatch" href="x.html">`)
	for _, name := range []string{"a/b-ref.html", "a/b-notref.html", "a/b_ref2.xht", "a/ref-b.html", "a/b.html", "a/reflow-1.html"} {
		kind, refs := classify(name, link)
		assert.Equal(t, kindReftest, kind, name)
		assert.Equal(t, []reference{{Path: "a/x.html", Mismatch: true}}, refs, name)
		kind, _ = classify(name, []byte(`<p>a reference</p>`))
		assert.Equal(t, "", kind, name)
	}
}

// Test files are found outside WPT's non-test directories only, and in reference/.
func TestMatchFilesSkipsWPTsNonTestDirectories(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"a/t.html", "a/reference/r.html", "a/common/c.html", "a/support/s.html", "a/resources/s.html",
		"b/tools/s.html", "common/c.html", "css/common/c.html", "css/CSS2/archive/a.xht", "css/CSS2/t.xht", "a/.x/t.html", "a/t-manual.html", "a/t.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	got, err := matchFiles(root, []string{"a", "b", "common", "css"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/common/c.html", "a/reference/r.html", "a/t.html", "css/CSS2/t.xht"}, got)
}

// A trace that recorded no subtest is flagged in summary as in run's report: the
// held-out .any.js run that recorded only the harness status went unnoticed.
func TestSummaryFlagsEmptyTraces(t *testing.T) {
	tr := func(engine, records string) string {
		return `{"engine":"` + engine + `","engine_version":"1","profile":"default","origin":"http://x","is_secure_context":true,"timed_out":false,"records":[` + records + `]}`
	}
	harnessOnly := `{"seq":0,"kind":"value","label":"(harness)","value":"OK"}`
	full := `{"seq":0,"kind":"value","label":"a","value":"PASS"},{"seq":1,"kind":"value","label":"(harness)","value":"OK"}`
	in := `{"id":"/dom/e.any.html","traces":{"chromium":` + tr("chromium", harnessOnly) + `,"firefox":` + tr("firefox", full) + `,"webkit":` + tr("webkit", harnessOnly) + `}}
{"id":"/dom/f.html","traces":{"chromium":` + tr("chromium", full) + `,"firefox":` + tr("firefox", full) + `,"webkit":` + tr("webkit", full) + `}}
`
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"summary", "--json"}, strings.NewReader(in), &out, &errb), errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var d struct {
		Stats *dirStats `json:"stats"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &d))
	assert.Equal(t, map[string]int{"chromium": 1, "webkit": 1}, d.Stats.EmptyTraces)
	require.Len(t, d.Stats.EmptyNotes, 2)
	assert.Equal(t, "/dom/e.any.html", d.Stats.EmptyNotes[0].Test)
	assert.Equal(t, "chromium", d.Stats.EmptyNotes[0].Engine)
	assert.True(t, strings.HasPrefix(d.Stats.EmptyNotes[0].Message, "empty trace"), d.Stats.EmptyNotes[0].Message)

	out.Reset()
	require.Equal(t, 0, run([]string{"summary"}, strings.NewReader(in), &out, &errb), errb.String())
	assert.Contains(t, out.String(), "/dom/e.any.html webkit: empty trace: the harness completed OK without any subtest")
	assert.NotContains(t, out.String(), "/dom/f.html firefox")
}
