package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
)

// Two bundled trace cases through the real oracle (no store: oracle.Config's Store
// is nil), its output piped into compare: the traces are voted unanimous, a
// candidate made of Firefox's own traces passes, and one with a record changed
// fails on that record.
//
// The default profile applies no emulation, so no trace carries "emulated"; the
// last part adds "emulated" to Chromium's real traces by hand (a simulated
// emulation, not an engine's) to check that compare then leaves Chromium out of
// the vote as not comparable, however its records compare.
func TestTracesFromTheRealOracle(t *testing.T) {
	testutil.NeedsBrowsers(t)
	want := map[string]bool{"trace-event-bubble-order": true, "trace-error-names": true}
	f, err := os.Open("../../testdata/trace/cases.ndjson")
	require.NoError(t, err)
	defer f.Close()
	var reqs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct{ ID string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if want[m.ID] {
			reqs = append(reqs, sc.Text())
		}
	}
	require.Len(t, reqs, 2)
	resp := oracleResponses(t, reqs)
	oraclePath := writeFile(t, resp)

	code, stdout, stderr := runCmd(t, "", "--oracle", oraclePath)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	assert.Contains(t, stdout, "no-candidate  trace-event-bubble-order  oracle votes: unanimous 4\n", resp)
	assert.Contains(t, stdout, "no-candidate  trace-error-names  oracle votes: unanimous 4\n", resp)
	assert.Contains(t, stdout, "2 cases: 2 no-candidate; exit 0\n")

	// Candidates cut from the response: Firefox's traces as they are, and again
	// with the last record of the bubble order changed.
	var lines []map[string]json.RawMessage
	for _, l := range strings.Split(strings.TrimSpace(resp), "\n") {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		lines = append(lines, m)
	}
	candidate := func(edit func(id string, tr map[string]any)) string {
		var b strings.Builder
		for _, m := range lines {
			var traces map[string]map[string]any
			require.NoError(t, json.Unmarshal(m["traces"], &traces))
			var id string
			require.NoError(t, json.Unmarshal(m["id"], &id))
			tr := traces["firefox"]
			require.NotNil(t, tr, "%s", m["traces"])
			edit(id, tr)
			out, _ := json.Marshal(map[string]any{"id": id, "trace": tr})
			b.Write(append(out, '\n'))
		}
		return writeFile(t, b.String())
	}
	code, stdout, _ = runCmd(t, "", "--oracle", oraclePath, "--candidate", candidate(func(string, map[string]any) {}))
	assert.Equal(t, exitOK, code, stdout)
	assert.Contains(t, stdout, "pass          trace-event-bubble-order  trace 0/4 records failed\n")
	assert.Contains(t, stdout, "2 cases: 2 pass; exit 0\n")

	code, stdout, _ = runCmd(t, "", "--oracle", oraclePath, "--candidate", candidate(func(id string, tr map[string]any) {
		if id == "trace-event-bubble-order" {
			recs := tr["records"].([]any)
			recs[3].(map[string]any)["label"] = "BODY"
		}
	}), "--json")
	assert.Equal(t, exitFail, code, stdout)
	out := decodeJSONLines(t, stdout)
	require.Len(t, out, 3)
	assert.Equal(t, "fail", out[0]["verdict"])
	assert.Equal(t, map[string]any{"compared": 4.0, "failed": 1.0, "untrusted": 0.0, "pass": false}, out[0]["trace"])
	require.Len(t, out[0]["trace_findings"], 1)
	assert.Equal(t, 3.0, out[0]["trace_findings"].([]any)[0].(map[string]any)["seq"])

	// Chromium's traces marked as emulated: it is left out, never outvoted.
	emulated := strings.ReplaceAll(resp, `"chromium":{"engine":"chromium",`, `"chromium":{"emulated":["sensors"],"engine":"chromium",`)
	require.NotEqual(t, resp, emulated)
	code, stdout, _ = runCmd(t, emulated, "--oracle", "-", "--json")
	assert.Equal(t, exitOK, code, stdout)
	out = decodeJSONLines(t, stdout)
	require.Len(t, out, 3)
	for _, l := range out[:2] {
		assert.Equal(t, []any{"firefox", "webkit"}, l["engines"])
		assert.Equal(t, map[string]any{"agree": 4.0}, l["votes"])
		assert.Equal(t, []any{map[string]any{"engine": "chromium", "emulated": []any{"sensors"}}}, l["not_comparable"])
	}
	assert.Equal(t, map[string]any{"chromium": 2.0}, out[2]["totals"].(map[string]any)["not_comparable"])
}
