// The Playwright driver process (playwright-go's node runner) that the Playwright
// engines share: install, start, liveness, and the browsers it launched.

package playwright

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"
)

// Driver is the one Playwright driver process the oracle's Playwright
// engines share.
type Driver struct {
	pw *playwright.Playwright
	// gone is set once a call failed because the driver's connection broke (the
	// process may linger a moment after its pipe closed).
	gone atomic.Bool
	// launchMu makes a launch's new child processes its browser's alone: two
	// launches at once on one driver would each count the other's browser as theirs.
	launchMu sync.Mutex
}

// Start starts the driver installed by installDriver. Its output goes to
// stderr: playwright-go's default is stdout, which belongs to the protocol.
func Start(log zerolog.Logger) (*Driver, error) {
	pw, err := playwright.Run(driverOptions(log))
	if err != nil {
		return nil, fmt.Errorf("start playwright driver: %w (run `make setup`)", err)
	}
	return &Driver{pw: pw}, nil
}

// installDriver fetches the playwright-core driver matching go.mod's playwright-go,
// without browsers (none can be downloaded on a closed network). playwright-go
// downloads its own Node.js unless PLAYWRIGHT_NODEJS_PATH names one (it reads that
// variable only from the environment; the caller sets it, this package never does).
// The driver directory then gets a "node" link to that Node.js (or the machine's
// node), which is where playwright-go looks when the variable is unset: the driver
// runs on it later without anything set in the environment.
func installDriver(log zerolog.Logger) error {
	opts := driverOptions(log)
	opts.SkipInstallBrowsers = true
	if err := playwright.Install(opts); err != nil { // fills in opts.DriverDirectory
		return err
	}
	link := filepath.Join(opts.DriverDirectory, "node")
	if _, err := os.Stat(link); err == nil {
		return nil // playwright-go's own download, or a link made earlier
	}
	node := os.Getenv("PLAYWRIGHT_NODEJS_PATH")
	if node == "" {
		var err error
		if node, err = exec.LookPath("node"); err != nil {
			return fmt.Errorf("no node to run the driver on: %w", err)
		}
	}
	os.Remove(link) // a dangling link
	if err := os.Symlink(node, link); err != nil {
		return fmt.Errorf("link the driver's node: %w", err)
	}
	log.Info().Str("node", node).Str("link", link).Msg("the Playwright driver runs on this node")
	return nil
}

// driverOptions sends the driver's output to stderr. The driver runs on
// PLAYWRIGHT_NODEJS_PATH when the caller set it, else on the driver directory's
// node, which installDriver links to the machine's: the oracle's environment is
// never changed.
//
// playwright-go keeps its logger in a package variable that every Run with a Logger
// writes, while drivers already running read it: with one driver per page started
// in parallel, that raced (go test -race, cmd/probe). It is set once, before any
// Run, and no Run passes a Logger after that.
func driverOptions(log zerolog.Logger) *playwright.RunOptions {
	setDriverLogger.Do(func() {
		playwright.NewDriver(&playwright.RunOptions{Stdout: os.Stderr, Stderr: os.Stderr, Verbose: false,
			Logger: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	})
	return &playwright.RunOptions{
		Stdout:  os.Stderr,
		Stderr:  os.Stderr,
		Verbose: false,
	}
}

var setDriverLogger sync.Once

// Stop ends the driver process; call after closing its engines.
func (d *Driver) Stop() error { return d.pw.Stop() }

// alive says whether the driver process still runs and its connection holds: a
// killed driver (kill -9 of node ... run-driver) fails every later call on its
// pages with "could not read protocol padding: EOF", and nothing in playwright-go
// reports it (the browser still says it is connected).
func (d *Driver) alive() bool {
	if d.gone.Load() {
		return false
	}
	pid := d.pw.Pid()
	if pid == 0 {
		return true // not a pipe transport: only errors tell
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // exited and reaped
	}
	// pid (comm) state ppid ...: a zombie has exited; another parent is a reused pid.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 1 && fields[0] != "Z" && fields[0] != "X" && fields[1] == strconv.Itoa(os.Getpid())
}

// driverGone says whether err is playwright-go's report of a broken driver
// connection rather than of a browser or page. By text: playwright-go makes these
// with fmt.Errorf and errors.New, and ErrTargetClosed, which wraps some, also
// stands for a closed or crashed page.
func driverGone(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	for _, m := range []string{"could not read protocol", "transport closed", "connection closed", "could not send message"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// BundledPath is where Playwright's own build of engine would be, and whether it is
// installed (`playwright install` on a machine with internet).
func (d *Driver) BundledPath(engine string) (string, bool) {
	bt := d.browserType(engine)
	if bt == nil {
		return "", false
	}
	p := bt.ExecutablePath()
	if p == "" {
		return "", false
	}
	_, err := os.Stat(p)
	return p, err == nil
}

// NoBundledBuilds says whether no bundled build can be installed here, without a
// driver: the directory Playwright installs its builds in does not exist. dir is that
// directory ($XDG_CACHE_HOME or ~/.cache, then ms-playwright, as Playwright's
// registry names it on Linux), browser.BundledAbsent's path: while it does not exist,
// no bundled build does either. With PLAYWRIGHT_BROWSERS_PATH set (a directory of its
// own, or "0": inside the driver's package), or off Linux, only the driver knows
// (BundledPath), and none is false.
func NoBundledBuilds() (dir string, none bool) {
	if runtime.GOOS != "linux" || os.Getenv("PLAYWRIGHT_BROWSERS_PATH") != "" {
		return "", false
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		cache = filepath.Join(home, ".cache")
	}
	dir = filepath.Join(cache, "ms-playwright")
	_, err := os.Stat(dir)
	return dir, errors.Is(err, fs.ErrNotExist)
}

func (d *Driver) browserType(engine string) playwright.BrowserType {
	switch engine {
	case browser.Chromium:
		return d.pw.Chromium
	case browser.Firefox:
		return d.pw.Firefox
	case browser.WebKit:
		return d.pw.WebKit
	}
	return nil
}

// killPIDs kills each browser main process and its process group.
func killPIDs(pids []int) {
	for _, pid := range pids {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// children lists the driver's child processes: the browsers it launched.
func (d *Driver) children() map[int]bool {
	out := map[int]bool{}
	driver := d.pw.Pid()
	if driver == 0 {
		return out
	}
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err == nil && proctree.ParsePPid(b) == driver {
			out[pid] = true
		}
	}
	return out
}

func newPIDs(before, after map[int]bool) []int {
	var out []int
	for pid := range after {
		if !before[pid] {
			out = append(out, pid)
		}
	}
	return out
}
