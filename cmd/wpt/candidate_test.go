package main

// Unit tests of wpt compare's vote: the reports are written here.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVoteStatus(t *testing.T) {
	three := func(a, b, c string) map[string]string {
		return map[string]string{"chromium": a, "firefox": b, "webkit": c}
	}
	for _, c := range []struct {
		cand    string
		engines map[string]string
		want    string
	}{
		{"PASS", three("PASS", "PASS", "PASS"), "agree"},
		{"OK", three("OK", "OK", "OK"), "agree"},
		{"FAIL", three("PASS", "PASS", "PASS"), "candidate-only"},
		{"PASS", three("FAIL", "FAIL", "FAIL"), "candidate-only"},
		// Not run by the candidate: missing, not its failure.
		{"MISSING", three("PASS", "PASS", "PASS"), "missing"},
		{"FAIL", three("FAIL", "FAIL", "FAIL"), "shared"},
		{"TIMEOUT", three("TIMEOUT", "TIMEOUT", "TIMEOUT"), "shared"},
		{"ERROR", three("ERROR", "ERROR", "ERROR"), "shared"},
		// 2-1 is a majority, as in cmd/compare (vote.Vote): the outvoted engine is named.
		{"PASS", three("PASS", "PASS", "FAIL"), "agree webkit"},
		{"FAIL", three("PASS", "PASS", "FAIL"), "candidate-only webkit"},
		{"FAIL", three("FAIL", "PASS", "FAIL"), "shared firefox"},
		{"PASS", three("PASS", "PASS", "MISSING"), "agree webkit"},
		{"FAIL", three("PASS", "FAIL", "MISSING"), "split"},
		{"PASS", map[string]string{"chromium": "PASS", "firefox": "PASS"}, "agree"},
		{"PASS", map[string]string{"chromium": "PASS", "firefox": "FAIL"}, "split"},
		{"PASS", map[string]string{}, "split"},
		// The engines skipped it (a feature --docroot lacks): a candidate's FAIL there is
		// no candidate-only failure.
		{"FAIL", three("SKIP", "SKIP", "SKIP"), "split"},
		{"SKIP", three("SKIP", "SKIP", "SKIP"), "split"},
	} {
		v, out := voteStatus(c.cand, c.engines)
		assert.Equal(t, c.want, strings.TrimSpace(v+" "+out), "%s vs %v", c.cand, c.engines)
	}
}

func writeReport(t *testing.T, file string, results ...wptResult) {
	t.Helper()
	require.NoError(t, writeJSON(file, wptReport{RunInfo: runInfo{Product: "x"}, Results: results}))
}

func th(test, status string, subs ...string) wptResult {
	r := wptResult{Test: test, Status: status, Subtests: []wptSubtest{}}
	for i := 0; i+1 < len(subs); i += 2 {
		r.Subtests = append(r.Subtests, wptSubtest{Name: subs[i], Status: subs[i+1]})
	}
	return r
}

func TestCompareVotesEachTestAndSubtest(t *testing.T) {
	dir := t.TempDir()
	writeReport(t, filepath.Join(dir, "wptreport-chromium.json"),
		th("/a/t.html", "OK", "s1", "PASS", "s2", "FAIL", "s3", "PASS"), th("/a/r.html", "PASS"), th("/b/r.html", "FAIL"))
	writeReport(t, filepath.Join(dir, "wptreport-firefox.json"),
		th("/a/t.html", "OK", "s1", "PASS", "s2", "FAIL", "s3", "FAIL"), th("/a/r.html", "PASS"), th("/b/r.html", "FAIL"))
	writeReport(t, filepath.Join(dir, "wptreport-webkit.json"),
		th("/a/t.html", "OK", "s1", "PASS", "s2", "FAIL", "s3", "PASS"), th("/a/r.html", "PASS"), th("/b/r.html", "FAIL"))
	// The candidate's own report may sit in the same directory: it is not an engine.
	cand := filepath.Join(dir, "wptreport-candidate.json")
	writeReport(t, cand, th("/a/t.html", "OK", "s1", "FAIL", "s2", "FAIL", "s3", "PASS"), th("/a/r.html", "PASS"), th("/b/r.html", "FAIL"))

	var out, errb bytes.Buffer
	// s1 is the candidate's failure: exit 1.
	require.Equal(t, 1, run([]string{"compare", "--candidate", cand, "--json", dir}, nil, &out, &errb), errb.String())
	assert.Empty(t, errb.String())
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var v voteLine
		require.NoError(t, json.Unmarshal([]byte(l), &v))
		assert.Len(t, v.Engines, 3, l)
		name := v.Test
		if v.Subtest != nil {
			name += " " + *v.Subtest
		}
		got = append(got, name+" "+v.Candidate+" "+v.Verdict)
	}
	assert.Equal(t, []string{
		"/a/r.html PASS agree",
		"/a/t.html OK agree",
		"/a/t.html s1 FAIL candidate-only",
		"/a/t.html s2 FAIL shared",
		"/a/t.html s3 PASS agree", // PASS 2-1, firefox outvoted
		"/b/r.html FAIL shared",
	}, got)
	assert.Contains(t, out.String(), `{"test":"/a/t.html","subtest":"s1","candidate":"FAIL","engines":{"chromium":"PASS","firefox":"PASS","webkit":"PASS"},"verdict":"candidate-only"}`)

	out.Reset()
	require.Equal(t, 1, run([]string{"compare", "--candidate", cand, dir}, nil, &out, &errb), errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 6)
	assert.Equal(t, []string{"/a", "2", "2", "0", "0", "0", "0", "1/1/1/0/0"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"/b", "1", "0", "0", "1", "0", "0", "0/0/0/0/0"}, strings.Fields(lines[2]))
	assert.Equal(t, []string{"total", "3", "2", "0", "1", "0", "0", "1/1/1/0/0"}, strings.Fields(lines[3]))
	// The summary names the candidate's failures.
	assert.Equal(t, "candidate-only (1):", lines[4])
	assert.Equal(t, "  /a/t.html | s1: candidate FAIL, engines chromium PASS, firefox PASS, webkit PASS", lines[5])
}

// The exit status gates CI: 0 when the candidate fails nothing the engines settle,
// 1 when it does; a test it did not run is missing, named, and not a failure.
func TestCompareExitStatusAndMissingTests(t *testing.T) {
	dir := t.TempDir()
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		writeReport(t, filepath.Join(dir, "wptreport-"+e+".json"), th("/a/x.html", "PASS"), th("/a/y.html", "PASS"))
	}
	cand := filepath.Join(t.TempDir(), "cand.json")
	writeReport(t, cand, th("/a/x.html", "PASS"))
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"compare", "--candidate", cand, dir}, nil, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "missing (1):\n  /a/y.html: candidate MISSING, engines chromium PASS, firefox PASS, webkit PASS\n")
	assert.NotContains(t, out.String(), "candidate-only (")

	writeReport(t, cand, th("/a/x.html", "FAIL"), th("/a/y.html", "PASS"))
	out.Reset()
	require.Equal(t, 1, run([]string{"compare", "--candidate", cand, dir}, nil, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "candidate-only (1):\n  /a/x.html: candidate FAIL")
}

// wpt.fyi takes gzipped reports; so does wpt compare, the candidate's and DIR's.
func TestCompareReadsGzippedReports(t *testing.T) {
	dir := t.TempDir()
	gz := func(file string, results ...wptResult) {
		plain := filepath.Join(t.TempDir(), "r.json")
		writeReport(t, plain, results...)
		b, err := os.ReadFile(plain)
		require.NoError(t, err)
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, err = zw.Write(b)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		require.NoError(t, os.WriteFile(file, buf.Bytes(), 0o644))
	}
	for _, e := range []string{"chromium", "firefox"} {
		gz(filepath.Join(dir, "wptreport-"+e+".json.gz"), th("/a/x.html", "PASS"))
	}
	writeReport(t, filepath.Join(dir, "wptreport-webkit.json"), th("/a/x.html", "PASS"))
	cand := filepath.Join(t.TempDir(), "cand.json.gz")
	gz(cand, th("/a/x.html", "PASS"))
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"compare", "--candidate", cand, "--json", dir}, nil, &out, &errb), errb.String())
	assert.Equal(t, `{"test":"/a/x.html","candidate":"PASS","engines":{"chromium":"PASS","firefox":"PASS","webkit":"PASS"},"verdict":"agree"}`+"\n", out.String())
}

func TestCompareRefusesWhatIsNotAReport(t *testing.T) {
	dir := t.TempDir()
	cand := filepath.Join(dir, "cand.json")
	require.NoError(t, os.WriteFile(cand, []byte("not json"), 0o644))
	var out, errb bytes.Buffer
	assert.Equal(t, 2, run([]string{"compare", "--candidate", cand, dir}, nil, &out, &errb))
	assert.Contains(t, errb.String(), "not a wptreport")
	writeReport(t, cand, th("/a.html", "OK"))
	errb.Reset()
	assert.Equal(t, 2, run([]string{"compare", "--candidate", cand, dir}, nil, &out, &errb))
	assert.Contains(t, errb.String(), "no wptreport-<engine>.json in")
	assert.Empty(t, out.String())

	// JSON that is not a report, and statuses wptrunner never writes.
	for body, want := range map[string]string{
		`{}`: `no "results" list`,
		`{"results":[{"test":"/a.html","status":"pass","subtests":[]}]}`:                           `status "pass" is not one of wptrunner's test statuses`,
		`{"results":[{"test":"/a.html","status":"OK","subtests":[{"name":"s","status":"Fail"}]}]}`: `subtest "s": status "Fail"`,
		`{"results":[{"test":"a.html","status":"OK","subtests":[]}]}`:                              `test "a.html" is not a path from the root`,
	} {
		require.NoError(t, os.WriteFile(cand, []byte(body), 0o644))
		errb.Reset()
		assert.Equal(t, 2, run([]string{"compare", "--candidate", cand, dir}, nil, &out, &errb), body)
		assert.Contains(t, errb.String(), want, body)
	}
}
