// Package outdir is how the commands write an output directory (compare --out,
// triage --out, wpt run --out, the report package): every file goes through an
// os.Root opened on the directory, so no name in it ("..", an absolute path, a
// symlink already there) leads a write outside it, and a name that is already there
// as anything but a regular file or a directory (a symlink, even one pointing
// inside, a FIFO, a device) is refused rather than written through: a FIFO would
// block the write for good.
package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is one output directory, open as an os.Root.
type Dir struct {
	path string
	root *os.Root
}

// Open creates path (and its parents) when missing and opens it. The directory
// itself may be a symlink: the user named it.
func Open(path string) (*Dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return &Dir{path: path, root: root}, nil
}

// Path is the directory as it was named; Join is a name in it, for messages.
func (d *Dir) Path() string            { return d.path }
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// Close releases the directory.
func (d *Dir) Close() error { return d.root.Close() }

// check refuses a name that exists as anything but a regular file (dir false) or a
// directory (dir true). A missing name is fine: it is created.
func (d *Dir) check(name string, dir bool) error {
	fi, err := d.root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink: refusing to write through it", d.Join(name))
	case dir && !fi.IsDir():
		return fmt.Errorf("%s is not a directory", d.Join(name))
	case !dir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%v): refusing to write to it", d.Join(name), fi.Mode().Type())
	}
	return nil
}

// MkdirAll creates the folder name (slash-separated, relative) and its parents in
// the directory; none of them may be a symlink.
func (d *Dir) MkdirAll(name string) error {
	name = filepath.Clean(filepath.FromSlash(name))
	if err := d.checkParents(filepath.Join(name, "x")); err != nil {
		return err
	}
	if err := d.root.MkdirAll(name, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	return nil
}

// splitPath is a relative path's elements.
func splitPath(p string) []string {
	var parts []string
	for p != "." && p != "" && p != string(filepath.Separator) {
		dir, file := filepath.Split(p)
		parts = append([]string{file}, parts...)
		p = filepath.Clean(dir)
		if dir == "" {
			break
		}
	}
	return parts
}

// Create creates or truncates the file name (slash-separated, relative) for writing;
// its folders must exist (MkdirAll).
func (d *Dir) Create(name string) (*os.File, error) {
	return d.open(name, os.O_TRUNC)
}

// Append opens the file name (as Create) for writing at its end, creating it when
// missing: a journal a later run goes on with.
func (d *Dir) Append(name string) (*os.File, error) {
	return d.open(name, os.O_APPEND)
}

func (d *Dir) open(name string, mode int) (*os.File, error) {
	name = filepath.FromSlash(name)
	if err := d.checkParents(name); err != nil {
		return nil, err
	}
	if err := d.check(name, false); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|mode, 0o644)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return f, nil
}

// checkParents refuses a name whose folders inside the directory are symlinks.
func (d *Dir) checkParents(name string) error {
	parts := splitPath(filepath.Clean(name))
	var walk string
	for _, part := range parts[:max(len(parts)-1, 0)] {
		walk = filepath.Join(walk, part)
		if err := d.check(walk, true); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes b to the file name, as Create.
func (d *Dir) WriteFile(name string, b []byte) error {
	return d.write(name, os.O_TRUNC, b)
}

// WriteNew writes b to the file name, which must not exist yet: where it does, the
// error is fs.ErrExist and nothing is written (a file an earlier run left).
func (d *Dir) WriteNew(name string, b []byte) error {
	return d.write(name, os.O_EXCL, b)
}

func (d *Dir) write(name string, mode int, b []byte) error {
	f, err := d.open(name, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	return nil
}

// WriteExecutable writes b to the file name, as WriteFile, and makes it
// executable (a script).
func (d *Dir) WriteExecutable(name string, b []byte) error {
	if err := d.WriteFile(name, b); err != nil {
		return err
	}
	if err := d.root.Chmod(filepath.FromSlash(name), 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	return nil
}

// Sub creates the folder name in the directory (as MkdirAll) and opens it as a
// directory of its own, still unable to lead outside this one.
func (d *Dir) Sub(name string) (*Dir, error) {
	if err := d.MkdirAll(name); err != nil {
		return nil, err
	}
	root, err := d.root.OpenRoot(filepath.FromSlash(name))
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	return &Dir{path: d.Join(name), root: root}, nil
}
