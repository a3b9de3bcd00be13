package main

// Unit tests of the wptreport writing: the traces, dumps and answers are written
// here (no browser); TestRunWritesWptreports runs the same code on real engines.

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/trace"
)

func valueRecord(t *testing.T, seq int, label, value string) trace.Record {
	v, err := json.Marshal(value)
	require.NoError(t, err)
	return trace.Record{Seq: seq, Kind: "value", Label: label, Value: v}
}

func TestHarnessResultReadsTheReportScriptsRecords(t *testing.T) {
	tr := &trace.Trace{Records: []trace.Record{
		valueRecord(t, 0, "a", "PASS"), valueRecord(t, 1, "b", "FAIL"), valueRecord(t, 2, "(harness)", "OK")}}
	st, m, subs := harnessResult(tr)
	assert.Equal(t, "OK", st)
	assert.Nil(t, m)
	assert.Equal(t, []wptSubtest{{Name: "a", Status: "PASS"}, {Name: "b", Status: "FAIL"}}, subs)

	// Messages: a subtest's own (the record's, unvoted), null on a PASS even when the
	// record has one; the harness's becomes the test's, and follows an empty trace's.
	withMsg := func(r trace.Record, m string) trace.Record { r.Message = m; return r }
	tr = &trace.Trace{Records: []trace.Record{
		withMsg(valueRecord(t, 0, "a", "PASS"), "ignored"), withMsg(valueRecord(t, 1, "b", "FAIL"), "assert_true: expected true got false"),
		valueRecord(t, 2, "c", "NOTRUN"), withMsg(valueRecord(t, 3, "(harness)", "ERROR"), "Uncaught ReferenceError: x is not defined")}}
	st, m, subs = harnessResult(tr)
	assert.Equal(t, "ERROR", st)
	require.NotNil(t, m)
	assert.Equal(t, "Uncaught ReferenceError: x is not defined", *m)
	assert.Equal(t, []wptSubtest{{Name: "a", Status: "PASS"}, {Name: "b", Status: "FAIL", Message: msg("assert_true: expected true got false")},
		{Name: "c", Status: "NOTRUN"}}, subs)
	st, m, _ = harnessResult(&trace.Trace{Records: []trace.Record{withMsg(valueRecord(t, 0, "(harness)", "ERROR"), "Uncaught TypeError")}})
	assert.Equal(t, "ERROR", st)
	assert.Equal(t, "empty trace: the harness completed ERROR without any subtest: Uncaught TypeError", *m)

	st, m, subs = harnessResult(&trace.Trace{TimedOut: true})
	assert.Equal(t, "TIMEOUT", st)
	assert.Contains(t, *m, "did not complete")
	assert.Equal(t, []wptSubtest{}, subs) // [] in the JSON, not null

	st, m, _ = harnessResult(&trace.Trace{Records: []trace.Record{valueRecord(t, 0, "a", "PASS")}})
	assert.Equal(t, "ERROR", st)
	assert.Contains(t, *m, "without a harness status")
}

// page is a dump of html > head > title, body > divs of the given widths (10px high,
// stacked): the head's elements have no box.
func withShot(d *dump.Dump, png string) *dump.Dump {
	d.Screenshot = png
	return d
}

func page(widths ...float64) *dump.Dump {
	d := &dump.Dump{Engine: "chromium", EngineVersion: "1", Viewport: dump.Size{Width: 800, Height: 600}}
	box := func(parent, depth int, tag string, r dump.Rect) {
		n := dump.Node{Index: len(d.Nodes), Parent: parent, Tag: tag, Depth: depth, Bounding: r, Style: dump.Style{}}
		if r.W > 0 {
			n.Rects = []dump.Rect{r}
		}
		d.Nodes = append(d.Nodes, n)
	}
	h := float64(10 * len(widths))
	box(-1, 0, "HTML", dump.Rect{W: 800, H: h})
	box(0, 1, "HEAD", dump.Rect{})
	box(1, 2, "TITLE", dump.Rect{})
	box(0, 1, "BODY", dump.Rect{W: 800, H: h})
	for i, w := range widths {
		box(3, 2, "DIV", dump.Rect{Y: float64(10 * i), W: w, H: 10})
	}
	return d
}

func TestReftestResultIsAGeometryVerdict(t *testing.T) {
	tol := dump.DefaultTolerance
	// The test's head has one more element (a <link rel=help>) than the reference's:
	// html, head, title, link, body (index 4), two divs.
	test := page(100, 50)
	link := dump.Node{Tag: "LINK", Parent: 1, Depth: 2, Style: dump.Style{}}
	test.Nodes = append(test.Nodes[:3], append([]dump.Node{link}, test.Nodes[3:]...)...)
	for i := range test.Nodes {
		test.Nodes[i].Index = i
		if i > 4 {
			test.Nodes[i].Parent = 4
		}
	}
	require.NoError(t, test.Validate())

	st, m := reftestResult(test, []refAnswer{{URL: "/r.html", Dump: page(100, 50)}}, tol)
	assert.Equal(t, "PASS", st)
	assert.Contains(t, *m, "geometry verdict")
	assert.Contains(t, *m, "== /r.html: layouts equal")

	st, m = reftestResult(test, []refAnswer{{URL: "/r.html", Dump: page(100, 51)}}, tol)
	assert.Equal(t, "FAIL", st)
	assert.Contains(t, *m, "layouts differ (2 items, the first box 3 DIV bounding.w 51 vs 50)")

	st, m = reftestResult(test, []refAnswer{{URL: "/r.html", Dump: page(100)}}, tol)
	assert.Equal(t, "FAIL", st)
	assert.Contains(t, *m, "box trees differ at box 3: reference end, test DIV")

	// One match reference of two suffices; every mismatch must differ.
	st, _ = reftestResult(test, []refAnswer{{URL: "/a.html", Dump: page(1, 1)}, {URL: "/b.html", Dump: page(100, 50)}}, tol)
	assert.Equal(t, "PASS", st)
	st, _ = reftestResult(test, []refAnswer{{URL: "/a.html", Dump: page(100, 50)}, {URL: "/n.html", Mismatch: true, Dump: page(100, 50)}}, tol)
	assert.Equal(t, "FAIL", st)
	st, m = reftestResult(test, []refAnswer{{URL: "/n.html", Mismatch: true, Dump: page(100, 52)}}, tol)
	assert.Equal(t, "PASS", st)
	assert.Contains(t, *m, "!= /n.html: layouts differ")

	over := page(100, 50)
	over.Overflowed = true
	st, m = reftestResult(test, []refAnswer{{URL: "/r.html", Dump: over}}, tol)
	assert.Equal(t, "FAIL", st)
	assert.Contains(t, *m, "only one overflowed")

	st, m = reftestResult(test, []refAnswer{{URL: "/r.html", Err: "timed out"}}, tol)
	assert.Equal(t, "EXTERNAL-TIMEOUT", st, "the oracle's deadline ended the reference")
	assert.Equal(t, "geometry verdict: reference /r.html: timed out", *m)
}

// A run's answers as the oracle gives them, turned into one engine's report and
// written: every field wptreport.py writes, and none it does not.
func TestEngineResultsWriteTheWptreportFields(t *testing.T) {
	tr := &trace.Trace{Engine: "firefox", Records: []trace.Record{valueRecord(t, 0, "a", "PASS"), valueRecord(t, 1, "(harness)", "OK")}}
	tests := []plannedTest{
		{URL: "/x/th.html", Kind: kindTestharness},
		{URL: "/x/ref.html", Kind: kindReftest, Refs: []reference{{Path: "x/ref-ref.html"}}},
		{URL: "/x/missing-ref.html", Kind: kindReftest, Refs: []reference{{Path: "x/nope.html"}}},
		{URL: "/x/crashed.html", Kind: kindTestharness},
		{URL: "/x/refused.html", Kind: kindTestharness},
		{URL: "/x/engine-error.html", Kind: kindTestharness},
		{URL: "/x/not-run.html", Kind: kindReftest, Refs: []reference{{Path: "x/nope.html"}}}, // planRun sent nothing
		{URL: "/x/page-crash.html", Kind: kindTestharness},
		{URL: "/x/fail.html", Kind: kindReftest, Refs: []reference{{Path: "x/fail-ref.html"}}},
	}
	ans := func(r *client.Response) answer {
		return answer{Resp: r, Durations: map[string]time.Duration{"firefox": 1500 * time.Millisecond, "webkit": 700 * time.Millisecond}}
	}
	answers := map[string]answer{
		"/x/th.html":           ans(&client.Response{Traces: map[string]*trace.Trace{"firefox": tr}}),
		"/x/ref.html":          ans(&client.Response{Dumps: map[string]*dump.Dump{"firefox": page(10)}}),
		"/x/ref-ref.html":      ans(&client.Response{Dumps: map[string]*dump.Dump{"firefox": page(10)}}),
		"/x/missing-ref.html":  ans(&client.Response{Dumps: map[string]*dump.Dump{"firefox": page(10)}}),
		"/x/crashed.html":      {Err: errors.New("oracle exited (signal: killed) while this request was in flight")},
		"/x/refused.html":      ans(&client.Response{Error: "bad url"}),
		"/x/engine-error.html": ans(&client.Response{Errors: map[string]string{"firefox": "timed out after 30000 ms"}}),
		"/x/page-crash.html":   ans(&client.Response{Errors: map[string]string{"firefox": "firefox: page crashed (its renderer or content process died): x"}}),
		"/x/fail.html":         ans(&client.Response{Dumps: map[string]*dump.Dump{"firefox": withShot(page(10), screenshot(t, nil))}}),
		"/x/fail-ref.html":     ans(&client.Response{Dumps: map[string]*dump.Dump{"firefox": withShot(page(10), screenshot(t, map[image.Point]color.RGBA{{1, 1}: {R: 255, A: 255}}))}}),
	}
	rep := wptReport{RunInfo: runInfo{Product: "firefox", BrowserVersion: "140.0", OS: "linux", Headless: true},
		TimeStart: 1000, TimeEnd: 2000, Results: engineResults("firefox", tests, answers, dump.DefaultTolerance, false)}
	file := filepath.Join(t.TempDir(), "wptreport-firefox.json")
	require.NoError(t, writeJSON(file, rep))
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	requireWptreportSchema(t, b)
	assert.Equal(t, map[string]any{"product": "firefox", "browser_version": "140.0", "os": "linux", "headless": true, "verify": false}, got["run_info"])
	assert.Equal(t, 1000.0, got["time_start"])
	assert.Equal(t, 2000.0, got["time_end"])
	results := got["results"].([]any)
	require.Len(t, results, 9)
	assert.Equal(t, map[string]any{"test": "/x/th.html", "status": "OK", "message": nil, "duration": 1500.0,
		"subtests": []any{map[string]any{"name": "a", "status": "PASS", "message": nil}}}, results[0])
	status := func(i int) (string, string) {
		r := results[i].(map[string]any)
		m, _ := r["message"].(string)
		return r["status"].(string), m
	}
	st, _ := status(1)
	assert.Equal(t, "PASS", st)
	assert.Nil(t, results[1].(map[string]any)["message"], "a PASS has message null, as wptrunner writes it")
	assert.NotContains(t, results[1], "screenshots")
	st, m := status(2)
	assert.Equal(t, "ERROR", st)
	assert.Contains(t, m, "/x/nope.html: not found under the root")
	st, m = status(3)
	assert.Equal(t, "ERROR", st)
	assert.Contains(t, m, "oracle exited")
	assert.Equal(t, 0.0, results[3].(map[string]any)["duration"]) // never answered
	st, m = status(4)
	assert.Equal(t, "ERROR", st)
	assert.Equal(t, "the oracle refused the request: bad url", m)
	st, m = status(5)
	assert.Equal(t, "EXTERNAL-TIMEOUT", st, "the oracle's deadline, not the test's harness")
	assert.Equal(t, "timed out after 30000 ms", m)
	st, m = status(6)
	assert.Equal(t, "ERROR", st)
	assert.Equal(t, "reftest: reference /x/nope.html: not found under the root", m)
	st, _ = status(7)
	assert.Equal(t, "CRASH", st)
	// A failing reftest carries wptrunner's screenshots: SHA-1 of each PNG.
	st, _ = status(8)
	assert.Equal(t, "FAIL", st)
	hash := func(d *dump.Dump) string {
		raw, err := base64.StdEncoding.DecodeString(d.Screenshot)
		require.NoError(t, err)
		return fmt.Sprintf("sha1:%x", sha1.Sum(raw))
	}
	assert.Equal(t, map[string]any{"/x/fail.html": hash(answers["/x/fail.html"].Resp.Dumps["firefox"]),
		"/x/fail-ref.html": hash(answers["/x/fail-ref.html"].Resp.Dumps["firefox"])}, results[8].(map[string]any)["screenshots"])
	// Each engine's own duration.
	webkit := engineResults("webkit", tests, answers, dump.DefaultTolerance, false)
	assert.Equal(t, int64(700), webkit[0].Duration)

	// Interrupted: the tests never sent are left out, the others kept.
	got2 := engineResults("firefox", tests, answers, dump.DefaultTolerance, true)
	require.Len(t, got2, 8)
	assert.NotEqual(t, "/x/not-run.html", got2[len(got2)-1].Test)
}

func TestOracleFlagsKeepTheStoreOffUnlessGiven(t *testing.T) {
	assert.Equal(t, []string{"--docroot", "R", "--store=off", "--parallel=256", "--verify", "3"}, oracleFlags("R", []string{"--verify", "3"}))
	assert.Equal(t, []string{"--docroot", "R", "--parallel=256", "--store", "s.db"}, oracleFlags("R", []string{"--store", "s.db"}))
	assert.Equal(t, []string{"--docroot", "R", "--parallel=256", "-store=x"}, oracleFlags("R", []string{"-store=x"}))
	assert.Equal(t, []string{"--docroot", "R", "--store=off", "--parallel=256", "--store-min-runs", "2"}, oracleFlags("R", []string{"--store-min-runs", "2"}))
	assert.Equal(t, []string{"--docroot", "R", "--store=off", "--parallel", "2"}, oracleFlags("R", []string{"--parallel", "2"}))
	assert.Equal(t, []string{"--docroot", "R", "--store=off", "--inflight", "2"}, oracleFlags("R", []string{"--inflight", "2"}), "the deprecated spelling is the user's choice too")
	assert.True(t, verifies([]string{"--pages=1", "--verify", "3"}))
	assert.True(t, verifies([]string{"-verify=2"}))
	assert.False(t, verifies([]string{"--verify=1"}))
	assert.False(t, verifies([]string{"--store-min-runs", "3"}))
	own, rest := splitDashes([]string{"--root", "R", "css", "--", "--verify", "3"})
	assert.Equal(t, []string{"--root", "R", "css"}, own)
	assert.Equal(t, []string{"--verify", "3"}, rest)
}

// requireWptreportSchema checks b against the wptreport crate's reader (0.0.13,
// src/reports/wpt_report.rs, transcribed: its registry is not reachable here):
// time_start and time_end unsigned integers, run_info an object, and each result's
// test, status (its TestStatus), duration (an integer, required), message (string
// or null, optional) and subtests (name, status of SubtestStatus, message). One
// status is added to the crate's TestStatus: EXTERNAL-TIMEOUT, which wptrunner
// writes (wpttest.py, TestharnessResult and ReftestResult) and wpt run gives when
// the oracle's deadline ends a test; the crate's 0.0.13 does not read it.
func requireWptreportSchema(t *testing.T, b []byte) {
	t.Helper()
	testStatus := map[string]bool{"PASS": true, "FAIL": true, "OK": true, "ERROR": true, "TIMEOUT": true, "CRASH": true,
		"ASSERT": true, "PRECONDITION_FAILED": true, "SKIP": true, "EXTERNAL-TIMEOUT": true}
	subtestStatus := map[string]bool{"PASS": true, "FAIL": true, "ERROR": true, "TIMEOUT": true, "ASSERT": true,
		"PRECONDITION_FAILED": true, "NOTRUN": true, "SKIP": true}
	var r struct {
		TimeStart *uint64          `json:"time_start"`
		TimeEnd   *uint64          `json:"time_end"`
		RunInfo   map[string]any   `json:"run_info"`
		Results   []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotNil(t, r.TimeStart, "time_start")
	require.NotNil(t, r.TimeEnd, "time_end")
	require.NotNil(t, r.RunInfo, "run_info")
	require.NotNil(t, r.Results, "results")
	for _, res := range r.Results {
		require.IsType(t, "", res["test"], "test: %v", res)
		require.True(t, testStatus[res["status"].(string)], "status: %v", res)
		d, ok := res["duration"].(float64)
		require.True(t, ok && d == float64(int64(d)), "duration: %v", res)
		if m, ok := res["message"]; ok && m != nil {
			require.IsType(t, "", m, "message: %v", res)
		}
		if subs, ok := res["subtests"]; ok {
			for _, s := range subs.([]any) {
				s := s.(map[string]any)
				require.IsType(t, "", s["name"], "subtest name: %v", s)
				require.True(t, subtestStatus[s["status"].(string)], "subtest status: %v", s)
				if m := s["message"]; m != nil {
					require.IsType(t, "", m, "subtest message: %v", s)
				}
			}
		}
	}
}

// The oracle's engine errors as wptrunner's statuses; an oracle that exited is
// ERROR whatever its log's last line says.
func TestErrorStatusKeepsCrashesAndTimeoutsApart(t *testing.T) {
	for why, want := range map[string]string{
		"page crashed (its renderer or content process died): x":           "CRASH",
		"chromium: page crashed (its renderer or content process died): x": "CRASH",
		"firefox: browser crashed or disconnected: EOF":                    "CRASH",
		"timed out after 30s": "EXTERNAL-TIMEOUT",
		"timed out after 30s (the engine hit its memory bound, --engine-memory=512M: ...)":                             "EXTERNAL-TIMEOUT",
		"webkit: navigate: case timed out: script timeout":                                                             "EXTERNAL-TIMEOUT",
		"context deadline exceeded":                                                                                    "EXTERNAL-TIMEOUT",
		`oracle exited (signal: killed; its stderr ends: {"message":"page crashed"}) while this request was in flight`: "ERROR",
		"the oracle refused the request: bad url":                                                                      "ERROR",
		"not run": "ERROR",
	} {
		assert.Equal(t, want, errorStatus(why), why)
	}
}

// writeJSON writes v to file as jsonLine.
func writeJSON(file string, v any) error {
	b, err := jsonLine(v)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}
