package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/internal/testutil"
)

// The reftest view writes nothing through a symlink already in its directory
// (index.html, img/): the write is refused and the file pointed to is left as it
// was. A unit test of the writer, with no tests to show.
func TestReftestViewRefusesSymlinks(t *testing.T) {
	for _, name := range []string{"index.html", "img"} {
		trap := testutil.NewSymlinkTrap(t, "reftests", name, name == "img")
		od, err := outdir.Open(trap.Dir)
		require.NoError(t, err)
		_, err = writeReftestView(od, nil, nil, nil, 0)
		od.Close()
		assert.ErrorContains(t, err, "symlink", name)
		trap.Untouched(t, name)
	}
	od, err := outdir.Open(filepath.Join(t.TempDir(), "reftests"))
	require.NoError(t, err)
	defer od.Close()
	_, err = writeReftestView(od, nil, nil, nil, 0)
	require.NoError(t, err)
	assert.FileExists(t, od.Join("index.html"))
}
