package main

// Unit tests of the command on hand-written oracle and candidate lines: inputs that
// crashed it, aborted it, or matched ids by their text. Each failed before its fix.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A states line without an id dereferenced a nil error message (SIGSEGV).
func TestStatesLineWithoutIDIsBadInputNotACrash(t *testing.T) {
	code, stdout, stderr := runCmd(t, `{"states":{"chromium":null}}`+"\n", "--oracle", "-")
	assert.Equal(t, 2, code, stdout)
	assert.Contains(t, stderr, `oracle record 1: no "id"`)
}

// Ping and shutdown replies are skipped, whatever additive fields they carry
// (ping's "states" is engine health; it was read as a reflection case: exit 2). A
// trace reply is a case, voted like the others.
func TestPingAndShutdownRepliesAreSkipped(t *testing.T) {
	oracle := `{"id":"p","ok":true,"engines":["chromium"],"versions":{"chromium":"1"},"profile":"default","routes":{"chromium":"x"},"states":{"chromium":{"state":"ready","restarts":0,"pages":2}}}` + "\n" +
		`{"id":"t","traces":{"chromium":{"engine":"chromium","engine_version":"1","records":[],"timed_out":false}},"errors":{"webkit":"engine not launched"}}` + "\n" +
		fixture(t, "oracle-one.ndjson") +
		`{"id":"s","ok":true}` + "\n"
	code, stdout, stderr := runCmd(t, oracle, "--oracle", "-")
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "2 cases: 2 no-candidate; 2 non-case lines skipped")
	assert.Contains(t, stdout, "no-candidate  t  oracle votes: one engine, no vote\n    oracle errors: webkit: engine not launched\n")
}

// A width near float64's maximum overflows the case's sum of |delta| to +Inf;
// --json aborted there ("unsupported value: +Inf") and lost every later case and
// the totals line.
func TestJSONSurvivesAnOverflowingSum(t *testing.T) {
	// The candidate's widths are huge and the engines' hugely negative (the oracle
	// file is not held to the contract, a candidate's is: its widths are >= 0).
	huge := strings.ReplaceAll(fixture(t, "oracle-one.ndjson"), `"w":800,`, `"w":-1.7e308,`)
	require.NotEqual(t, huge, fixture(t, "oracle-one.ndjson"))
	d := bareDump(t)
	for _, n := range d["nodes"].([]any) {
		n.(map[string]any)["bounding"].(map[string]any)["w"] = 1.7e308
	}
	cand := candidateRecord(t, "only", d) + candidateRecord(t, "after", bareDump(t))
	oracle := huge + strings.Replace(fixture(t, "oracle-one.ndjson"), `"id":"only"`, `"id":"after"`, 1)
	code, stdout, stderr := runCmd(t, cand, "--json", "--oracle", writeFile(t, oracle), "--candidate", "-")
	assert.Equal(t, 1, code, "stderr: %s", stderr)
	lines := decodeJSONLines(t, stdout)
	require.Len(t, lines, 3, stdout)
	assert.Equal(t, "fail", lines[0]["verdict"])
	assert.Equal(t, "+Inf", lines[0]["sum_abs_delta"])
	assert.Equal(t, "+Inf", lines[0]["worst"].([]any)[0].(map[string]any)["delta"])
	assert.Equal(t, "pass", lines[1]["verdict"])
	assert.Equal(t, "+Inf", lines[2]["totals"].(map[string]any)["sum_abs_delta"])
}

// Ids match by JSON value: escapes in strings and the spelling of a number do not
// matter; a string never matches a number.
func TestIDsMatchByValue(t *testing.T) {
	one := fixture(t, "oracle-one.ndjson")
	rec := func(id string) string {
		b, err := json.Marshal(bareDump(t))
		require.NoError(t, err)
		return fmt.Sprintf(`{"id":%s,"dump":%s}`+"\n", id, b)
	}
	for _, tc := range []struct {
		oracleID, candID string
		match            bool
	}{
		{`"\u0061"`, `"a"`, true},
		{`"a\/b"`, `"a/b"`, true},
		{`1.0`, `1`, true},
		{`10e-1`, `1`, true},
		{`1E+2`, `100`, true},
		{`-0`, `0`, true},
		{`0.10`, `1e-1`, true},
		{`1`, `"1"`, false},
		{`9007199254740993`, `9007199254740992`, false},
		{`1.5`, `15`, false},
	} {
		t.Run(tc.oracleID+"~"+tc.candID, func(t *testing.T) {
			oracle := strings.Replace(one, `"id":"only"`, `"id":`+tc.oracleID, 1)
			code, stdout, _ := runCmd(t, rec(tc.candID), "--oracle", writeFile(t, oracle), "--candidate", "-")
			if tc.match {
				assert.Equal(t, 0, code, stdout)
				assert.Contains(t, stdout, "1 cases: 1 pass")
			} else {
				assert.Equal(t, 2, code, stdout)
				assert.Contains(t, stdout, "2 missing")
			}
		})
	}
}

func TestDecimalKey(t *testing.T) {
	for num, want := range map[string]string{
		"0": "0", "-0": "0", "0.000": "0", "0e5": "0", "1": "1e0", "100": "1e2", "1.50": "15e-1",
		"-15e-1": "-15e-1", "1e999999999999999999999": "1e999999999999999999999", "0.001E-3": "1e-6",
	} {
		assert.Equal(t, want, decimalKey(num), num)
	}
}
