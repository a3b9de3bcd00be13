package report

// The screenshots a case page shows: decoded from a dump, or read from the
// screenshot directory (SetArtifacts) under the limits a hostile dump needs.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/answerbound"
)

// screenshot puts the dump's screenshot under shots/ and returns its path relative
// to a case page, or "" when the dump has none.
func (w *Writer) screenshot(n int, engine string, d *dump.Dump) (string, error) {
	var png []byte
	switch {
	case d.Screenshot != "":
		if n := len(d.Screenshot); n > base64.StdEncoding.EncodedLen(answerbound.MaxScreenshot) {
			return "", fmt.Errorf("the base64 screenshot is %d bytes, over the %d of a %d-byte PNG", n, base64.StdEncoding.EncodedLen(answerbound.MaxScreenshot), answerbound.MaxScreenshot)
		}
		b, err := base64.StdEncoding.DecodeString(d.Screenshot)
		if err != nil {
			return "", fmt.Errorf("base64: %v", err)
		}
		png = b
	case d.ScreenshotFile != "":
		b, err := w.readArtifact(d.ScreenshotFile)
		if err != nil {
			return "", err
		}
		png = b
	default:
		return "", nil
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		return "", errors.New("not a PNG")
	}
	name := fmt.Sprintf("%06d-%s.png", n, unsafeName.ReplaceAllString(engine, "_"))
	if err := w.writeFile("shots/"+name, png); err != nil {
		return "", err
	}
	return "../shots/" + name, nil
}

// unsafeName is what an engine's name (any JSON key, in a hostile answers file)
// cannot keep in a file name.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// readArtifact reads a screenshot_file: only under the screenshot directory
// (SetArtifacts), only a regular file, at most answerbound.MaxScreenshot bytes. A
// dump can name any path; these keep a report from copying in a file from elsewhere
// on disk, reading /dev/zero until memory runs out, or blocking on a FIFO.
func (w *Writer) readArtifact(file string) ([]byte, error) {
	if w.shots == nil {
		return nil, fmt.Errorf("screenshot_file %q not read: no screenshot directory was given (compare --screenshot-dir DIR, the oracle's --screenshot-dir)", file)
	}
	rel := file
	if filepath.IsAbs(file) {
		r, err := filepath.Rel(w.shotDir, file)
		if err != nil {
			return nil, fmt.Errorf("screenshot_file %q not read: %v", file, err)
		}
		rel = r
	}
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("screenshot_file %q not read: it is outside the screenshot directory %s", file, w.shotDir)
	}
	refuse := func(fi fs.FileInfo) error {
		switch {
		case !fi.Mode().IsRegular():
			return fmt.Errorf("screenshot_file %q not read: not a regular file (%v)", file, fi.Mode().Type())
		case fi.Size() > answerbound.MaxScreenshot:
			return fmt.Errorf("screenshot_file %q not read: %d bytes, over the %d a screenshot may have", file, fi.Size(), answerbound.MaxScreenshot)
		}
		return nil
	}
	fi, err := w.shots.Stat(rel) // a symlink is followed only within the directory
	if err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	if err := refuse(fi); err != nil {
		return nil, err
	}
	// Non-blocking, and checked again once open: the name may have changed since.
	f, err := w.shots.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	if err := refuse(fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, answerbound.MaxScreenshot+1))
	if err != nil {
		return nil, fmt.Errorf("screenshot_file %q not read: %w", file, err)
	}
	if len(b) > answerbound.MaxScreenshot {
		return nil, fmt.Errorf("screenshot_file %q not read: over the %d bytes a screenshot may have", file, answerbound.MaxScreenshot)
	}
	return b, nil
}
