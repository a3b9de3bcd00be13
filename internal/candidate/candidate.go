// Package candidate runs the engine under test: a shell command that reads one
// case's HTML on stdin and writes its dump (dump-format, docs/dump-format.md) as
// JSON on stdout. It is the one way cmd/reduce (--candidate) and cmd/triage run a
// candidate: through Start, so that it and every process it starts (setsid and
// double-forked ones too) are killed when its bound passes, and whatever it left
// running a short while after it exits (a child that keeps stdout open cannot
// hold the read), with a bounded share of its stderr kept for the error.
package candidate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/dump/schema"
	"github.com/layout-oracle/oracle/oracle/answerbound"
)

// maxDump bounds what a candidate may write: the oracle's own bound on one
// engine's dump (answerbound.MaxCandidateDump, docs/untrusted.md).
var maxDump = answerbound.MaxCandidateDump

// maxStderr is how much of a candidate's stderr an error keeps (its start and end).
const maxStderr = 4 << 10

// defaultWaitDelay is how long what the command left running may still run, and
// write, after the command itself exits: what a child of it writes in that time
// is kept, then every process left is killed.
const defaultWaitDelay = 500 * time.Millisecond

// Command is one candidate command.
type Command struct {
	// Cmd is run by sh -c.
	Cmd string
	// Timeout bounds one run, children included; 0: no bound but ctx's.
	Timeout time.Duration
	// Env is added to this process's environment (later entries win), e.g. Pinned().
	Env []string
	// WaitDelay overrides DefaultWaitDelay when > 0.
	WaitDelay time.Duration
}

// Error is a run that produced no dump: the command failed, timed out, wrote too
// much, or wrote something that is not a valid dump.
type Error struct {
	Kind   string // "timeout", "exit", "output", "dump", "start"
	Msg    string
	Stderr string // the bounded share of its stderr
}

// Error is "candidate KIND: MSG[: STDERR]"; KindOf reads the kind back.
func (e *Error) Error() string {
	s := "candidate " + e.Kind + ": " + e.Msg
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	return s
}

// run runs the command on html and returns what it wrote on stdout. It and every
// process it started are ended when the run ends, however it ends (Start).
func (c *Command) run(ctx context.Context, html string) ([]byte, error) {
	timeout := caseTimeout(ctx, c.Timeout)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", c.Cmd)
	cmd.Stdin = strings.NewReader(html)
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	out := &capped{max: maxDump + 1}
	errw := &headTail{max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, errw
	grace := defaultWaitDelay
	if c.WaitDelay > 0 {
		grace = c.WaitDelay
	}
	p, err := start(cmd, grace)
	if err != nil {
		return nil, &Error{Kind: "start", Msg: err.Error()}
	}
	err = p.wait()
	stderr := errw.String()
	switch {
	case err != nil && ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && timeout > 0 {
			return nil, &Error{Kind: "timeout", Msg: fmt.Sprintf("no answer within %v (it and every process it started were killed)", timeout), Stderr: stderr}
		}
		return nil, &Error{Kind: "timeout", Msg: ctx.Err().Error(), Stderr: stderr}
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited 0 and a child still held its output: what was
		// written by then is the answer; the child was killed.
	case err != nil:
		return nil, &Error{Kind: "exit", Msg: err.Error(), Stderr: stderr}
	}
	if out.over {
		return nil, &Error{Kind: "output", Msg: fmt.Sprintf("the dump is over %d bytes", maxDump)}
	}
	return out.buf.Bytes(), nil
}

// KindOf is the kind of an error message Error wrote ("timeout", "exit",
// "output", "dump", "start"), or "" when msg is not one.
func KindOf(msg string) string {
	rest, ok := strings.CutPrefix(msg, "candidate ")
	if !ok {
		return ""
	}
	kind, _, _ := strings.Cut(rest, ": ")
	switch kind {
	case "timeout", "exit", "output", "dump", "start":
		return kind
	}
	return ""
}

// Dump runs the command on html and decodes and validates its dump.
func (c *Command) Dump(ctx context.Context, html string) (*dump.Dump, error) {
	b, err := c.run(ctx, html)
	if err != nil {
		return nil, err
	}
	return Decode(b)
}

// Decode is a candidate's output as a dump, refused with a clear error when it is
// not one: over MaxDump before anything is decoded, then against the contract
// (dump/schema: the schema, then dump.Validate), as compare and compare --validate
// check it, so a dump triage takes is one compare takes. It is checked and decoded
// in one pass (schema.DecodeDump).
func Decode(b []byte) (*dump.Dump, error) {
	if len(b) > maxDump {
		return nil, &Error{Kind: "output", Msg: fmt.Sprintf("the dump is %d bytes, over the %d one engine's dump may have (docs/untrusted.md)", len(b), maxDump)}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, &Error{Kind: "dump", Msg: "no dump on stdout"}
	}
	d, es := schema.DecodeDump(b)
	if err := es.Err(); err != nil {
		return nil, &Error{Kind: "dump", Msg: "not a dump of the contract (docs/dump-format.md): " + err.Error()}
	}
	return d, nil
}

// capped keeps up to max bytes and notes that more came (and swallows it, so the
// writer is never blocked).
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *capped) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room < len(p) {
		w.over = true
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.buf.Write(p)
}

// headTail keeps the first and last max/2 bytes written.
type headTail struct {
	head, tail []byte
	max        int
	dropped    int
}

func (w *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := w.max/2 - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	w.tail = append(w.tail, p...)
	if over := len(w.tail) - w.max/2; over > 0 {
		w.dropped += over
		w.tail = append(w.tail[:0], w.tail[over:]...)
	}
	return n, nil
}

func (w *headTail) String() string {
	s := string(w.head)
	if w.dropped > 0 {
		s += fmt.Sprintf(" [... %d bytes ...] ", w.dropped)
	}
	return strings.TrimSpace(s + string(w.tail))
}
