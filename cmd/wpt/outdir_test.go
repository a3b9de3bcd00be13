package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/outdir"
)

// The reftest view writes nothing through a symlink already in its directory
// (index.html, img/): the write is refused and the file pointed to is left as it
// was. A unit test of the writer, with no tests to show.
func TestReftestViewRefusesSymlinks(t *testing.T) {
	for _, name := range []string{"index.html", "img"} {
		tmp := t.TempDir()
		victim := filepath.Join(tmp, "victim")
		require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
		dir := filepath.Join(tmp, "reftests")
		require.NoError(t, os.Mkdir(dir, 0o755))
		target := victim
		if name == "img" {
			target = tmp
		}
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
		od, err := outdir.Open(dir)
		require.NoError(t, err)
		_, err = writeReftestView(od, nil, nil, nil, 0)
		od.Close()
		assert.ErrorContains(t, err, "symlink", name)
		b, err := os.ReadFile(victim)
		require.NoError(t, err)
		assert.Equal(t, "keep", string(b), name)
	}
	od, err := outdir.Open(filepath.Join(t.TempDir(), "reftests"))
	require.NoError(t, err)
	defer od.Close()
	_, err = writeReftestView(od, nil, nil, nil, 0)
	require.NoError(t, err)
	assert.FileExists(t, od.Join("index.html"))
}
