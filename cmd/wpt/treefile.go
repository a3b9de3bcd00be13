package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxTreeFile bounds a file bin/wpt reads from the tree (a test, or a reference whose
// links it follows). WPT's test files are text of at most hundreds of KiB; the bound
// is far above that and far below what a hostile tree can name (a sparse file of a
// TiB, which os.ReadFile would try to allocate at once).
const maxTreeFile = 16 << 20

// maxManifest bounds MANIFEST.json, the one file of the tree far larger than a test
// (WPT's is tens of MiB), read by the same rules.
const maxManifest = 512 << 20

// errNotInTree: the path is not a regular file bin/wpt reads (docs/untrusted.md).
var errNotInTree = errors.New("bin/wpt reads only regular files inside --root")

// readTreeFile reads rel (slash-separated, relative to root) as the oracle's docroot
// would serve it: through an os.Root, so no symlink or ".." leads outside root; a
// regular file only, so a FIFO (whose open blocks until a writer comes) or a device
// is refused before it is opened for reading; at most maxTreeFile bytes. The error
// names rel and why it was not read.
func readTreeFile(root, rel string) ([]byte, error) {
	return readTreeFileUpTo(root, rel, maxTreeFile)
}

// readTreeFileUpTo is readTreeFile with a bound of max bytes.
func readTreeFileUpTo(root, rel string, max int64) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	name := filepath.FromSlash(rel)
	if _, err := treeStat(r, rel, max); err != nil {
		return nil, err
	}
	// Non-blocking, in case it was replaced by a FIFO since the stat; checked again.
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file: %w", rel, errNotInTree)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: over %d MiB, more than such a file has: %w", rel, max>>20, errNotInTree)
	}
	return b, nil
}

// treeFile says why rel is not a regular file of at most maxTreeFile bytes inside
// root (nil when it is): what the oracle's docroot serves, so a reference bin/wpt
// counts as present is one the oracle can load.
func treeFile(root, rel string) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = treeStat(r, rel, maxTreeFile)
	return err
}

func treeStat(r *os.Root, rel string, max int64) (fs.FileInfo, error) {
	st, err := r.Stat(filepath.FromSlash(rel))
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // rel names the file; the root's "statat" adds nothing
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", rel, err)
	case err != nil: // a symlink (or a path through one) that leads outside the tree
		return nil, fmt.Errorf("%s: %v: %w", rel, err, errNotInTree)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %s, not a regular file: %w", rel, fileKind(st.Mode()), errNotInTree)
	case st.Size() > max:
		return nil, fmt.Errorf("%s: %d bytes, over %d MiB, more than such a file has: %w", rel, st.Size(), max>>20, errNotInTree)
	}
	return st, nil
}

// fileKind names what a mode that is not a regular file's is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a " + m.Type().String() + " file"
}
