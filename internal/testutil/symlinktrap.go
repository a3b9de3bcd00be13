package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// symlinkTrap is an output directory someone else prepared: Dir holds a name that
// is a symlink to Victim, a file outside it (or to the folder holding Victim, for a
// folder's name). A writer that follows it writes Victim, or a new file beside it.
type symlinkTrap struct {
	Dir, Victim string
}

// NewSymlinkTrap makes the directory dirName (in a temporary folder) with name in
// it a symlink to the victim file, or with folder to the victim's folder.
func NewSymlinkTrap(tb testing.TB, dirName, name string, folder bool) symlinkTrap {
	tb.Helper()
	tmp := tb.TempDir()
	s := symlinkTrap{Dir: filepath.Join(tmp, dirName), Victim: filepath.Join(tmp, "victim")}
	target := s.Victim
	if folder {
		target = tmp
	}
	if err := os.WriteFile(s.Victim, []byte("keep"), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Mkdir(s.Dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(s.Dir, name)); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Untouched fails tb when the victim was written or a file appeared beside it.
func (s symlinkTrap) Untouched(tb testing.TB, what string) {
	tb.Helper()
	if b, err := os.ReadFile(s.Victim); err != nil || string(b) != "keep" {
		tb.Errorf("%s: the file outside was written (%q, %v)", what, b, err)
	}
	if left, err := os.ReadDir(filepath.Dir(s.Victim)); err != nil || len(left) != 2 {
		tb.Errorf("%s: beside the directory: %v (%v), want only the victim and the directory", what, left, err)
	}
}
