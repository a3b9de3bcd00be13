package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/testutil"
)

// pngFile writes a small real PNG to path and returns its bytes.
func pngFile(t *testing.T, path string) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return b.Bytes()
}

// writeOne writes a report of one case whose firefox dump names shot as its
// screenshot_file, and returns the case page. It fails the test rather than hang
// when the writer blocks (a FIFO).
func writeOne(t *testing.T, w *Writer, shot string) string {
	t.Helper()
	o := map[string]*dump.Dump{"chromium": small("chromium", 100), "firefox": small("firefox", 100), "webkit": small("webkit", 100)}
	o["firefox"].ScreenshotFile = shot
	r, err := compare.Geometry(o, nil, dump.DefaultTolerance)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		if err := w.Add(Case{ID: json.RawMessage(`"shot"`), Report: r, Dumps: o}); err != nil {
			done <- err
			return
		}
		done <- w.Close()
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatalf("writing the report with screenshot_file %s did not finish", shot)
	}
	b, err := os.ReadFile(filepath.Join(w.dir.Path(), "cases", "000001.html"))
	require.NoError(t, err)
	return string(b)
}

// A dump's screenshot_file is read only from the screenshot directory the report
// was given, and only as a bounded regular file: a PNG elsewhere on disk is not
// copied into the report, /dev/zero does not run the process out of memory, and a
// FIFO does not block it. Without an screenshot directory none is read. A unit test
// of the writer on hand-built dumps.
func TestScreenshotFileOnlyFromTheArtifactsDirectory(t *testing.T) {
	tmp := t.TempDir()
	secret := filepath.Join(tmp, "secret.png")
	pngFile(t, secret)
	fifo := filepath.Join(tmp, "fifo.png")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	for _, shot := range []string{secret, "/dev/zero", fifo} {
		dir := filepath.Join(t.TempDir(), "report")
		w, err := New(dir, dump.DefaultTolerance)
		require.NoError(t, err)
		page := writeOne(t, w, shot)
		shots, err := os.ReadDir(filepath.Join(dir, "shots"))
		require.NoError(t, err)
		assert.Empty(t, shots, "%s is not copied into the report", shot)
		assert.Contains(t, page, "screenshot not usable: screenshot_file", shot)
		assert.Contains(t, page, "not read", shot)
	}
}

// With an screenshot directory, a screenshot_file in it is copied; one outside it,
// named directly or through a symlink or "..", or a directory, is refused with
// the reason on the panel. A unit test of the writer on hand-built dumps.
func TestScreenshotFileInTheArtifactsDirectory(t *testing.T) {
	tmp := t.TempDir()
	art := filepath.Join(tmp, "artifacts")
	require.NoError(t, os.Mkdir(art, 0o755))
	want := pngFile(t, filepath.Join(art, "000001-c1-firefox.png"))
	secret := filepath.Join(tmp, "secret.png")
	pngFile(t, secret)
	require.NoError(t, os.Symlink(secret, filepath.Join(art, "link.png")))
	big := filepath.Join(art, "big.png")
	require.NoError(t, os.WriteFile(big, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 4<<20)...), 0o644))

	dir := filepath.Join(t.TempDir(), "report")
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	require.NoError(t, w.SetArtifacts(art))
	page := writeOne(t, w, filepath.Join(art, "000001-c1-firefox.png"))
	got, err := os.ReadFile(filepath.Join(dir, "shots", "000001-firefox.png"))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the artifact is copied")
	assert.NotContains(t, page, "not usable")

	for shot, why := range map[string]string{
		secret:                                 "outside the screenshot directory",
		filepath.Join(art, "..", "secret.png"): "outside the screenshot directory",
		filepath.Join(art, "link.png"):         "escapes",
		art:                                    "not a regular file",
		big:                                    "over the 3145728",
		"/dev/zero":                            "outside the screenshot directory",
	} {
		dir := filepath.Join(t.TempDir(), "report")
		w, err := New(dir, dump.DefaultTolerance)
		require.NoError(t, err)
		require.NoError(t, w.SetArtifacts(art))
		page := writeOne(t, w, shot)
		shots, err := os.ReadDir(filepath.Join(dir, "shots"))
		require.NoError(t, err)
		assert.Empty(t, shots, "%s is not copied", shot)
		assert.Contains(t, page, why, shot)
	}
}

// The report's files are written through its directory's root: a name already
// there as a symlink (to a file outside, or a folder outside) is refused, and what
// it points to is left as it was. A unit test of the writer.
func TestReportDoesNotWriteThroughSymlinks(t *testing.T) {
	for _, name := range []string{"index.html", "cases.js", "report.css", "cases"} {
		trap := testutil.NewSymlinkTrap(t, "report", name, name == "cases")
		w, err := New(trap.Dir, dump.DefaultTolerance)
		if err == nil {
			o := map[string]*dump.Dump{"chromium": small("chromium", 100), "firefox": small("firefox", 100), "webkit": small("webkit", 100)}
			r, gerr := compare.Geometry(o, nil, dump.DefaultTolerance)
			require.NoError(t, gerr)
			err = w.Add(Case{ID: json.RawMessage(`"a"`), Report: r, Dumps: o})
			if err == nil {
				err = w.Close()
			}
		}
		assert.ErrorContains(t, err, "symlink", name)
		trap.Untouched(t, name)
	}
}

// A hostile id, engine name, tag, version or error message is text on every page:
// no element, attribute or script of its own, and no javascript: link. A unit test
// of the writer's output, parsed as a browser parses it (golang.org/x/net/html).
func TestHostileTextStaysText(t *testing.T) {
	const x = `"><img src=x onerror=alert(1)></script><script>alert(1)</script><a href="javascript:alert(1)">`
	dir := filepath.Join(t.TempDir(), "report")
	w, err := New(dir, dump.DefaultTolerance)
	require.NoError(t, err)
	o := map[string]*dump.Dump{"chromium": small("chromium", 100), "firefox": small("firefox", 107), x: small(x, 100)}
	for _, d := range o {
		d.EngineVersion = x
		d.Nodes[2].Tag = strings.ToUpper(x)
		d.Screenshot = base64.StdEncoding.EncodeToString([]byte(x))
	}
	r, err := compare.Geometry(o, nil, dump.DefaultTolerance)
	require.NoError(t, err)
	id, _ := json.Marshal(x)
	require.NoError(t, w.Add(Case{ID: id, Report: r, Dumps: o, Errors: map[string]string{x: x}}))
	require.NoError(t, w.Add(Case{ID: json.RawMessage(`{"k":` + string(id) + `}`), Report: &compare.Report{Verdict: "error", Reason: x}, Errors: map[string]string{"webkit": x}}))
	require.NoError(t, w.Close())

	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	require.NoError(t, err)
	cases, err := filepath.Glob(filepath.Join(dir, "cases", "*.html"))
	require.NoError(t, err)
	files = append(files, cases...)
	require.Len(t, files, 3)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.Contains(f, "cases") {
			assert.Contains(t, string(b), "alert(1)", "%s: the text is there, as text", f)
		}
		doc, err := html.Parse(bytes.NewReader(b))
		require.NoError(t, err)
		for n := range doc.Descendants() {
			if n.Type != html.ElementNode {
				continue
			}
			for _, a := range n.Attr {
				if n.Data == "img" && a.Key == "src" {
					assert.True(t, strings.HasPrefix(a.Val, "../shots/"), "%s: no picture from the input: %q", f, a.Val)
				}
				assert.False(t, strings.HasPrefix(a.Key, "on") && strings.Contains(a.Val, "alert"), "%s: <%s %s=%q>", f, n.Data, a.Key, a.Val)
				assert.False(t, strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:"), "%s: <%s %s=%q>", f, n.Data, a.Key, a.Val)
			}
			if n.Data == "script" {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					assert.NotContains(t, c.Data, "alert(1)</script>", "%s: a script holds no closing tag from the input", f)
					assert.NotContains(t, c.Data, "<script>alert", f)
				}
			}
		}
	}
	// The index's rows are data for a script (cases.js), with < and > escaped.
	b, err := os.ReadFile(filepath.Join(dir, "cases.js"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "<")
	assert.NotContains(t, string(b), ">")
}
