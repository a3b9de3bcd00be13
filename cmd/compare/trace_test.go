package main

// Unit tests of trace cases in the command, on hand-written trace responses (they
// test compare's handling, not an engine; TestTracesFromTheRealOracle runs one).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceJSON is one engine's trace with records, and "emulated" when set is given.
func traceJSON(engine, records string, set ...string) string {
	m := map[string]any{"engine": engine, "engine_version": "1", "profile": "emulation", "origin": "http://localhost:1",
		"is_secure_context": true, "timed_out": false, "records": json.RawMessage(records)}
	if set != nil {
		m["emulated"] = set
	}
	b, _ := json.Marshal(m)
	return string(b)
}

const (
	// What a sensor-reading script records with the fixed emulated reading, and
	// without any emulation.
	readRecords = `[{"seq":0,"kind":"value","label":"x","value":9.8}]`
	noneRecords = `[{"seq":0,"kind":"error","label":"x","value":{"$error":true,"name":"NotAllowedError"}}]`
)

func traceOracle() string {
	return `{"id":"sensor","traces":{"chromium":` + traceJSON("chromium", readRecords, "sensors") +
		`,"firefox":` + traceJSON("firefox", noneRecords) + `,"webkit":` + traceJSON("webkit", noneRecords, []string{}...) + "}}\n" +
		`{"id":"plain","traces":{"chromium":` + traceJSON("chromium", readRecords) +
		`,"firefox":` + traceJSON("firefox", readRecords) + `,"webkit":` + traceJSON("webkit", noneRecords) + "}}\n"
}

func TestTraceCasesVoted(t *testing.T) {
	code, stdout, stderr := runCmd(t, traceOracle(), "--oracle", "-")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "no-candidate  sensor  oracle votes: agree 1\n"+
		"    not comparable (the voters applied [none]): chromium [sensors]\n")
	assert.Contains(t, stdout, "no-candidate  plain  oracle votes: majority 1\n    outvoted: webkit value:x x1\n")
	assert.Contains(t, stdout, "2 cases: 2 no-candidate; outvoted: webkit 1; not comparable (emulation): chromium 1; exit 0\n")
	assert.NotContains(t, stdout, "outvoted: chromium", "chromium applied an emulation the others did not")

	code, stdout, _ = runCmd(t, traceOracle(), "--oracle", "-", "--json")
	assert.Equal(t, exitOK, code)
	lines := decodeJSONLines(t, stdout)
	require.Len(t, lines, 3)
	assert.Equal(t, "sensor", lines[0]["id"])
	assert.Equal(t, map[string]any{"agree": 1.0}, lines[0]["votes"])
	assert.Equal(t, []any{"firefox", "webkit"}, lines[0]["engines"])
	assert.Equal(t, []any{map[string]any{"engine": "chromium", "emulated": []any{"sensors"}}}, lines[0]["not_comparable"])
	assert.Nil(t, lines[0]["outliers"])
	assert.Equal(t, []any{map[string]any{"engine": "webkit", "property": "value:x", "count": 1.0}}, lines[1]["outliers"])
	totals := lines[2]["totals"].(map[string]any)
	assert.Equal(t, map[string]any{"chromium": 1.0}, totals["not_comparable"])
	assert.Equal(t, map[string]any{"webkit": 1.0}, totals["outvoted"])
}

func TestTraceCandidate(t *testing.T) {
	cand := func(recs string, set ...string) string {
		return `{"id":"plain","trace":` + traceJSON("mine", recs, set...) + "}\n" +
			`{"id":"sensor","trace":` + traceJSON("mine", recs, set...) + "}\n"
	}
	// The unemulated candidate reads what Firefox and WebKit read on "sensor", and
	// fails "plain" where the majority read the value.
	code, stdout, stderr := runCmd(t, "", "--oracle", writeFile(t, traceOracle()), "--candidate", writeFile(t, cand(noneRecords)))
	assert.Equal(t, exitFail, code, stderr)
	assert.Contains(t, stdout, "pass          sensor  trace 0/1 records failed\n")
	assert.Contains(t, stdout, "FAIL          plain  trace 1/1 records failed\n    record 0 kind at kind: want \"value\", got \"error\"\n")

	// One record too many fails on the count alone, said once.
	two := `[{"seq":0,"kind":"value","label":"x","value":9.8},{"seq":1,"kind":"value","label":"y","value":1}]`
	code, stdout, _ = runCmd(t, "", "--oracle", writeFile(t, traceOracle()), "--candidate", writeFile(t, cand(two)))
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout, "FAIL          plain  record count: want 1, got 2\n    outvoted")
	assert.Contains(t, stdout, "FAIL          sensor  record count: want 1, got 2\n    not comparable")

	// An emulated candidate is scored nowhere the voters did not emulate.
	code, stdout, _ = runCmd(t, "", "--oracle", writeFile(t, traceOracle()), "--candidate", writeFile(t, cand(readRecords, "sensors")), "--json")
	assert.Equal(t, exitOK, code)
	lines := decodeJSONLines(t, stdout)
	require.Len(t, lines, 3)
	for _, l := range lines[:2] {
		assert.Equal(t, "not-comparable", l["verdict"], "%v", l)
	}
	assert.Equal(t, map[string]any{"not-comparable": 2.0}, lines[2]["totals"].(map[string]any)["verdicts"])

	// A candidate record of another kind is refused, not scored.
	code, stdout, _ = runCmd(t, "", "--oracle", writeFile(t, traceOracle()), "--candidate",
		writeFile(t, `{"id":"plain","state":{"engine_version":"1","observations":[]}}`+"\n"+`{"id":"sensor","error":"no sensors"}`+"\n"))
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stdout, `error         plain  the oracle case is a trace, the candidate record has no "trace"`)
	assert.Contains(t, stdout, "FAIL          sensor  candidate error: no sensors")
}

// A trace that breaks the recorder's invariants is that case's error, not the run's.
func TestBadTraceIsRefused(t *testing.T) {
	bad := `{"id":"b","traces":{"chromium":` + traceJSON("chromium", `[{"seq":5,"kind":"value","label":"x","value":1}]`) + "}}\n" +
		`{"id":"n","traces":{"chromium":{"records":"many"}}}` + "\n" + strings.Split(traceOracle(), "\n")[1] + "\n"
	code, stdout, _ := runCmd(t, bad, "--oracle", "-")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stdout, "error         b  chromium: trace: record 0 has seq 5")
	assert.Contains(t, stdout, "error         n  oracle record 2: json: cannot unmarshal string")
	assert.Contains(t, stdout, "no-candidate  plain")
}

// The HTML report lists a trace case's records side by side, marks the engine that
// is not comparable (never as outvoted) and the candidate's failed record.
func TestTraceCasesInTheHTMLReport(t *testing.T) {
	dir := t.TempDir()
	cand := `{"id":"plain","trace":` + traceJSON("mine", noneRecords) + "}\n" + `{"id":"sensor","trace":` + traceJSON("mine", noneRecords) + "}\n"
	code, _, stderr := runCmd(t, "", "--oracle", writeFile(t, traceOracle()), "--candidate", writeFile(t, cand), "--out", dir)
	require.Equal(t, exitFail, code, stderr)
	page := func(n int) string {
		b, err := os.ReadFile(filepath.Join(dir, "cases", fmt.Sprintf("%06d.html", n)))
		require.NoError(t, err)
		return string(b)
	}
	sensor, plain := page(1), page(2)
	assert.Contains(t, sensor, `<dd id="not-comparable">the voters applied [none]; left out of the vote: <b>chromium</b> [sensors]</dd>`)
	assert.Contains(t, sensor, `<th class="apart" title="not comparable: another emulation">chromium <small>[sensors]</small> <small>not comparable</small></th><th>candidate <small>[none]</small></th>`)
	assert.Contains(t, sensor, `<td class="apart"><code>9.8</code></td>`)
	assert.NotContains(t, sensor, `class="outlier"`)
	assert.Contains(t, plain, `<tr class="rec st-failed" data-seq="0"><td>0</td><td>value:x</td><td>majority, outlier webkit</td>`)
	assert.Contains(t, plain, `<td class="outlier"><code>{&#34;$error&#34;:true,&#34;name&#34;:&#34;NotAllowedError&#34;}</code></td>`)
	assert.Contains(t, plain, "<h2>record mismatches</h2>")
	js, err := os.ReadFile(filepath.Join(dir, "cases.js"))
	require.NoError(t, err)
	assert.Contains(t, string(js), `"not_comparable":["chromium"]`)
}

// A buffer sample that is infinite on one side has an infinite max_abs_diff, which
// encoding/json refuses: --json must still write the case and the totals.
func TestJSONSurvivesAnInfiniteBufferDiff(t *testing.T) {
	buf := func(b64 string) string {
		return `[{"seq":0,"kind":"value","label":"b","value":{"$buffer":true,"elementType":"Float32Array","length":1,"base64":"` + b64 + `"}}]`
	}
	one, inf := "AACAPw==", "AACAfw==" // float32 1 and +Inf, little-endian
	oracle := `{"id":"b","traces":{"chromium":` + traceJSON("chromium", buf(one)) + `,"firefox":` + traceJSON("firefox", buf(one)) + "}}\n"
	cand := `{"id":"b","trace":` + traceJSON("mine", buf(inf)) + "}\n"
	code, stdout, stderr := runCmd(t, "", "--oracle", writeFile(t, oracle), "--candidate", writeFile(t, cand), "--json")
	assert.Equal(t, exitFail, code, stderr)
	lines := decodeJSONLines(t, stdout)
	require.Len(t, lines, 2, stdout)
	assert.Equal(t, "+Inf", lines[0]["trace_findings"].([]any)[0].(map[string]any)["max_abs_diff"])
}
