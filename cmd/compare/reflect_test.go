package main

// Reflection cases through the compare command (unit test of the command, on
// hand-written oracle and candidate lines).

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const reflectOracle = `{"id":"r1","states":{` +
	`"chromium":{"engine":"chromium","engine_version":"156","observations":[{"selector":"#a","attr":"value","attr_value":"5","idl":"value","idl_value":"5"}]},` +
	`"firefox":{"engine":"firefox","engine_version":"153","observations":[{"selector":"#a","attr":"value","attr_value":"5","idl":"value","idl_value":"5"}]},` +
	`"webkit":{"engine":"webkit","engine_version":"2.50","observations":[{"selector":"#a","attr":"value","attr_value":"5","idl":"value","idl_value":{"$undefined":true}}]}}}` + "\n"

func TestCompareScoresReflectionCases(t *testing.T) {
	oracle := writeFile(t, reflectOracle)
	pass := writeFile(t, `{"id":"r1","state":{"engine":"mine","engine_version":"0.1","observations":[{"selector":"#a","attr":"value","attr_value":"5","idl":"value","idl_value":"5"}]}}`+"\n")
	code, out, _ := runCmd(t, "", "--oracle", oracle, "--candidate", pass)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "pass          r1  reflection 0/2 failed")
	assert.Contains(t, out, "outvoted: webkit idl_value(value) x1")

	fail := writeFile(t, `{"id":"r1","state":{"engine":"mine","engine_version":"0.1","observations":[{"selector":"#a","attr":"value","attr_value":null,"idl":"value","idl_value":"5"}]}}`+"\n")
	code, out, _ = runCmd(t, "", "--oracle", oracle, "--candidate", fail)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, `probe 0 #a attr_value(value): want "5", got null`)

	geometryRecord := writeFile(t, candidateRecord(t, "r1", bareDump(t)))
	code, out, _ = runCmd(t, "", "--oracle", oracle, "--candidate", geometryRecord)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, `the candidate record has no "state"`)
}

// A reflection or trace case's JSON line carries its own axis and none of
// geometry's: before, every such line also had "layout" and "style" axes with
// nothing compared and "pass": false, and px sums of 0, as if a geometry case had
// failed to compare.
func TestJSONLinesCarryOnlyTheirKindsAxes(t *testing.T) {
	geometry := strings.TrimSpace(fixture(t, "oracle.ndjson"))
	oracle := writeFile(t, reflectOracle+traceOracle()+geometry+"\n")
	code, out, stderr := runCmd(t, "", "--oracle", oracle, "--json")
	require.Equal(t, exitOK, code, stderr)
	lines := decodeJSONLines(t, out)
	kinds := map[string]int{}
	for _, l := range lines {
		if l["totals"] != nil {
			continue
		}
		switch {
		case l["reflection"] != nil, l["trace"] != nil:
			kinds["other"]++
			for _, k := range []string{"layout", "style", "sum_abs_delta", "max_abs_delta"} {
				assert.NotContains(t, l, k, "%v", l["id"])
			}
		default:
			kinds["geometry"]++
			for _, k := range []string{"layout", "style", "sum_abs_delta", "max_abs_delta"} {
				assert.Contains(t, l, k, "%v", l["id"])
			}
		}
	}
	assert.Equal(t, 3, kinds["other"], "the reflection and the two trace cases")
	assert.NotZero(t, kinds["geometry"])
}
