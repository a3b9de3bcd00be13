package oracle

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// DefaultXvfb is Debian's Xvfb (package xvfb).
const DefaultXvfb = "/usr/bin/Xvfb"

// xvfbScreen is the virtual screen: larger than any window the oracle opens, so the
// window manager-less X server never clips the 800x600 viewport.
const xvfbScreen = "1280x1024x24"

// Xvfb is an X display the oracle started and owns. Close ends it.
type Xvfb struct {
	// Display is the DISPLAY value for clients, e.g. ":93".
	Display string

	cmd       *exec.Cmd
	exited    chan struct{} // closed when the process has been reaped
	log       zerolog.Logger
	closeOnce sync.Once
}

// StartXvfb starts `Xvfb -displayfd N -screen 0 1280x1024x24 -nolisten tcp`: Xvfb
// itself picks a free display number, atomically through its lock file, and writes it
// to the pipe once it is ready for clients. Guessing a free number from the socket
// and lock files instead raced when several WebKit pages (or several oracles)
// started at once: two servers reported the same display. Xvfb gets its own process
// group and dies with the oracle (Pdeathsig); the browser, an X client, exits when
// its display goes. The process environment is not touched: callers pass Display to
// their own children.
func StartXvfb(ctx context.Context, path string, log zerolog.Logger) (*Xvfb, error) {
	if path == "" {
		path = DefaultXvfb
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("xvfb: %w (install the xvfb package, or set DISPLAY)", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	defer r.Close()
	out := newTailLog(log.With().Str("proc", "xvfb").Logger())
	cmd := exec.Command(path, "-displayfd", "3", "-screen", "0", xvfbScreen, "-nolisten", "tcp")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	// SIGTERM, not SIGKILL, when the oracle dies: Xvfb then removes its socket and
	// lock file, which SIGKILL would leave behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	w.Close() // the child holds its copy; EOF on r then means Xvfb exited
	x := &Xvfb{cmd: cmd, exited: make(chan struct{}), log: log}
	go func() {
		_ = cmd.Wait()
		close(x.exited)
	}()
	number := make(chan string, 1)
	go func() {
		b, _ := bufio.NewReader(r).ReadString('\n')
		number <- strings.TrimSpace(b)
	}()
	select {
	case n := <-number:
		if _, err := strconv.Atoi(n); err != nil {
			x.Close()
			return nil, fmt.Errorf("xvfb exited before naming its display: %s", out.tail())
		}
		x.Display = ":" + n
		log.Info().Str("display", x.Display).Int("pid", cmd.Process.Pid).Msg("xvfb started")
		return x, nil
	case <-ctx.Done():
		x.Close()
		return nil, fmt.Errorf("xvfb: %w", ctx.Err())
	case <-time.After(15 * time.Second):
		x.Close()
		return nil, fmt.Errorf("xvfb named no display within 15s: %s", out.tail())
	}
}

// exitedEarly reports whether Xvfb has exited without Close.
func (x *Xvfb) exitedEarly() bool {
	select {
	case <-x.exited:
		return true
	default:
		return false
	}
}

// Pid is the Xvfb process id.
func (x *Xvfb) Pid() int { return x.cmd.Process.Pid }

// Close ends Xvfb's process group: SIGTERM first, so it removes its socket and lock
// file, then SIGKILL if it has not exited within two seconds. Safe to call twice.
func (x *Xvfb) Close() error {
	x.closeOnce.Do(func() {
		killGroup(x.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-x.exited:
		case <-time.After(2 * time.Second):
			killGroup(x.cmd.Process.Pid, syscall.SIGKILL)
			<-x.exited
		}
		x.log.Debug().Str("display", x.Display).Msg("xvfb stopped")
	})
	return nil
}

// killGroup signals the process group led by pid (every process started with
// Setpgid, and its descendants that did not leave the group).
func killGroup(pid int, sig syscall.Signal) {
	if pid > 0 {
		_ = syscall.Kill(-pid, sig)
	}
}
