package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/internal/testutil/chromedriver"
)

// Debian's ChromeDriver, a WebDriver server separate from the oracle, scored as
// --candidate-webdriver with no adapter: it is the oracle's own Chromium build, so
// it passes at least 80% of the bundled cases the engines vote on, with no
// candidate error, and its dumps name its build.
func TestChromeDriverCandidateIsScored(t *testing.T) {
	testutil.NeedsBrowsers(t)
	url := chromedriver.Start(t)
	dir := t.TempDir()
	oracleBin := buildOracle(t, dir)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"--candidate-webdriver", url, "--candidate-capabilities", chromedriver.Capabilities(),
		"--oracle", oracleBin, "--oracle-flag=--store=off", "--reduce=0", "--parallel=2", "--out", out,
		filepath.Join("..", "..", "testdata", "cases.ndjson")}, &stdout, &stderr)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	require.Contains(t, []int{exitOK, exitFail}, code)
	var sum summary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Zero(t, sum.Verdicts["candidate-error"])
	voted := sum.Verdicts["pass"] + sum.Verdicts["fail"]
	require.Positive(t, voted)
	assert.GreaterOrEqual(t, float64(sum.Verdicts["pass"]), 0.8*float64(voted), "%v", sum.Verdicts)
	assert.Contains(t, sum.Candidate, "webdriver: "+url+" (chrome ")
	b, err = os.ReadFile(filepath.Join(out, "candidate.ndjson"))
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	var rec struct {
		Dump struct {
			Engine        string `json:"engine"`
			EngineVersion string `json:"engine_version"`
		} `json:"dump"`
	}
	require.NoError(t, json.Unmarshal(lines[0], &rec))
	assert.Equal(t, "chrome", rec.Dump.Engine)
	assert.Regexp(t, `^\d+\.`, rec.Dump.EngineVersion)
}
