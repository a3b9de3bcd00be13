package oracle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
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

// StartXvfb starts `Xvfb :N -screen 0 1280x1024x24 -nolisten tcp` on the first display
// number whose socket and lock file are both absent, and waits until its socket exists.
// Xvfb gets its own process group and dies with the oracle (Pdeathsig); the
// browser, an X client, exits when its display goes. The process
// environment is not touched: callers pass Display to their own children.
func StartXvfb(ctx context.Context, path string, log zerolog.Logger) (*Xvfb, error) {
	if path == "" {
		path = DefaultXvfb
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("xvfb: %w (install the xvfb package, or set DISPLAY)", err)
	}
	var lastErr error
	tried := 0
	for n := 90; n < 400 && tried < 8; n++ {
		if displayInUse(n) {
			continue
		}
		tried++
		x, err := startXvfbOn(ctx, path, n, log)
		if err == nil {
			return x, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
		log.Debug().Err(err).Int("display", n).Msg("xvfb did not start on this display; trying the next")
	}
	if lastErr == nil {
		lastErr = errors.New("no free display number in :90..:399")
	}
	return nil, fmt.Errorf("xvfb: %w", lastErr)
}

// displayInUse reports whether display n has a socket or a lock file. A stale lock
// (its server died without cleaning up) still counts: skipping a number is cheaper
// than reasoning about whose it is.
func displayInUse(n int) bool {
	for _, p := range []string{
		"/tmp/.X11-unix/X" + strconv.Itoa(n),
		"/tmp/.X" + strconv.Itoa(n) + "-lock",
	} {
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
			return true
		}
	}
	return false
}

func startXvfbOn(ctx context.Context, path string, n int, log zerolog.Logger) (*Xvfb, error) {
	display := ":" + strconv.Itoa(n)
	out := newTailLog(log.With().Str("proc", "xvfb").Str("display", display).Logger())
	cmd := exec.Command(path, display, "-screen", "0", xvfbScreen, "-nolisten", "tcp")
	cmd.Stdin = nil
	cmd.Stdout = out
	cmd.Stderr = out
	// SIGTERM, not SIGKILL, when the oracle dies: Xvfb then removes its socket and
	// lock file, which SIGKILL would leave behind to block that display number.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	x := &Xvfb{Display: display, cmd: cmd, exited: make(chan struct{}), log: log}
	go func() {
		_ = cmd.Wait()
		close(x.exited)
	}()
	socket := "/tmp/.X11-unix/X" + strconv.Itoa(n)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(socket); err == nil {
			log.Info().Str("display", display).Int("pid", cmd.Process.Pid).Msg("xvfb started")
			return x, nil
		}
		select {
		case <-x.exited:
			return nil, fmt.Errorf("Xvfb %s exited before its socket appeared: %s", display, out.tail())
		case <-ctx.Done():
			x.Close()
			return nil, fmt.Errorf("Xvfb %s: %w", display, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			x.Close()
			return nil, fmt.Errorf("Xvfb %s: socket %s did not appear within 15s: %s", display, socket, out.tail())
		}
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
