package client

// Ending an oracle: Close, Shutdown, Kill, and the end of its stderr an
// *ExitError keeps.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Close ends the oracle as a client does, with EOF on its stdin, and waits for it
// to exit, killing its process group after Options.CloseTimeout: Shutdown with
// that timeout.
func (c *Client) Close() error {
	timeout := c.opts.CloseTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.Shutdown(ctx)
}

// Shutdown ends the oracle with EOF on its stdin and waits for it to exit. A
// request line being written when it is called is given until ctx ends to finish
// (an oracle that stopped reading would block it for ever), then its input is
// closed under it; an oracle still running when ctx ends has its process group
// killed. The error is an *ExitError when it exited other than with status 0,
// and says so when it had to be killed.
func (c *Client) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	cn := c.conn
	c.closed = true
	c.mu.Unlock()
	if w, ok := cn.w.(io.Closer); ok {
		select {
		case cn.wlock <- struct{}{}: // not in the middle of a line
			w.Close()
			<-cn.wlock
		case <-ctx.Done():
			w.Close() // ends the blocked write with an error
		}
	}
	// Wait for the process, not only its stdout: it may close stdout first and then
	// take a while to close its browsers.
	ended := cn.done
	if cn.cmd != nil {
		ended = cn.exited
	}
	select {
	case <-ended:
	case <-ctx.Done():
		if cn.cmd == nil {
			return fmt.Errorf("client: the oracle's output did not end before the shutdown's context ended (%w)", ctx.Err())
		}
		killGroup(cn.cmd)
		<-cn.exited
		<-cn.done
		return fmt.Errorf("client: oracle did not exit before the shutdown's context ended (%w); killed", ctx.Err())
	}
	<-cn.done // the answers it wrote before exiting are read
	if cn.cmd != nil && cn.cmd.ProcessState.ExitCode() != 0 {
		return cn.processExit()
	}
	return nil
}

// Kill ends a spawned oracle's process group at once (SIGKILL) and waits up to
// 5s for it; calls in flight fail. Attached, it only marks the client closed.
func (c *Client) Kill() {
	c.mu.Lock()
	cn := c.conn
	c.closed = true
	c.mu.Unlock()
	if cn.cmd == nil {
		return
	}
	killGroup(cn.cmd)
	select {
	case <-cn.done:
	case <-time.After(5 * time.Second):
	}
}

// stderrTail is how much of a spawned oracle's stderr ExitError keeps.
const stderrTail = 4 << 10

// tailBuffer keeps the last stderrTail bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	cut bool // the start was dropped
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is what is kept, from the first whole line when the start was cut.
func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// lastLine is s's last non-blank line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
