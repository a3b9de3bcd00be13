package main

// Unit tests of wpt compare's vote: the reports are written here.

import (
	"bytes"
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
		{"MISSING", three("PASS", "PASS", "PASS"), "candidate-only"},
		{"FAIL", three("FAIL", "FAIL", "FAIL"), "shared"},
		{"TIMEOUT", three("TIMEOUT", "TIMEOUT", "TIMEOUT"), "shared"},
		{"ERROR", three("ERROR", "ERROR", "ERROR"), "shared"},
		{"PASS", three("PASS", "PASS", "FAIL"), "split"},
		{"FAIL", three("PASS", "FAIL", "MISSING"), "split"},
		{"PASS", map[string]string{}, "split"},
		// The engines skipped it (a feature --docroot lacks): a candidate's FAIL there is
		// no candidate-only failure.
		{"FAIL", three("SKIP", "SKIP", "SKIP"), "split"},
		{"SKIP", three("SKIP", "SKIP", "SKIP"), "split"},
	} {
		assert.Equal(t, c.want, voteStatus(c.cand, c.engines), "%s vs %v", c.cand, c.engines)
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
	require.Equal(t, 0, run([]string{"compare", "--candidate", cand, "--json", dir}, nil, &out, &errb), errb.String())
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
		"/a/t.html s3 PASS split",
		"/b/r.html FAIL shared",
	}, got)
	assert.Contains(t, out.String(), `{"test":"/a/t.html","subtest":"s1","candidate":"FAIL","engines":{"chromium":"PASS","firefox":"PASS","webkit":"PASS"},"verdict":"candidate-only"}`)

	out.Reset()
	require.Equal(t, 0, run([]string{"compare", "--candidate", cand, dir}, nil, &out, &errb), errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, []string{"/a", "2", "2", "0", "0", "0", "0/1/1/1"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"/b", "1", "0", "0", "1", "0", "0/0/0/0"}, strings.Fields(lines[2]))
	assert.Equal(t, []string{"total", "3", "2", "0", "1", "0", "0/1/1/1"}, strings.Fields(lines[3]))
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
}
