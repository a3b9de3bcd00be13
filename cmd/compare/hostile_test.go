package main

// Unit tests of compare on hand-written hostile answers: a screenshot_file outside the
// oracle's screenshot directory, a report directory whose names are symlinks, and ids
// and errors that hold terminal controls. Each failed before its fix.

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
)

// withShot is the fixture's oracle line with chromium's dump naming path as its
// screenshot_file.
func withShot(t *testing.T, path string) string {
	t.Helper()
	line := fixture(t, "oracle-one.ndjson")
	out := strings.Replace(line, `"engine":"chromium",`, `"engine":"chromium","screenshot_file":"`+path+`",`, 1)
	require.NotEqual(t, line, out)
	return out
}

func writePNG(t *testing.T, path string) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 3))))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return b.Bytes()
}

// A screenshot_file is read only from --screenshot-dir DIR (the oracle's): a PNG
// anywhere else on disk, named by the answers or by the candidate, is not copied
// into the report, and the panel says why.
func TestHTMLReadsScreenshotsOnlyFromTheArtifacts(t *testing.T) {
	tmp := t.TempDir()
	secret := filepath.Join(tmp, "secret.png")
	writePNG(t, secret)
	d := bareDump(t)
	d["screenshot_file"] = secret
	cand := writeFile(t, candidateRecord(t, "only", d))
	for _, args := range [][]string{
		{"--answers", writeFile(t, withShot(t, secret))},
		{"--answers", writeFile(t, fixture(t, "oracle-one.ndjson")), "--candidate", cand},
	} {
		html := filepath.Join(t.TempDir(), "report")
		code, stdout, stderr := runCmd(t, "", append(args, "--out", html)...)
		assert.Contains(t, []int{0, 1}, code, "stdout: %s\nstderr: %s", stdout, stderr)
		shots, err := os.ReadDir(filepath.Join(html, "shots"))
		require.NoError(t, err)
		assert.Empty(t, shots, "%v: nothing outside the artifacts is copied", args)
		page, err := os.ReadFile(filepath.Join(html, "cases", "000001.html"))
		require.NoError(t, err)
		assert.Contains(t, string(page), "not read: no screenshot directory was given", args)
	}

	// With --screenshot-dir, a file in it is copied and one outside it is not.
	art := filepath.Join(tmp, "artifacts")
	require.NoError(t, os.Mkdir(art, 0o755))
	want := writePNG(t, filepath.Join(art, "000001-only-chromium.png"))
	html := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := runCmd(t, "", "--answers", writeFile(t, withShot(t, filepath.Join(art, "000001-only-chromium.png"))),
		"--candidate", cand, "--out", html, "--screenshot-dir", art)
	assert.Contains(t, []int{0, 1}, code, "stdout: %s\nstderr: %s", stdout, stderr)
	got, err := os.ReadFile(filepath.Join(html, "shots", "000001-chromium.png"))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = os.Stat(filepath.Join(html, "shots", "000001-candidate.png"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the candidate's file is outside the artifacts")
	page, err := os.ReadFile(filepath.Join(html, "cases", "000001.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "outside the screenshot directory")

	code, _, stderr = runCmd(t, "", "--answers", writeFile(t, fixture(t, "oracle-one.ndjson")), "--screenshot-dir", art)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stderr, "needs --out")
}

// --out writes nothing through a symlink already in its directory: compare stops
// with an error naming it, and the file it points to is left as it was.
func TestHTMLRefusesSymlinksInItsDirectory(t *testing.T) {
	for _, name := range []string{"index.html", "cases.js", "shots"} {
		trap := testutil.NewSymlinkTrap(t, "report", name, name == "shots")
		code, _, stderr := runCmd(t, "", "--answers", writeFile(t, fixture(t, "oracle-one.ndjson")), "--out", trap.Dir)
		assert.Equal(t, exitBadInput, code, name)
		assert.Contains(t, stderr, "symlink", name)
		trap.Untouched(t, name)
	}
}

// An id or an error holding terminal controls reaches the terminal escaped: it can
// neither retitle nor clear the terminal, nor forge a line of compare's output.
func TestTextOutputEscapesTerminalControls(t *testing.T) {
	line := fixture(t, "oracle-one.ndjson")
	hostile := strings.Replace(line, `"id":"only"`, `"id":"\u001b]0;TITLE\u0007\u001b[2J\rX","errors":{"webkit":"\u001b[31mred\r\nFORGED LINE\u202e"}`, 1)
	require.NotEqual(t, line, hostile)
	noID := `{"id":null,"error":"bad \u001b[2J\nFORGED LINE"}`
	var out, errOut bytes.Buffer
	run([]string{"--answers", writeFile(t, hostile+"\n"+noID+"\n")}, nil, &out, &errOut)
	for name, text := range map[string]string{"stdout": out.String(), "stderr": errOut.String()} {
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			assert.False(t, strings.HasPrefix(l, "FORGED"), "%s: a forged line: %q", name, text)
			assert.False(t, strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 || r == 0x202e }), "%s: a control in %q", name, l)
		}
	}
	assert.Contains(t, out.String(), `\x1b]0;TITLE\x07\x1b[2J\x0dX`, "the id, escaped")
	assert.Contains(t, out.String(), fmt.Sprintf("webkit: %s", `\x1b[31mred\x0d\x0aFORGED LINE\u202e`), "the error, escaped")
	assert.Contains(t, errOut.String(), `bad \x1b[2J\x0aFORGED LINE`, "the unmatched error, escaped")
}
