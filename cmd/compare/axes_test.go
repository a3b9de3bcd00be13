package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Command-level tests of --axes, the candidate error verdict and the swapped-files
// check, on the bundled fixtures (hand-made dumps: a unit test of our own scoring).

func TestAxesFlag(t *testing.T) {
	// A candidate whose only difference from the fixture oracle's "only" case is one
	// style value and one width.
	d := bareDump(t)
	nodes := d["nodes"].([]any)
	n := nodes[len(nodes)-1].(map[string]any)
	n["style"].(map[string]any)["display"] = "inline"
	cand := writeFile(t, candidateRecord(t, "only", d))

	code, stdout, _ := runCmd(t, "", "--oracle", fixtures+"oracle-one.ndjson", "--candidate", cand, "--axes", "layout")
	assert.Equal(t, 0, code, stdout)
	assert.Contains(t, stdout, "pass          only  layout 0/")
	assert.Contains(t, stdout, "style not scored")

	code, stdout, _ = runCmd(t, "", "--oracle", fixtures+"oracle-one.ndjson", "--candidate", cand, "--axes", "style")
	assert.Equal(t, 1, code, stdout)
	assert.Contains(t, stdout, "FAIL          only  layout not scored, style 1/")

	code, stdout, _ = runCmd(t, "", "--oracle", fixtures+"oracle-one.ndjson", "--candidate", cand, "--json")
	assert.Equal(t, 1, code, stdout)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &line))
	assert.Nil(t, line["axes"], "all axes are not named")

	code, stdout, _ = runCmd(t, "", "--oracle", fixtures+"oracle-one.ndjson", "--candidate", cand, "--json", "--axes", "layout")
	assert.Equal(t, 0, code, stdout)
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &line))
	assert.Equal(t, "layout", line["axes"])
	assert.Equal(t, float64(0), line["style"].(map[string]any)["compared"])

	code, _, stderr := runCmd(t, "", "--oracle", fixtures+"oracle-one.ndjson", "--axes", "box")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--axes "box": want layout, style or all`)
}

// A candidate error where every engine errored is untrustworthy, not a failure.
func TestCandidateErrorWithoutGroundTruth(t *testing.T) {
	oracle := writeFile(t, `{"id":"none","dumps":{},"errors":{"chromium":"crashed","firefox":"crashed","webkit":"crashed"}}`+"\n")
	cand := writeFile(t, `{"id": "none", "error": "timeout after 10s"}`+"\n")
	code, stdout, _ := runCmd(t, "", "--oracle", oracle, "--candidate", cand)
	assert.Equal(t, 0, code, stdout)
	assert.Contains(t, stdout, "untrustworthy none  candidate error: timeout after 10s; no ground truth: no oracle dumps")
}

func TestSwappedFiles(t *testing.T) {
	// The candidate's records given as the oracle file.
	code, stdout, stderr := runCmd(t, "", "--oracle", fixtures+"candidate.ndjson")
	assert.Equal(t, 2, code, stdout)
	assert.Contains(t, stderr, `compare: oracle record 1 is a candidate record (it has "dump"), not an oracle response: --answers names the oracle's output`)
	assert.Contains(t, stderr, "wrong way round")

	// Both swapped: the candidate file holds oracle responses.
	code, _, stderr = runCmd(t, "", "--oracle", fixtures+"candidate.ndjson", "--candidate", fixtures+"oracle.ndjson")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `compare: candidate record 1 is an oracle response (it has "ok"), not a candidate record: --answers names`)
	code, _, stderr = runCmd(t, "", "--oracle", fixtures+"oracle.ndjson", "--candidate", fixtures+"oracle-one.ndjson")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `candidate record 1 is an oracle response (it has "dumps")`)

	// --validate on the oracle's output says so, once per line.
	code, stdout, _ = runCmd(t, "", "--validate", fixtures+"oracle.ndjson")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, fixtures+`oracle.ndjson:2: at (the record): an oracle answer (it has "dumps"), not a candidate record: this is the oracle's output [file]`)
	assert.Contains(t, stdout, ": 7 errors in 8 records") // its last line, {"id", "error"}, is a valid candidate record

	// A bare dump as the oracle file.
	code, _, stderr = runCmd(t, "", "--oracle", fixtures+"bare.json")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `oracle record 1 is a bare dump (it has "nodes")`)
}

func TestNoCandidateMatches(t *testing.T) {
	cand := writeFile(t, candidateRecord(t, "another-corpus", bareDump(t)))
	code, stdout, stderr := runCmd(t, "", "--oracle", fixtures+"oracle.ndjson", "--candidate", cand)
	assert.Equal(t, 2, code, stdout)
	assert.Contains(t, stderr, "compare: no candidate record matches an oracle case (7 oracle cases, 1 candidate records)")

	// An oracle file with no case compares nothing.
	code, stdout, stderr = runCmd(t, `{"id":"p","ok":true}`+"\n", "--oracle", "-")
	assert.Equal(t, 2, code, stdout)
	assert.Contains(t, stderr, "compare: the oracle file holds no case (1 lines that are not cases)")
	assert.Contains(t, stdout, "0 cases; 1 non-case lines skipped; exit 2")

	// One match is enough to compare: the others are "missing" lines (exit 2, no message).
	cand = writeFile(t, candidateRecord(t, "another-corpus", bareDump(t))+candidateRecord(t, "same", bareDump(t)))
	_, _, stderr = runCmd(t, "", "--oracle", fixtures+"oracle.ndjson", "--candidate", cand)
	assert.NotContains(t, stderr, "no candidate record matches")
}
