package main

// scripts/corpus/wpt_corpus.py, the corpus builder the README and docs/triage.md
// name, run as a user runs it: it asks this binary which files are tests, so no
// reference file becomes a case, and it fails in one line on a directory that is
// no WPT git directory.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const corpusScript = "../../scripts/corpus/wpt_corpus.py"

// wptBinary builds this package's binary into dir.
func wptBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "wpt")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func runCorpusScript(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	cmd := exec.Command("python3", append([]string{corpusScript}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String()
}

func TestCorpusScriptRefusesAPlainDirectoryInOneLine(t *testing.T) {
	dir := t.TempDir()
	bin := wptBinary(t, dir)
	code, stdout, stderr := runCorpusScript(t, "--wpt", bin, t.TempDir(), "3")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
	assert.Contains(t, stderr, "is not a git checkout")
	assert.NotContains(t, stderr, "Traceback")
}

func TestCorpusScriptPicksTestsNotReferences(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tmp := t.TempDir()
	bin := wptBinary(t, tmp)
	repo := filepath.Join(tmp, "checkout")
	dir := filepath.Join(repo, "css", "css-flexbox")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "reference"), 0o755))
	files := map[string]string{
		// A test and its reference.
		"a.html":     `<link rel="match" href="a-ref.html"><div style="display:flex">a</div>`,
		"a-ref.html": `<div>a</div>`,
		// A chained reftest: a reference of b.html that links one of its own.
		"b.html":     `<link rel=match href=b-ref.html><p>b</p>`,
		"b-ref.html": `<link rel=match href=reference/b-ref2.html><p>b</p>`,
		// A file in reference/ that nothing links, and a support-less plain page.
		"reference/b-ref2.html": `<p>b</p>`,
		"plain.html":            `<p>no reference linked: not a reftest</p>`,
		// A test that is not self-contained.
		"c.html": `<link rel=match href=a-ref.html><img src=/images/x.png>`,
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}} {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	bare := filepath.Join(tmp, "bare.git")
	out, err := exec.Command("git", "clone", "-q", "--bare", repo, bare).CombinedOutput()
	require.NoError(t, err, string(out))

	for _, src := range []string{repo, bare} {
		code, stdout, stderr := runCorpusScript(t, "--wpt", bin, src, "10")
		require.Equal(t, 0, code, stderr)
		var ids []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var r struct {
				ID   string `json:"id"`
				HTML string `json:"html"`
			}
			require.NoError(t, json.Unmarshal([]byte(line), &r), line)
			assert.NotEmpty(t, r.HTML)
			ids = append(ids, r.ID)
		}
		assert.ElementsMatch(t, []string{"css/css-flexbox/a.html", "css/css-flexbox/b.html"}, ids, "from %s", src)
	}
}
