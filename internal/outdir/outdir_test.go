package outdir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A directory someone else could write into before the command runs: its names
// must not redirect the command's writes.
func TestNoWriteLeavesTheDirectory(t *testing.T) {
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "outside")
	require.NoError(t, os.Mkdir(outside, 0o755))
	victim := filepath.Join(outside, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	dir := filepath.Join(tmp, "out")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "index.html")))
	require.NoError(t, os.Symlink("index.html", filepath.Join(dir, "inner.html"))) // inside, still refused
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "reduced")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "summary.json"), 0o644))

	d, err := Open(dir)
	require.NoError(t, err)
	defer d.Close()
	for _, name := range []string{"index.html", "inner.html", "reduced/victim", "reduced/new", "../outside/victim", "/etc/passwd-x", "summary.json"} {
		done := make(chan error, 1)
		go func() { done <- d.WriteFile(name, []byte("hostile")) }()
		select {
		case err := <-done:
			assert.Error(t, err, "%s is refused", name)
		case <-time.After(5 * time.Second):
			t.Fatalf("writing %s blocked", name)
		}
	}
	assert.Error(t, d.MkdirAll("reduced/cases"), "a symlinked folder is refused")
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b), "nothing outside the directory was written")
	_, err = os.Stat(filepath.Join(outside, "new"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Plain names, new or existing, are written.
	require.NoError(t, d.MkdirAll("cases/a"))
	require.NoError(t, d.WriteFile("cases/a/1.html", []byte("one")))
	require.NoError(t, d.WriteFile("cases/a/1.html", []byte("two")))
	b, err = os.ReadFile(filepath.Join(dir, "cases", "a", "1.html"))
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
}

// Append goes on at a file's end and refuses what Create refuses.
func TestAppendGoesOnAndRefusesASymlink(t *testing.T) {
	tmp := t.TempDir()
	victim := filepath.Join(tmp, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	dir := filepath.Join(tmp, "out")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, "journal")))
	d, err := Open(dir)
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Append("journal")
	assert.ErrorContains(t, err, "symlink")
	for _, line := range []string{"one\n", "two\n"} {
		f, err := d.Append("log")
		require.NoError(t, err)
		_, err = f.WriteString(line)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(b))
	b, err = os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
}
