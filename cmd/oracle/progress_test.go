package main

// The oracle's periodic progress line, from the real binary on the real
// engines: it counts the answers and the errors, and says the rate.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOracleLogsItsProgress(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	// Chromium only: the counts are the oracle's, one per answer whatever its engines.
	c := startOracle(t, "--engines=chromium", "--pages=1", "--self-check=false", "--progress-every=1s")
	defer c.close()
	for i := 0; i < 3; i++ {
		c.send(t, map[string]any{"html": "<div style='width:10px;height:10px'></div>"})
	}
	c.send(t, map[string]any{"html": "<div></div>", "script": "null.x"}) // the engine errs
	c.sendRaw(t, `{"id":"bad","op":"nope"}`, `"bad"`)                    // refused

	// The line comes at the next tick: poll the log for it.
	var line map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for line == nil && time.Now().Before(deadline) {
		for _, l := range strings.Split(c.stderr.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["message"] == "progress" && m["answered"] == 5.0 {
				line = m
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NotNil(t, line, "no progress line with 5 answers; stderr:\n%s", c.stderr.String())
	assert.Equal(t, "info", line["level"])
	assert.Equal(t, 1.0, line["errors"], "the refused line")
	assert.Equal(t, 1.0, line["engine_errors"], "the case whose script threw")
	assert.Greater(t, line["avg_rate"], 0.0)
	assert.Contains(t, line, "rate")

	// Idle: no new line while nothing is answered.
	n := strings.Count(c.stderr.String(), `"message":"progress"`)
	time.Sleep(2500 * time.Millisecond)
	assert.Equal(t, n, strings.Count(c.stderr.String(), `"message":"progress"`), "an idle oracle repeats nothing")
}
