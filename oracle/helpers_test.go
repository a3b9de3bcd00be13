package oracle

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"github.com/rs/zerolog"
)

// testLogger is the tests' log: warnings only, or everything with ORACLE_TEST_LOG set.
func testLogger(tb testing.TB) zerolog.Logger {
	if os.Getenv("ORACLE_TEST_LOG") != "" {
		return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	}
	return zerolog.New(os.Stderr).Level(zerolog.WarnLevel)
}

// lockedBuffer is a log sink the browser goroutines may write to concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
