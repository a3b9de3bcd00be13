package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtures = "../../testdata/compare/"

func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(fixtures + name)
	require.NoError(t, err)
	return string(b)
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.ndjson")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// bareDump is the fixture candidate dump as a generic map, to break on purpose.
func bareDump(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(fixture(t, "bare.json")), &m))
	return m
}

func candidateRecord(t *testing.T, id string, d any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"id": id, "dump": d})
	require.NoError(t, err)
	return string(b) + "\n"
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    []string
		notStdout []string
	}{
		{"a failing case", []string{"--oracle", fixtures + "oracle.ndjson", "--candidate", fixtures + "candidate.ndjson"}, 1,
			[]string{"FAIL          offset", "node 3 DIV offset.y: want 50, got 54 (+4)",
				"pass          same", "discarded     overflow  overflowed: chromium",
				"untrustworthy shape-split", "untrustworthy oracle-error  oracle error:",
				"outvoted: firefox bounding.w x1", "oracle errors: webkit: page crashed",
				"7 cases: 3 pass, 1 fail, 1 discarded, 2 untrustworthy; 1 non-case lines skipped"}, nil},
		{"all pass", []string{"--oracle", fixtures + "oracle.ndjson", "--candidate", fixtures + "candidate-pass.ndjson"}, 0,
			[]string{"pass          offset", "4 pass"}, []string{"FAIL"}},
		{"tolerance flag", []string{"--oracle", fixtures + "oracle.ndjson", "--candidate", fixtures + "candidate.ndjson", "--tolerance", "4"}, 0,
			[]string{"pass          offset"}, []string{"FAIL"}},
		{"missing ids both ways", []string{"--oracle", fixtures + "oracle.ndjson", "--candidate", fixtures + "candidate-missing.ndjson"}, 2,
			[]string{"missing       oracle-error  no candidate record", "missing       not-in-oracle  no oracle case", "2 missing"}, nil},
		{"bare dump candidate", []string{"--oracle", fixtures + "oracle-one.ndjson", "--candidate", fixtures + "bare.json"}, 0,
			[]string{"pass          only", "1 cases: 1 pass"}, nil},
		{"bare dump against many cases", []string{"--oracle", fixtures + "oracle.ndjson", "--candidate", fixtures + "bare.json"}, 2,
			[]string{"pass          same", "error         offset  the candidate is a bare dump, but the oracle file holds more than one case"}, nil},
		{"oracle only", []string{"--oracle", fixtures + "oracle.ndjson"}, 0,
			[]string{"no-candidate  outlier  oracle votes: unanimous 134, majority 2", "no-candidate  two-engines  oracle votes: agree 136"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, "", tt.args...)
			assert.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			for _, s := range tt.stdout {
				assert.Contains(t, stdout, s)
			}
			for _, s := range tt.notStdout {
				assert.NotContains(t, stdout, s)
			}
		})
	}
}

func TestStdin(t *testing.T) {
	code, stdout, _ := runCmd(t, fixture(t, "candidate.ndjson"), "--oracle", fixtures+"oracle.ndjson", "--candidate", "-")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "FAIL          offset")

	code, stdout, _ = runCmd(t, fixture(t, "oracle.ndjson"), "--oracle", "-", "--candidate", fixtures+"candidate-pass.ndjson")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "4 pass")
}

func TestJSONOutput(t *testing.T) {
	code, stdout, _ := runCmd(t, "", "--json", "--oracle", fixtures+"oracle.ndjson", "--candidate", fixtures+"candidate.ndjson")
	assert.Equal(t, 1, code)
	lines := decodeJSONLines(t, stdout)
	require.Len(t, lines, 8)
	var ids, verdicts []any
	for _, l := range lines[:7] {
		ids = append(ids, l["id"])
		verdicts = append(verdicts, l["verdict"])
	}
	assert.Equal(t, []any{"same", "offset", "outlier", "two-engines", "overflow", "shape-split", "oracle-error"}, ids,
		"cases come out in oracle order")
	assert.Equal(t, []any{"pass", "fail", "pass", "pass", "discarded", "untrustworthy", "untrustworthy"}, verdicts)

	offset := lines[1]
	findings := offset["findings"].([]any)
	require.Len(t, findings, 1)
	assert.Equal(t, map[string]any{"node": 3.0, "tag": "DIV", "property": "offset.y", "want": 50.0, "got": 54.0,
		"delta": 4.0, "within": false}, findings[0])

	totals := lines[7]["totals"].(map[string]any)
	assert.Equal(t, 7.0, totals["cases"])
	assert.Equal(t, 1.0, totals["exit"])
	assert.Equal(t, map[string]any{"pass": 3.0, "fail": 1.0, "discarded": 1.0, "untrustworthy": 2.0}, totals["verdicts"])
}

func TestBadInput(t *testing.T) {
	oracleOne := fixtures + "oracle-one.ndjson"
	noVersion := bareDump(t)
	noVersion["engine_version"] = ""
	wideViewport := bareDump(t)
	wideViewport["viewport"] = map[string]any{"width": 1024, "height": 768}
	badNodes := bareDump(t)
	badNodes["nodes"] = "not a list"

	tests := []struct {
		name   string
		args   []string
		stdin  string
		stderr string // on stderr, for input the run cannot continue past
		stdout string // on stdout, for a case reported as refused
	}{
		{"no answers", []string{"--candidate", "x"}, "", "--answers is required", ""},
		{"unknown flag", []string{"--oracle", oracleOne, "--frobnicate"}, "", "flag provided but not defined", ""},
		{"extra argument", []string{"--oracle", oracleOne, "stray"}, "", `unexpected argument "stray"`, ""},
		{"two stdins", []string{"--oracle", "-", "--candidate", "-"}, "", "only one of --answers and --candidate", ""},
		{"negative tolerance", []string{"--oracle", oracleOne, "--tolerance", "-1"}, "", "--tolerance must be", ""},
		{"NaN tolerance", []string{"--oracle", oracleOne, "--tolerance", "NaN"}, "", "--tolerance must be", ""},
		{"unreadable oracle", []string{"--oracle", "/nonexistent/oracle.ndjson"}, "", "no such file", ""},
		{"unreadable candidate", []string{"--oracle", oracleOne, "--candidate", "/nonexistent/c.ndjson"}, "", "no such file", ""},
		{"malformed oracle", []string{"--oracle", "-"}, fixture(t, "oracle-one.ndjson") + `{"id": "x", "dumps": {` + "\n",
			"oracle record 2", ""},
		{"oracle not objects", []string{"--oracle", "-"}, "[1, 2]\n", "oracle record 1", ""},
		{"malformed candidate", []string{"--oracle", oracleOne, "--candidate", "-"}, `{"id": "only", "dump": [}`,
			"candidate record 1", ""},
		{"candidate without id", []string{"--oracle", oracleOne, "--candidate", "-"}, `{"dump": {}}`,
			`candidate record 1: no "id"`, ""},
		{"candidate neither", []string{"--oracle", oracleOne, "--candidate", "-"}, `{"id": "only", "result": 1}`,
			"neither", ""},
		{"duplicate candidate id", []string{"--oracle", oracleOne, "--candidate", "-"},
			candidateRecord(t, "only", bareDump(t)) + candidateRecord(t, "only", bareDump(t)),
			`candidate record 2: duplicate id "only"`, ""},
		{"bare dump not alone", []string{"--oracle", oracleOne, "--candidate", "-"},
			fixture(t, "bare.json") + candidateRecord(t, "only", bareDump(t)),
			"a bare dump must be the only value", ""},
		{"missing engine_version", []string{"--oracle", oracleOne, "--candidate", "-"}, candidateRecord(t, "only", noVersion),
			"", `error         only  candidate record "only" (line 1) breaks the contract: at /dump/engine_version: minLength: got 0, want 1 [dump.schema.json#/properties/engine_version/minLength]`},
		{"viewport other than 800x600", []string{"--oracle", oracleOne, "--candidate", "-"}, candidateRecord(t, "only", wideViewport),
			"", `at /dump/viewport/height: value must be 600 [dump.schema.json#/properties/viewport/properties/height/const]`},
		{"candidate dump of the wrong type", []string{"--oracle", oracleOne, "--candidate", "-"}, candidateRecord(t, "only", badNodes),
			"", `error         only  candidate record "only" (line 1) breaks the contract: at /dump/nodes: got string, want array [dump.schema.json#/properties/nodes/type]`},
		{"oracle dumps of the wrong type", []string{"--oracle", "-"}, `{"id": "w", "dumps": 5}` + "\n" + fixture(t, "oracle-one.ndjson"),
			"", "error         w  oracle record 1: json: cannot unmarshal number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(t, tt.stdin, tt.args...)
			assert.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
			}
			if tt.stdout != "" {
				assert.Contains(t, stdout, tt.stdout)
			}
		})
	}
}

// A refused case does not stop the run: the cases after it are still compared.
func TestRefusedCaseContinues(t *testing.T) {
	code, stdout, _ := runCmd(t, `{"id": "w", "dumps": 5}`+"\n"+fixture(t, "oracle-one.ndjson"), "--oracle", "-")
	assert.Equal(t, 2, code)
	assert.Contains(t, stdout, "no-candidate  only")
}

func TestCandidateError(t *testing.T) {
	p := writeFile(t, `{"id": "only", "error": "layout engine crashed"}`+"\n")
	code, stdout, _ := runCmd(t, "", "--oracle", fixtures+"oracle-one.ndjson", "--candidate", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "FAIL          only  candidate error: layout engine crashed")
}

func TestHelp(t *testing.T) {
	code, _, stderr := runCmd(t, "", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "usage: compare --answers FILE")
	for _, old := range []string{"oracle", "html", "artifacts"} {
		assert.NotRegexp(t, `(?m)^  -`+old+`\b`, stderr, "-h lists the new spelling only")
	}
	for _, name := range []string{"answers", "out", "screenshot-dir"} {
		assert.Regexp(t, `(?m)^  -`+name+`\b`, stderr)
	}
}

// --answers FILE is the oracle's answers; --oracle FILE, its spelling until this
// release, still works and says on stderr that it is deprecated. Both at once is
// a usage error.
func TestAnswersAndTheDeprecatedOracleSpelling(t *testing.T) {
	want := "7 cases: 3 pass, 1 fail, 1 discarded, 2 untrustworthy"
	code, stdout, stderr := runCmd(t, "", "--answers", fixtures+"oracle.ndjson", "--candidate", fixtures+"candidate.ndjson")
	assert.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stdout, want)
	assert.Empty(t, stderr)

	code, stdout, stderr = runCmd(t, "", "--oracle", fixtures+"oracle.ndjson", "--candidate", fixtures+"candidate.ndjson")
	assert.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stdout, want)
	assert.Equal(t, "compare: --oracle FILE is deprecated, use --answers FILE\n", stderr)

	code, _, stderr = runCmd(t, "", "--answers", fixtures+"oracle.ndjson", "--oracle", fixtures+"oracle.ndjson")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stderr, "--oracle and --answers are one flag")
}

// decodeJSONLines decodes --json output, one object per line.
func decodeJSONLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %q", sc.Text())
		lines = append(lines, m)
	}
	return lines
}

// Causes lead each case's details in text, ride on each --json line, and the
// totals count causes beside non-unanimous items.
func TestCausesOutput(t *testing.T) {
	args := []string{"--oracle", fixtures + "oracle.ndjson", "--candidate", fixtures + "candidate.ndjson"}
	code, out, _ := runCmd(t, "", args...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, "pass          outlier  layout 0/28 failed, style 0/108 failed, max |delta| 0 px, sum 0 px\n"+
		"    1 cause for 2 non-unanimous items: firefox text at HTML>BODY>DIV[2] (2)\n")
	assert.Contains(t, out, "    1 cause for 1 non-unanimous items: candidate layout at HTML>BODY>DIV[2] (1)\n")
	assert.Contains(t, out, "attribution: 2 non-unanimous cases, 3 items, 2 causes (1.00 causes and 1.5 items per case)\n")

	_, out, _ = runCmd(t, "", append(args, "--json")...)
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		lines = append(lines, m)
	}
	var outlier map[string]json.RawMessage
	for _, m := range lines {
		if string(m["id"]) == `"outlier"` {
			outlier = m
		}
	}
	require.NotNil(t, outlier)
	assert.JSONEq(t, `[{"node":3,"tag":"DIV","path":"HTML>BODY>DIV[2]","kind":"text","engines":["firefox"],
		"items":[{"node":3,"property":"bounding.w"},{"node":3,"property":"rects[0].w"}],"explains":2}]`, string(outlier["causes"]))
	assert.JSONEq(t, `{"cases":2,"items":3,"causes":2}`, attributedOf(t, lines[len(lines)-1]))
}

func attributedOf(t *testing.T, m map[string]json.RawMessage) string {
	t.Helper()
	var tot map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m["totals"], &tot))
	return string(tot["attributed"])
}
