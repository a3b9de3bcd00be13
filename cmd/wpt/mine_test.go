package main

// wpt mine and wpt compare --set: unit tests on reports written here, and
// checkMine, which TestRunWritesWptreports runs on the real engines' reports.

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

func writeEngineReport(t *testing.T, file, build string, results ...wptResult) {
	t.Helper()
	require.NoError(t, writeJSON(file, wptReport{RunInfo: runInfo{Product: "x", BrowserVersion: build}, Results: results}))
}

func readNDJSON(t *testing.T, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

func TestMineSplitsAgreedFromSplitSubtests(t *testing.T) {
	dir := t.TempDir()
	writeEngineReport(t, filepath.Join(dir, "wptreport-chromium.json"), "c1",
		th("/b/t.html", "OK", "x", "PASS", "y", "FAIL", "z", "PASS", "only-cr", "PASS"), th("/a/r.html", "PASS"))
	writeEngineReport(t, filepath.Join(dir, "wptreport-firefox.json"), "f1",
		th("/b/t.html", "OK", "x", "PASS", "y", "FAIL", "z", "FAIL"), th("/a/r.html", "FAIL"))
	writeEngineReport(t, filepath.Join(dir, "wptreport-webkit.json"), "w1",
		th("/b/t.html", "OK", "x", "PASS", "y", "FAIL", "z", "PASS"), th("/a/u.html", "OK", "s", "TIMEOUT"))
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"mine", dir}, nil, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "2 subtests of 1 tests on which the three engines agree (FAIL 1, PASS 1)")
	assert.Contains(t, stdout.String(), "3 subtests of 2 tests the engines split on")

	builds := map[string]any{"chromium": "c1", "firefox": "f1", "webkit": "w1"}
	assert.Equal(t, []map[string]any{
		{"test": "/b/t.html", "subtest": "x", "status": "PASS", "engines": builds},
		{"test": "/b/t.html", "subtest": "y", "status": "FAIL", "engines": builds},
	}, readNDJSON(t, filepath.Join(dir, "conformance-set.ndjson")), "reftests (no subtests) are not mined")
	splits := readNDJSON(t, filepath.Join(dir, "splits.ndjson"))
	require.Len(t, splits, 3)
	assert.Equal(t, map[string]any{"chromium": "MISSING", "firefox": "MISSING", "webkit": "TIMEOUT"}, splits[0]["statuses"])
	assert.Equal(t, "/b/t.html", splits[1]["test"])
	assert.Equal(t, "z", splits[1]["subtest"])
	assert.Equal(t, "only-cr", splits[2]["subtest"])

	// The candidate is scored on the set's two subtests alone: z (split) and the
	// reftest are not in it.
	cand := filepath.Join(t.TempDir(), "cand.json")
	writeEngineReport(t, cand, "cand", th("/b/t.html", "OK", "x", "FAIL", "y", "FAIL", "z", "PASS"), th("/a/r.html", "FAIL"))
	stdout.Reset()
	// x is the candidate's failure: exit 1.
	require.Equal(t, 1, run([]string{"compare", "--candidate", cand, "--set", filepath.Join(dir, "conformance-set.ndjson"), "--json"}, nil, &stdout, &stderr), stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 2)
	var v voteLine
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &v))
	assert.Equal(t, "candidate-only", v.Verdict)
	assert.Equal(t, "FAIL", v.Candidate)
	assert.Equal(t, map[string]string{"chromium": "PASS", "firefox": "PASS", "webkit": "PASS"}, v.Engines)
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &v))
	assert.Equal(t, "shared", v.Verdict)

	// Fewer than three reports is no ground truth.
	require.NoError(t, os.Remove(filepath.Join(dir, "wptreport-webkit.json")))
	stderr.Reset()
	assert.Equal(t, 2, run([]string{"mine", dir}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "ground truth needs the three")
	// --set and DIR together, or a bad set line, are usage errors.
	assert.Equal(t, 2, run([]string{"compare", "--candidate", cand, "--set", cand, dir}, nil, &stdout, &stderr))
	assert.Equal(t, 2, run([]string{"compare", "--candidate", cand, "--set", cand}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "not a conformance set line")
}

// checkMine mines the real engines' reports in dir (TestRunWritesWptreports) and
// scores one engine's report, as a candidate, against the set.
func checkMine(t *testing.T, dir, cand string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"mine", dir}, nil, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "2 subtests of 1 tests on which the three engines agree (FAIL 1, PASS 1)")
	assert.Contains(t, stdout.String(), "0 subtests of 0 tests the engines split on")
	set := readNDJSON(t, filepath.Join(dir, "conformance-set.ndjson"))
	require.Len(t, set, 2)
	assert.Equal(t, "/oracle-tests/testharness-pass-fail.html", set[0]["test"])
	assert.Equal(t, "box is 50px wide", set[0]["subtest"])
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		assert.NotEmpty(t, set[0]["engines"].(map[string]any)[e], "the build of %s", e)
	}
	stdout.Reset()
	require.Equal(t, 0, run([]string{"compare", "--candidate", cand, "--set", filepath.Join(dir, "conformance-set.ndjson")}, nil, &stdout, &stderr), stderr.String())
	assert.Regexp(t, `total\s+0\s+0\s+0\s+0\s+0\s+0\s+1/0/1/0/0`, stdout.String())
}
