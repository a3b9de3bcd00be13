package host

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/rs/zerolog"
)

// DefaultXvfb is Debian's Xvfb (package xvfb).
const DefaultXvfb = "/usr/bin/Xvfb"

// Every engine's screen (screen.width and height, the device-* media features): the
// oracle's Xvfb's, and larger than any window the oracle opens.
const (
	ScreenWidth  = 1280
	ScreenHeight = 1024
)

// xvfbScreen is the virtual screen, every engine's (ScreenWidth): larger than any
// window the oracle opens, so the window manager-less X server never clips the 800x600
// viewport.
var xvfbScreen = fmt.Sprintf("%dx%dx24", ScreenWidth, ScreenHeight)

// Xvfb is an X display the oracle started and owns. Close ends it.
type Xvfb struct {
	// Display is the DISPLAY value for clients, e.g. ":93".
	Display string
	// Authority is the XAUTHORITY file clients need: the server accepts only
	// clients that present its cookie, so another local user cannot read or drive
	// the browser's window. Readable by the browser user only (and root).
	Authority string

	proc      *Group
	authDir   string // holds Authority; removed by Close
	cookie    []byte // Authority's MIT-MAGIC-COOKIE-1, for the oracle's own X requests (xdialogs.go)
	log       zerolog.Logger
	closeOnce sync.Once
}

// StartXvfb starts `Xvfb -displayfd N -screen 0 1280x1024x24 -nolisten tcp -auth F`
// as the browser user (user.go), F holding a fresh MIT-MAGIC-COOKIE-1: Xvfb
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
	authDir, cookie, err := newXAuthority()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	authority := filepath.Join(authDir, "Xauthority")
	out := NewTailLog(log.With().Str("proc", "xvfb").Logger())
	cmd := exec.Command(path, "-displayfd", "3", "-screen", "0", xvfbScreen, "-nolisten", "tcp", "-auth", authority)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	cmd.Env = WithEnv(os.Environ(), BrowserUser().Env())
	// SIGTERM, not SIGKILL, when the oracle dies: Xvfb then removes its socket and
	// lock file, which SIGKILL would leave behind.
	cmd.SysProcAttr = BrowserUser().SysProcAttr(proctree.WithParentDeath(&syscall.SysProcAttr{Setpgid: true}, syscall.SIGTERM))
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		w.Close()
		os.RemoveAll(authDir)
		return nil, fmt.Errorf("xvfb: %w", err)
	}
	w.Close() // the child holds its copy; EOF on r then means Xvfb exited
	x := &Xvfb{proc: Reap(cmd), log: log, authDir: authDir, Authority: authority, cookie: cookie}
	number := make(chan string, 1)
	go func() {
		b, _ := bufio.NewReader(r).ReadString('\n')
		number <- strings.TrimSpace(b)
	}()
	select {
	case n := <-number:
		if _, err := strconv.Atoi(n); err != nil {
			x.Close()
			return nil, fmt.Errorf("xvfb exited before naming its display: %s", out.Tail())
		}
		x.Display = ":" + n
		// Clients look the cookie up by display number: the file now names it too.
		if err := writeXAuthority(authority, cookie, n); err != nil {
			x.Close()
			return nil, fmt.Errorf("xvfb: %w", err)
		}
		log.Info().Str("display", x.Display).Int("pid", cmd.Process.Pid).Msg("xvfb started")
		return x, nil
	case <-ctx.Done():
		x.Close()
		return nil, fmt.Errorf("xvfb: %w", ctx.Err())
	case <-time.After(15 * time.Second):
		x.Close()
		return nil, fmt.Errorf("xvfb named no display within 15s: %s", out.Tail())
	}
}

// ExitedEarly reports whether Xvfb has exited without Close.
func (x *Xvfb) ExitedEarly() bool { return !x.proc.Alive() }

// Pid is the Xvfb process id.
func (x *Xvfb) Pid() int { return x.proc.PID() }

// Close ends Xvfb's process group: SIGTERM first, so it removes its socket and lock
// file, then SIGKILL if it has not exited within two seconds. Safe to call twice.
func (x *Xvfb) Close() error {
	x.closeOnce.Do(func() {
		if !x.proc.Signal(syscall.SIGTERM, 2*time.Second) {
			killGroup(x.proc.PID(), syscall.SIGKILL)
			<-x.proc.Exited()
		}
		os.RemoveAll(x.authDir)
		x.log.Debug().Str("display", x.Display).Msg("xvfb stopped")
	})
	return nil
}

// newXAuthority makes a private directory for an X cookie (owned by the browser
// user, mode 0700) and writes a fresh cookie for any display number there.
func newXAuthority() (dir string, cookie []byte, err error) {
	cookie = make([]byte, 16)
	if _, err := rand.Read(cookie); err != nil {
		return "", nil, err
	}
	if dir, err = os.MkdirTemp("", "layout-oracle-x-"); err != nil {
		return "", nil, err
	}
	if u := BrowserUser(); u.Drop {
		if err := os.Chown(dir, int(u.UID), int(u.GID)); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
	}
	if err := writeXAuthority(filepath.Join(dir, "Xauthority"), cookie, ""); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, cookie, nil
}

// writeXAuthority writes an Xauthority file (libXau's format) holding cookie as
// MIT-MAGIC-COOKIE-1 for any address (FamilyWild) and display number (every number
// when it is ""), readable by the browser user alone.
func writeXAuthority(path string, cookie []byte, number string) error {
	var b []byte
	field := func(s []byte) {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint16(b, 0xffff) // FamilyWild
	field(nil)
	field([]byte(number))
	field([]byte("MIT-MAGIC-COOKIE-1"))
	field(cookie)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if u := BrowserUser(); u.Drop {
		if err := os.Chown(tmp, int(u.UID), int(u.GID)); err != nil {
			return err
		}
	}
	return os.Rename(tmp, path)
}
