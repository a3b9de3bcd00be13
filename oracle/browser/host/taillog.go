package host

import (
	"bytes"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// TailLog sends a child's output, line by line, to the debug log and keeps the last
// lines for error messages.
type TailLog struct {
	log     zerolog.Logger
	mu      sync.Mutex
	partial []byte
	lines   []string
}

const tailLines = 12

// NewTailLog is a TailLog that logs to log.
func NewTailLog(log zerolog.Logger) *TailLog { return &TailLog{log: log} }

func (t *TailLog) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(t.partial[:i]), "\r")
		t.partial = t.partial[i+1:]
		if line == "" {
			continue
		}
		t.log.Debug().Msg(line)
		t.lines = append(t.lines, line)
		if len(t.lines) > tailLines {
			t.lines = t.lines[len(t.lines)-tailLines:]
		}
	}
	if len(t.partial) > 64<<10 {
		t.partial = t.partial[:0]
	}
	return len(b), nil
}

// Tail is the last lines, joined, for an error message.
func (t *TailLog) Tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(no output)"
	}
	return strings.Join(t.lines, " | ")
}
