// Package testutil is what the tests against the real browsers share: one way to
// honour -short. `make unit` runs every package with -short, so a browser test
// that does not call NeedsBrowsers shows up there as a slow or failing test.
package testutil

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"github.com/rs/zerolog"
)

// skipMessage is the one message every browser test skips with under -short.
const skipMessage = "drives the real browsers; -short runs the pure tests only"

// NeedsBrowsers skips tb under -short: tb drives the real browsers (or an oracle
// that does). Call it first, before anything is launched.
func NeedsBrowsers(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip(skipMessage)
	}
}

// BrowserDir is a temporary directory the browsers can read and execute from: they
// run as the unprivileged oracle-browser (docs/sandbox.md), and t.TempDir's
// directories are the test user's alone (0700). For wrapper scripts given as
// --chromium-path and for files a browser opens. Removed when tb ends.
func BrowserDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "oracle-test-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// Logger is the tests' log: warnings only, or everything with ORACLE_TEST_LOG set.
func Logger(tb testing.TB) zerolog.Logger {
	if os.Getenv("ORACLE_TEST_LOG") != "" {
		return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	}
	return zerolog.New(os.Stderr).Level(zerolog.WarnLevel)
}

// LockedBuffer is a log or stderr sink that goroutines (a browser's, an oracle
// process's pipe) write to while a test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// NotUnderRace skips tb when the tests run with -race, for a test whose path crosses
// a data race inside a dependency that the oracle cannot change; why names it.
// `make test` runs such tests again without -race (its norace step), so they are
// skipped by the race run only, never left out.
func NotUnderRace(tb testing.TB, why string) {
	tb.Helper()
	if race {
		tb.Skip("a race inside a dependency, run by make test's norace step: " + why)
	}
}
