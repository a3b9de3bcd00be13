package main

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump/schema"
	"github.com/layout-oracle/oracle/internal/testutil"
)

// readLines returns a file's non-empty lines.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// The contract against the code: every dump, state and trace the three real engines
// give for the bundled cases (testdata/cases.ndjson, two trace cases), made a
// candidate record, meets the candidate schema; a file of one engine's answers passes
// compare --validate, and is scored with no case refused.
func TestSchemaAcceptsRealEngineAnswers(t *testing.T) {
	testutil.NeedsBrowsers(t)
	reqs := readLines(t, "../../testdata/cases.ndjson")
	for _, l := range readLines(t, "../../testdata/trace/cases.ndjson") {
		if strings.Contains(l, `"trace-event-bubble-order"`) || strings.Contains(l, `"trace-error-names"`) {
			reqs = append(reqs, l)
		}
	}
	resp := oracleResponses(t, reqs)

	checked := map[string]int{} // kind -> answers checked
	perEngine := map[string]*strings.Builder{}
	for _, l := range strings.Split(strings.TrimSpace(resp), "\n") {
		var r struct {
			ID     json.RawMessage            `json:"id"`
			Dumps  map[string]json.RawMessage `json:"dumps"`
			States map[string]json.RawMessage `json:"states"`
			Traces map[string]json.RawMessage `json:"traces"`
			Errors map[string]json.RawMessage `json:"errors"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		answers := map[string]map[string]json.RawMessage{"dump": r.Dumps, "state": r.States, "trace": r.Traces, "error": r.Errors}
		for _, field := range []string{"dump", "state", "trace", "error"} {
			answers := answers[field]
			for engine, a := range answers {
				rec, err := json.Marshal(map[string]json.RawMessage{"id": r.ID, field: a})
				require.NoError(t, err)
				assert.NoError(t, schema.Record(rec).Err(), "%s %s of %s", engine, field, r.ID)
				if field == "dump" {
					assert.NoError(t, schema.Dump(a).Err(), "%s bare dump of %s", engine, r.ID)
				}
				checked[field]++
				if perEngine[engine] == nil {
					perEngine[engine] = &strings.Builder{}
				}
				perEngine[engine].Write(append(rec, '\n'))
			}
		}
	}
	// 8 geometry cases answer in all three engines (script-throws is an error, not a
	// dump: the engine's error is its candidate record), one reflection case, two
	// trace cases.
	assert.Equal(t, 8*3, checked["dump"], "%v\n%s", checked, resp)
	assert.Equal(t, 3, checked["error"], resp)
	assert.Equal(t, 3, checked["state"], resp)
	assert.Equal(t, 2*3, checked["trace"], resp)
	require.Len(t, perEngine, 3)

	oraclePath := writeFile(t, resp)
	for engine, recs := range perEngine {
		cand := writeFile(t, recs.String())
		code, stdout, stderr := runCmd(t, "", "--validate", cand)
		assert.Equal(t, 0, code, "%s: %s%s", engine, stdout, stderr)
		assert.Contains(t, stdout, "records meet the contract")

		code, stdout, stderr = runCmd(t, "", "--oracle", oraclePath, "--candidate", cand)
		assert.Less(t, code, 2, "%s as the candidate: %s%s", engine, stdout, stderr)
		assert.NotContains(t, stdout, "breaks the contract")
	}
}

// The candidate record's Go type and the schema name the same fields.
func TestCandidateLineMatchesTheSchema(t *testing.T) {
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(schema.CandidateJSON, &s))
	var names []string
	typ := reflect.TypeFor[candidateLine]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	slices.Sort(names)
	assert.Equal(t, slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	}), names)
}

func TestValidateCommand(t *testing.T) {
	good := candidateRecord(t, "a", bareDump(t))
	d := bareDump(t)
	d["nodes"].([]any)[1].(map[string]any)["tag"] = "body"
	bad := candidateRecord(t, "b", d)

	// Valid: exit 0.
	code, stdout, _ := runCmd(t, "", "--validate", writeFile(t, good+candidateRecord(t, "c", bareDump(t))))
	assert.Equal(t, 0, code, stdout)
	assert.Contains(t, stdout, ": 2 records meet the contract\n")

	// One error per line, named by file, line, pointer and keyword; exit 1.
	p := writeFile(t, good+"\n"+bad+`{"id": "c", "error": 5}`+"\n"+good)
	code, stdout, _ = runCmd(t, "", "--validate", p)
	assert.Equal(t, 1, code, stdout)
	assert.Equal(t, []string{
		p + `:3: at /dump/nodes/1/tag: 'body' does not match pattern '^[^a-z]+$' [dump.schema.json#/$defs/node/properties/tag/pattern]`,
		p + `:4: at /error: got number, want string [candidate.schema.json#/properties/error/type]`,
		p + `:5: at /id: duplicate id "a" (first on line 1) [file]`,
		p + `: 3 errors in 4 records`,
	}, strings.Split(strings.TrimSpace(stdout), "\n"))

	// A pretty-printed bare dump is one record; a rule JSON Schema cannot state is
	// named by its pointer too. Stdin is "-".
	d = bareDump(t)
	d["nodes"].([]any)[2].(map[string]any)["parent"] = 7
	pretty, err := json.MarshalIndent(d, "", "  ")
	require.NoError(t, err)
	code, stdout, _ = runCmd(t, "\n\n"+string(pretty), "--validate", "-")
	assert.Equal(t, 1, code, stdout)
	assert.Contains(t, stdout, `-:3: at /nodes/2/parent: dump candidate: node 2 has parent 7, which does not precede it [dump.Validate: parent precedes]`)

	// Not JSON: the line it breaks on; exit 1.
	code, stdout, _ = runCmd(t, good+`{"id": "x", "dump": [}`+"\n", "--validate", "-")
	assert.Equal(t, 1, code, stdout)
	assert.Contains(t, stdout, "-:2: invalid character")

	// An empty file holds no answer.
	code, stdout, _ = runCmd(t, "", "--validate", "-")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "-: no records")

	// Usage: exit 2.
	code, _, stderr := runCmd(t, "", "--validate", p, "--oracle", p)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--validate takes no other file")
	code, _, stderr = runCmd(t, "", "--validate", "/nonexistent/c.ndjson")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no such file")
}

// compare refuses a bad record with its line, the pointer and the keyword, and
// goes on with the next case.
func TestCompareRefusesABadRecordWithItsPath(t *testing.T) {
	d := bareDump(t)
	d["nodes"].([]any)[0].(map[string]any)["bounding"].(map[string]any)["h"] = -80
	cand := writeFile(t, "\n"+candidateRecord(t, "only", d))
	code, stdout, _ := runCmd(t, "", "--oracle", fixtures+"oracle-one.ndjson", "--candidate", cand)
	assert.Equal(t, 2, code, stdout)
	assert.Contains(t, stdout, `error         only  candidate record "only" (line 2) breaks the contract: at /dump/nodes/0/bounding/h: minimum: got -80, want 0 [dump.schema.json#/$defs/rect/properties/h/minimum]`)
}
