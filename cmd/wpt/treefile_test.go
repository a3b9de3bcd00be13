package main

// What bin/wpt reads of a tree it is pointed at: a test file that
// is a 1 TiB sparse file, a symlink to /dev/zero, a FIFO or a symlink out of the tree
// is refused with a message naming it, and the rest of the tree is still planned. No
// browser: the reading path of `requests` and `run` (planRun, and the reftest chain's
// link reader).

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// within runs fn, failing the test if it has not returned after d (it is left
// running: a read blocked in open(2) cannot be interrupted).
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
}

func TestWptReadsOnlyRegularFilesInsideTheTreeUpToACap(t *testing.T) {
	for _, v := range []struct {
		name string
		make func(t *testing.T, bad, outside string)
		want string
	}{
		{"sparse 1 TiB file", func(t *testing.T, bad, _ string) {
			f, err := os.Create(bad)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(1<<40))
			require.NoError(t, f.Close())
		}, "1099511627776 bytes, over 16 MiB"},
		{"symlink to /dev/zero", func(t *testing.T, bad, _ string) {
			require.NoError(t, os.Symlink("/dev/zero", bad))
		}, "path escapes from parent: bin/wpt reads only regular files inside --root"},
		{"FIFO", func(t *testing.T, bad, _ string) {
			require.NoError(t, syscall.Mkfifo(bad, 0o644))
		}, "a FIFO, not a regular file: bin/wpt reads only regular files inside --root"},
		{"symlink out of the tree", func(t *testing.T, bad, outside string) {
			require.NoError(t, os.Symlink(outside, bad))
		}, "path escapes from parent: bin/wpt reads only regular files inside --root"},
	} {
		t.Run(v.name, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "root")
			require.NoError(t, os.Mkdir(root, 0o755))
			// Outside the tree: a testharness test, which would be planned if followed.
			outside := filepath.Join(base, "outside.html")
			require.NoError(t, os.WriteFile(outside, []byte(`<script src="/resources/testharness.js"></script>`), 0o644))
			for name, body := range map[string]string{
				"good.html":     `<link rel="match" href="good-ref.html"><link rel="match" href="bad.html"><p>x`,
				"good-ref.html": `<p>x`,
			} {
				require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
			}
			// A symlink that stays inside the tree is followed, as the docroot follows it.
			require.NoError(t, os.Symlink("good.html", filepath.Join(root, "link.html")))
			v.make(t, filepath.Join(root, "bad.html"), outside)

			var out, errb bytes.Buffer
			code := -1
			within(t, 10*time.Second, "wpt requests", func() {
				code = run([]string{"requests", "--root", root, "*.html"}, nil, &out, &errb)
			})
			require.Equal(t, 0, code, errb.String())
			var ids []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(l), &m), l)
				ids = append(ids, m["id"].(string))
			}
			assert.Equal(t, []string{"/good.html", "/good-ref.html", "/link.html"}, ids)
			assert.Contains(t, errb.String(), "wpt requests: bad.html: "+v.want)
			assert.Contains(t, errb.String(), "wpt requests: good.html: reference bad.html: "+v.want)

			errb.Reset()
			var tests []plannedTest
			within(t, 10*time.Second, "wpt run's plan", func() {
				tests, _ = planRun(nil, root, []string{"bad.html", "good-ref.html", "good.html", "link.html"}, true, &errb)
			})
			var urls []string
			for _, pt := range tests {
				urls = append(urls, pt.URL)
			}
			assert.Equal(t, []string{"/good.html", "/link.html"}, urls)
			assert.Contains(t, errb.String(), "wpt run: bad.html: "+v.want)

			within(t, 10*time.Second, "the reftest chain's link reader", func() {
				refs, fuzzy := fileLinks(root)("/bad.html")
				assert.Nil(t, refs)
				assert.Nil(t, fuzzy)
			})
		})
	}
}

// A file of maxTreeFile bytes is read whole; one byte more is refused, unread; a
// missing file is fs.ErrNotExist, named.
func TestReadTreeFileCapsWhatItReads(t *testing.T) {
	root := t.TempDir()
	full := bytes.Repeat([]byte("a"), maxTreeFile)
	require.NoError(t, os.WriteFile(filepath.Join(root, "max.html"), full, 0o644))
	b, err := readTreeFile(root, "max.html")
	require.NoError(t, err)
	assert.Len(t, b, maxTreeFile)
	require.NoError(t, os.WriteFile(filepath.Join(root, "over.html"), append(full, 'b'), 0o644))
	_, err = readTreeFile(root, "over.html")
	assert.ErrorContains(t, err, "over.html: 16777217 bytes, over 16 MiB")
	_, err = readTreeFile(root, "none.html")
	assert.ErrorContains(t, err, "none.html: ")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// MANIFEST.json is read by the same rules as a test file, with its own bound: a FIFO
// or a symlink to /dev/zero in its place is refused at once, and a missing one is no
// manifest (the regular expressions decide).
func TestManifestIsReadAsATreeFile(t *testing.T) {
	root := t.TempDir()
	m, err := loadManifest(root)
	require.NoError(t, err)
	assert.Nil(t, m)
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, manifestFile), 0o644))
	within(t, 10*time.Second, "a FIFO manifest", func() { _, err = loadManifest(root) })
	assert.ErrorContains(t, err, "a FIFO, not a regular file")
	require.NoError(t, os.Remove(filepath.Join(root, manifestFile)))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, manifestFile)))
	within(t, 10*time.Second, "a /dev/zero manifest", func() { _, err = loadManifest(root) })
	assert.ErrorIs(t, err, errNotInTree)
}
