package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
)

// triage --out writes nothing through a symlink already in DIR (summary.json,
// index.html, a reduced/ folder leading elsewhere): it stops with an error and
// the file pointed to is left as it was. A unit test of the command's writes: it
// rescores hand-written answers (--from), so no engine runs.
func TestOutRefusesSymlinksInItsDirectory(t *testing.T) {
	from := fromDir(t, "taller") // a failing case: the run writes entries/ too
	corpus := writeCorpus(t, from, `{"id":"only","html":"<div></div>"}`+"\n")

	args := func(out string) []string {
		return []string{"--candidate-cmd", "true", "--candidate-env", "host", "--oracle", "/nonexistent/oracle",
			"--reduce", "0", "--from", from, "--out", out, corpus}
	}
	// The same run into a plain directory succeeds: what is refused below is the
	// symlink alone.
	var stdout, stderr bytes.Buffer
	clean := filepath.Join(t.TempDir(), "out")
	code := run(args(clean), &stdout, &stderr)
	require.Equal(t, exitFail, code, "stdout: %s\nstderr: %s", &stdout, &stderr)
	for _, f := range []string{"summary.json", "index.html", "buckets.json", "oracle.ndjson", "candidate.ndjson", "entries/1/rerun.sh"} {
		assert.FileExists(t, filepath.Join(clean, f))
	}

	for _, name := range []string{"summary.json", "index.html", "buckets.json", "candidate.ndjson", "reduced", "entries"} {
		trap := testutil.NewSymlinkTrap(t, "out", name, name == "reduced" || name == "entries")
		stdout.Reset()
		stderr.Reset()
		code := run(args(trap.Dir), &stdout, &stderr)
		assert.Equal(t, exitBadInput, code, "%s: stdout: %s\nstderr: %s", name, &stdout, &stderr)
		assert.Contains(t, stderr.String(), "symlink", name)
		trap.Untouched(t, name)
	}
}
