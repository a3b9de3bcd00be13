package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/testutil"
)

// plantedCorpus: one case for each of three planted defects (cmd/planted's
// table: p-tall, list-indent, cell-padding), and one none of them touches.
const plantedCorpus = `{"id":"p","html":"<!doctype html><p>Some words</p>"}
{"id":"ul","html":"<!doctype html><ul><li>one</li></ul>"}
{"id":"td","html":"<!doctype html><table><tr><td>cell</td></tr></table>"}
{"id":"plain","html":"<!doctype html><div style=\"width:50px;height:20px\"></div>"}
`

// Across two builds, against the real engines: a candidate built from the
// oracle's own Chromium (cmd/planted, as --candidate-server) with defects
// {A, B} = {p-tall, list-indent}, then {B, C} = {list-indent, cell-padding} with
// --baseline the first run: A's entry is fixed, B's still and C's new, exit 1; the
// baseline's reduced cases are rechecked first. C's rerun.sh exits 1 against the
// run's candidate, and 0 against one without C. A run interrupted after two
// cases goes on with --resume to the same entries.
func TestBaselineAcrossTwoBuilds(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", dir+"/", "../oracle", "../planted", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	oracle, planted, triage := filepath.Join(dir, "oracle"), filepath.Join(dir, "planted"), filepath.Join(dir, "triage")
	corpus := writeCorpus(t, dir, plantedCorpus)
	candidate := func(defects string) string {
		return cli.ShellQuote(planted) + " stdio --parallel 2 --defects " + defects + " --oracle " + cli.ShellQuote(oracle)
	}
	triageRun := func(out string, args ...string) (int, []Bucket, summary) {
		t.Helper()
		cmd := exec.Command(triage, append(append([]string{"--oracle", oracle, "--oracle-flag=--store=off", "--oracle-flag=--pages=1",
			"--parallel=2", "--out", out}, args...), corpus)...)
		b, err := cmd.CombinedOutput()
		t.Logf("triage %s:\n%s", strings.Join(args, " "), b)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			require.NoError(t, err)
		}
		var buckets []Bucket
		var sum summary
		jb, err := os.ReadFile(filepath.Join(out, "buckets.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(jb, &buckets))
		jb, err = os.ReadFile(filepath.Join(out, "summary.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(jb, &sum))
		return cmd.ProcessState.ExitCode(), buckets, sum
	}
	// Each defect's entry, by the tag it is on.
	byTag := func(buckets []Bucket) map[string]Bucket {
		m := map[string]Bucket{}
		for _, b := range buckets {
			m[b.Signature.Tag] = b
		}
		return m
	}

	first := filepath.Join(dir, "first")
	code, buckets, _ := triageRun(first, "--candidate-server", candidate("p-tall,list-indent"), "--reduce-timeout=40s", "--reduce-budget=80s")
	require.Equal(t, exitFail, code)
	m := byTag(buckets)
	require.Contains(t, m, "P", "A: p-tall")
	require.Contains(t, m, "UL", "B: list-indent")
	require.Len(t, buckets, 2, "one entry per defect")

	second := filepath.Join(dir, "second")
	code, buckets, sum := triageRun(second, "--candidate-server", candidate("list-indent,cell-padding"), "--reduce=0", "--baseline", first)
	assert.Equal(t, exitFail, code, "C is new")
	m = byTag(buckets)
	require.Contains(t, m, "P")
	require.Contains(t, m, "UL")
	require.Contains(t, m, "TD", "C: cell-padding")
	assert.Equal(t, "fixed", m["P"].Status, "A")
	assert.Equal(t, "still", m["UL"].Status, "B")
	assert.Equal(t, "new", m["TD"].Status, "C")
	require.NotNil(t, sum.Baseline)
	assert.Equal(t, 1, sum.Baseline.New)
	assert.Equal(t, 1, sum.Baseline.Still)
	assert.Equal(t, 1, sum.Baseline.Fixed)
	if m["P"].Reduced != nil && m["P"].Reduced.Error == "" {
		assert.Equal(t, "passes", m["P"].Recheck, "A's reduced case passes in the build without A")
	}
	if r := m["UL"].Reduced; r != nil && r.Error == "" {
		assert.Equal(t, "fails", m["UL"].Recheck, "B's reduced case still fails")
	}

	// An interruption after two cases: --resume answers those from the journal
	// and runs the other two, to the same entries.
	journal, err := os.ReadFile(filepath.Join(second, journalName))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(journal), "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	require.NoError(t, os.WriteFile(filepath.Join(second, journalName), []byte(strings.Join(lines[:2], "")), 0o644))
	code, buckets, sum = triageRun(second, "--candidate-server", candidate("list-indent,cell-padding"), "--reduce=0", "--baseline", first, "--resume")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, 2, sum.Resumed)
	assert.Equal(t, 4, sum.Cases)
	m = byTag(buckets)
	assert.Equal(t, "fixed", m["P"].Status)
	assert.Equal(t, "still", m["UL"].Status)
	assert.Equal(t, "new", m["TD"].Status)

	c := m["TD"]
	require.Regexp(t, `^entries/\d+/rerun\.sh$`, c.Rerun)
	md, err := os.ReadFile(filepath.Join(second, c.Report))
	require.NoError(t, err)
	for _, want := range []string{"## Builds", "- chromium: ", "- candidate: server: ", "| **", "Agreeing engines"} {
		assert.Contains(t, string(md), want, "report.md: the values, builds and agreeing engines")
	}
	index, err := os.ReadFile(filepath.Join(second, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), "Fixed since the baseline")
	rerun := func(args ...string) int {
		cmd := exec.Command("sh", append([]string{filepath.Join(second, c.Rerun)}, args...)...)
		b, err := cmd.CombinedOutput()
		t.Logf("rerun.sh %s:\n%s", strings.Join(args, " "), b)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			require.NoError(t, err)
		}
		return cmd.ProcessState.ExitCode()
	}
	assert.Equal(t, exitFail, rerun(), "C shows in the run's candidate")
	assert.Equal(t, exitOK, rerun(candidate("list-indent")), "and not in one without C")
}
