package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// browserUserName is the unprivileged system user the browsers run as when the oracle
// runs as root (scripts/setup.sh creates it). A renderer exploit in a case is then
// code execution as this user, inside the engine's own sandbox, never as root.
const browserUserName = "oracle-browser"

// browserAccount is who the browser processes run as.
type browserAccount struct {
	Name     string
	UID, GID uint32
	Home     string
	// Drop says the oracle is root and starts every browser process as this user:
	// WebKitWebDriver and Xvfb with SysProcAttr.Credential, Chromium and Firefox
	// through a wrapper that Playwright's driver runs as the browser binary.
	Drop bool
	// Problem says why the browsers run as root although the oracle is root (the
	// user is missing): every engine's sandbox is then reported off.
	Problem string
}

// BrowserUser is who this process runs the browsers as, resolved once per process:
// root drops to browserUserName; any other user runs the browsers as itself, which is
// already unprivileged.
var BrowserUser = sync.OnceValue(func() browserAccount {
	if os.Geteuid() != 0 {
		u := browserAccount{UID: uint32(os.Geteuid()), GID: uint32(os.Getegid()), Name: strconv.Itoa(os.Geteuid())}
		if cur, err := user.Current(); err == nil {
			u.Name, u.Home = cur.Username, cur.HomeDir
		}
		return u
	}
	root := browserAccount{Name: "root", Home: os.Getenv("HOME")}
	u, err := user.Lookup(browserUserName)
	if err != nil {
		root.Problem = fmt.Sprintf("the oracle runs as root and user %s does not exist (run `make setup`): the browsers run as root", browserUserName)
		return root
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		root.Problem = fmt.Sprintf("user %s has uid %s gid %s, not an unprivileged user: the browsers run as root", browserUserName, u.Uid, u.Gid)
		return root
	}
	return browserAccount{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir, Drop: true}
})

// credential is what exec.Cmd.SysProcAttr.Credential gets: nil when the oracle runs
// the browsers as itself.
func (u browserAccount) credential() *syscall.Credential {
	if !u.Drop {
		return nil
	}
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}
}

// Root says the browsers run as root, where Chromium refuses to start sandboxed.
func (u browserAccount) Root() bool { return !u.Drop && os.Geteuid() == 0 }

// Env is what a browser process's environment must say about its user: its own home
// (Firefox refuses a $HOME that another user owns) and nothing of root's.
func (u browserAccount) Env() []string {
	if !u.Drop {
		return nil
	}
	return []string{"HOME=" + u.Home, "USER=" + u.Name, "LOGNAME=" + u.Name, "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="}
}

// WrappedBrowserEnv is what a browser started through BrowserWrapper gets added to
// its environment: extra, its user's (Env), and the memory cgroup the wrapper joins
// before it execs the browser (memlimit.go; "": none).
func WrappedBrowserEnv(extra []string, memoryCgroup string) []string {
	env := append(append([]string{}, extra...), BrowserUser().Env()...)
	if memoryCgroup != "" {
		env = append(env, cgroupProcsEnv+"="+memoryCgroup)
	}
	return env
}

// SysProcAttr is the SysProcAttr of a browser-side process the oracle starts itself.
func (u browserAccount) SysProcAttr(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	a.Credential = u.credential()
	return a
}

// OwnedDir creates dir (mode, owned by the oracle, group gid when gid >= 0) or
// checks the one there: it must be a real directory owned by the oracle's user, so
// another local user cannot pre-create a predictable /tmp name and feed the browsers
// its own files.
func OwnedDir(dir string, mode os.FileMode, gid int) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s exists and is not a directory of uid %d: refusing to use it", dir, os.Geteuid())
	}
	if gid >= 0 && int(st.Gid) != gid {
		if err := os.Lchown(dir, -1, gid); err != nil {
			return err
		}
	}
	return os.Chmod(dir, mode)
}

// BrowserWrapper returns an executable that Playwright's driver starts in place of
// exe: it hands the profile directory the driver created (as root) to the browser
// user and execs exe as that user with setpriv, keeping every file descriptor
// (Chromium's --remote-debugging-pipe is fds 3 and 4). With nothing to drop it is exe.
// The browser gets SIGKILL when the driver that started it dies (setpriv's
// --pdeathsig, set after the user change, which would clear it): Playwright starts
// browsers in process groups of their own and kills them from its exit handler, which
// a killed driver never runs, and Firefox, on a port rather than a pipe, would then
// live on with no one to end it (TestKilledDriversLeaveNoBrowserBehind).
func BrowserWrapper(exe string) (string, error) {
	u := BrowserUser()
	if !u.Drop {
		return exe, nil
	}
	setpriv, err := findSetpriv()
	if err != nil {
		return "", err
	}
	ids := fmt.Sprintf("%d:%d", u.UID, u.GID)
	script := `#!/bin/sh
# Written by the layout oracle: runs a browser as ` + u.Name + ` (docs/sandbox.md).
# Playwright's driver made the profile directory as root; the browser must own it.
prev=
for a in "$@"; do
  case "$a" in --user-data-dir=*) chown -R ` + ids + ` -- "${a#--user-data-dir=}" || exit 1 ;; esac
  if [ "$prev" = --profile ] || [ "$prev" = -profile ]; then chown -R ` + ids + ` -- "$a" || exit 1; fi
  prev=$a
done
# The engine's memory cgroup (memlimit.go), joined before the browser forks anything;
# if that fails the oracle moves the processes after the launch, and logs it if it can't.
[ -z "$` + cgroupProcsEnv + `" ] || { echo $$ > "$` + cgroupProcsEnv + `"; } 2>/dev/null || :
exec ` + shellQuote(setpriv) + ` --reuid=` + strconv.Itoa(int(u.UID)) + ` --regid=` + strconv.Itoa(int(u.GID)) +
		` --clear-groups --pdeathsig KILL -- ` + shellQuote(exe) + ` "$@"
`
	sum := sha256.Sum256([]byte(script))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("layout-oracle-bin-%d-%s", os.Geteuid(), hex.EncodeToString(sum[:6])))
	if err := OwnedDir(dir, 0o700, -1); err != nil {
		return "", fmt.Errorf("browser wrapper: %w", err)
	}
	path := filepath.Join(dir, "run-as-"+u.Name)
	if b, err := os.ReadFile(path); err == nil && string(b) == script {
		return path, nil
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.WriteString(script)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o700)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("browser wrapper: %w", err)
	}
	return path, nil
}

func findSetpriv() (string, error) {
	for _, p := range []string{"/usr/bin/setpriv", "/bin/setpriv"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("setpriv (util-linux) not found: cannot start the browsers as " + browserUserName)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
