package main

// The oracle's "unstable" field through the compare command (unit test of the
// command on the fixture oracle lines, with an "unstable" list added by hand).

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withUnstable is the fixture case id's oracle line with "unstable" set.
func withUnstable(t *testing.T, id string, unstable map[string][]string) string {
	t.Helper()
	for _, line := range strings.Split(fixture(t, "oracle.ndjson"), "\n") {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &m) != nil || string(m["id"]) != `"`+id+`"` {
			continue
		}
		b, err := json.Marshal(unstable)
		require.NoError(t, err)
		m["unstable"] = b
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return string(out) + "\n"
	}
	t.Fatalf("no case %q in the fixture", id)
	return ""
}

// In the fixture's "outlier" case firefox is outvoted on node 3's width. When
// firefox's runs differed on it, it is counted unstable instead: never outvoted,
// never a candidate failure, never a cause, and counted apart in text and --json.
func TestUnstableItemsAreNoVerdict(t *testing.T) {
	oracle := writeFile(t, withUnstable(t, "outlier", map[string][]string{"firefox": {"3:bounding.w", "3:rects[0].w"}}))
	// A candidate that sides with the unstable value would fail against the majority.
	var cand map[string]any
	for _, line := range strings.Split(fixture(t, "oracle.ndjson"), "\n") {
		var m struct {
			ID    string                    `json:"id"`
			Dumps map[string]map[string]any `json:"dumps"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID == "outlier" {
			cand = m.Dumps["firefox"]
		}
	}
	require.NotNil(t, cand)
	candidate := writeFile(t, candidateRecord(t, "outlier", cand))

	code, out, _ := runCmd(t, "", "--oracle", oracle, "--candidate", candidate)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "pass          outlier")
	assert.Contains(t, out, ", 2 unstable")
	assert.Contains(t, out, "unstable (not voted): firefox 3:bounding.w, 3:rects[0].w")
	assert.Contains(t, out, "unstable: 2 items in 1 cases")
	assert.NotContains(t, out, "outvoted")
	assert.NotContains(t, out, "cause")

	code, out, _ = runCmd(t, "", "--oracle", oracle, "--candidate", candidate, "--json")
	assert.Equal(t, 0, code, out)
	lines := decodeJSONLines(t, out)
	require.Len(t, lines, 2)
	c := lines[0]
	assert.Equal(t, "pass", c["verdict"])
	assert.Nil(t, c["outliers"])
	assert.Nil(t, c["causes"])
	assert.Nil(t, c["findings"])
	assert.Equal(t, map[string]any{"unanimous": float64(134), "unstable": float64(2)}, c["votes"])
	assert.Equal(t, float64(2), c["layout"].(map[string]any)["unstable"])
	assert.Equal(t, map[string]any{"firefox": []any{"3:bounding.w", "3:rects[0].w"}}, c["unstable"])
	tot := lines[1]["totals"].(map[string]any)
	assert.Equal(t, float64(2), tot["unstable"])
	assert.Equal(t, float64(1), tot["unstable_cases"])
	assert.Nil(t, tot["outvoted"])

	// The same candidate without the unstable list fails on firefox's value.
	code, out, _ = runCmd(t, "", "--oracle", writeFile(t, withUnstable(t, "outlier", nil)), "--candidate", candidate)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "outvoted: firefox bounding.w x1")
}

// A reflection field unstable in an engine is not voted either.
func TestUnstableReflectionField(t *testing.T) {
	line := strings.TrimSuffix(reflectOracle, "}\n") + `,"unstable":{"webkit":["0:idl_value(value)"]}}` + "\n"
	code, out, _ := runCmd(t, "", "--oracle", writeFile(t, line))
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "oracle votes: unanimous 1, unstable 1")
	assert.NotContains(t, out, "outvoted")
}
