package main

import (
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/oracle/answerbound"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sendLine is send, also returning the length of the answer line as the oracle wrote
// it (without its newline).
func (c *client) sendLine(t *testing.T, req map[string]any) (map[string]any, int) {
	t.Helper()
	line := c.sendForLine(t, req)
	return decode(t, line), len(line)
}

// Hostile cases: pages that made one answer line hundreds of
// MB (tag names, an exception message and reflected values that the bounds did not
// cover, or counted before JSON escaping made each '<' six bytes). Each answer line
// must stay under answerbound.MaxLine for the oracle's flags (docs/untrusted.md),
// each engine must give a clear error naming the bound (or a bounded answer), the
// oracle must keep serving, and its peak RSS stays bounded. Fails on the code before:
// no error, and lines of 40-180 MB.
func TestNoCaseMakesAnAnswerLineOverTheDocumentedMaximum(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	const maxNodes, traceBytes = 1000, 1 << 20
	c := startOracle(t, "--pages=1", "--log-level=warn", "--self-check=false", "--deadline=120s",
		"--dump-max-nodes=1000", "--trace-max-bytes=1048576")
	defer c.close()
	defer logOnFailure(t, c)
	max := answerbound.MaxLine(maxNodes, traceBytes)
	t.Logf("documented maximum answer line for these flags: %d bytes", max)

	lt := strings.Repeat("<", 100_000)
	probes := make([]map[string]any, 50)
	for i := range probes {
		probes[i] = map[string]any{"selector": "#a", "attr": "title"}
	}
	for _, tc := range []struct {
		name string
		req  map[string]any
		want string // in every engine's error
	}{
		{"40 MB of tag names in 8 elements",
			map[string]any{"html": "<p>x</p>", "script": `for (let i = 0; i < 8; i++) document.body.appendChild(document.createElement('x' + 'a'.repeat(5e6) + i));`},
			"bytes of tag names (64 per --dump-max-nodes=1000)"},
		{"an exception message of 10^7 '<'",
			map[string]any{"html": "<p>x</p>", "script": `throw new Error('<'.repeat(1e7));`},
			"script threw: Error: <<<"},
		{"a reflect case's exception message of 10^7 '<'",
			map[string]any{"op": "reflect", "html": "<p id=a>x</p>", "script": `throw new Error('<'.repeat(1e7));`, "probes": probes[:1]},
			"[truncated: the message had 10000007 characters]"},
		{"50 reflect probes of a 100 KB attribute",
			map[string]any{"op": "reflect", "html": `<p id=a title="` + strings.ReplaceAll(lt, "<", "&lt;") + `">x</p>`, "probes": probes},
			"the reflection state exceeded"},
		{"a trace of many '<'",
			map[string]any{"op": "trace", "script": `trace.value('x', '<'.repeat(300000)); trace.done();`},
			"the trace exceeded --trace-max-bytes=1048576 bytes of records"},
	} {
		resp, n := c.sendLine(t, tc.req)
		t.Logf("%s: answer line %d bytes", tc.name, n)
		assert.Less(t, n, max, "%s: the answer line", tc.name)
		errs, _ := resp["errors"].(map[string]any)
		for _, e := range engines {
			msg, _ := errs[e].(string)
			assert.Contains(t, msg, tc.want, "%s: %s", tc.name, e)
			assert.LessOrEqual(t, len(msg), answerbound.MaxErrorBytes, "%s: %s's error", tc.name, e)
		}
	}

	// Under the bounds the same kinds of content are answered, whole.
	resp, n := c.sendLine(t, map[string]any{"op": "trace", "script": `trace.value('x', '<'.repeat(100000)); trace.done();`})
	assert.Nil(t, resp["errors"], "100,000 '<' (600 kB escaped) are under --trace-max-bytes")
	assert.Less(t, n, max)
	resp, n = c.sendLine(t, map[string]any{"op": "reflect", "html": `<p id=a title="` + strings.Repeat("&lt;", 10000) + `">x</p>`, "probes": probes[:5]})
	assert.Nil(t, resp["errors"], "5 probes of 10 kB are under the reflection bound")
	assert.Less(t, n, max)
	if states, ok := resp["states"].(map[string]any); assert.True(t, ok) {
		for _, e := range engines {
			st, _ := states[e].(map[string]any)
			obs, _ := st["observations"].([]any)
			require.Len(t, obs, 5, e)
			assert.Equal(t, strings.Repeat("<", 10000), obs[0].(map[string]any)["attr_value"], e)
		}
	}
	resp = c.send(t, caseOK())
	assert.Nil(t, resp["errors"], "the next case is answered")

	hwm := vmHWM(t, c.pid())
	t.Logf("oracle peak RSS after the hostile cases: %d MB", hwm/1024)
	assert.Less(t, hwm, 300*1024, "the oracle's peak RSS")
}
