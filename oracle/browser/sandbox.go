package browser

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// browserUserName is the unprivileged system user the browsers run as when the oracle
// runs as root (scripts/setup.sh creates it). A renderer exploit in a case is then
// code execution as this user, inside the engine's own sandbox, never as root.
const browserUserName = "oracle-browser"

// runAs is who the browser processes run as.
type runAs struct {
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

// browserUser is resolved once per process: root drops to browserUserName; any
// other user runs the browsers as itself, which is already unprivileged.
var browserUser = sync.OnceValue(func() runAs {
	if os.Geteuid() != 0 {
		u := runAs{UID: uint32(os.Geteuid()), GID: uint32(os.Getegid()), Name: strconv.Itoa(os.Geteuid())}
		if cur, err := user.Current(); err == nil {
			u.Name, u.Home = cur.Username, cur.HomeDir
		}
		return u
	}
	root := runAs{Name: "root", Home: os.Getenv("HOME")}
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
	return runAs{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir, Drop: true}
})

// CurrentBrowserUser is who this process runs the browsers as.
func CurrentBrowserUser() runAs { return browserUser() }

// credential is what exec.Cmd.SysProcAttr.Credential gets: nil when the oracle runs
// the browsers as itself.
func (u runAs) credential() *syscall.Credential {
	if !u.Drop {
		return nil
	}
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}
}

// root says the browsers run as root, where Chromium refuses to start sandboxed.
func (u runAs) root() bool { return !u.Drop && os.Geteuid() == 0 }

// env is what a browser process's environment must say about its user: its own home
// (Firefox refuses a $HOME that another user owns) and nothing of root's.
func (u runAs) env() []string {
	if !u.Drop {
		return nil
	}
	return []string{"HOME=" + u.Home, "USER=" + u.Name, "LOGNAME=" + u.Name, "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="}
}

// wrappedBrowserEnv is what a browser started through browserWrapper gets added to
// its environment: extra, its user's (env), and the memory cgroup the wrapper joins
// before it execs the browser (memlimit.go; "": none).
func wrappedBrowserEnv(extra []string, memoryCgroup string) []string {
	env := append(append([]string{}, extra...), browserUser().env()...)
	if memoryCgroup != "" {
		env = append(env, cgroupProcsEnv+"="+memoryCgroup)
	}
	return env
}

// sysProcAttr is the SysProcAttr of a browser-side process the oracle starts itself.
func (u runAs) sysProcAttr(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	a.Credential = u.credential()
	return a
}

// ownedDir creates dir (mode, owned by the oracle, group gid when gid >= 0) or
// checks the one there: it must be a real directory owned by the oracle's user, so
// another local user cannot pre-create a predictable /tmp name and feed the browsers
// its own files.
func ownedDir(dir string, mode os.FileMode, gid int) error {
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

// browserWrapper returns an executable that Playwright's driver starts in place of
// exe: it hands the profile directory the driver created (as root) to the browser
// user and execs exe as that user with setpriv, keeping every file descriptor
// (Chromium's --remote-debugging-pipe is fds 3 and 4). With nothing to drop it is exe.
// The browser gets SIGKILL when the driver that started it dies (setpriv's
// --pdeathsig, set after the user change, which would clear it): Playwright starts
// browsers in process groups of their own and kills them from its exit handler, which
// a killed driver never runs, and Firefox, on a port rather than a pipe, would then
// live on with no one to end it (TestKilledDriversLeaveNoBrowserBehind).
func browserWrapper(exe string) (string, error) {
	u := browserUser()
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
	if err := ownedDir(dir, 0o700, -1); err != nil {
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

// SandboxState is one engine's sandbox as /proc shows it, reported by ping and
// logged at startup.
type SandboxState struct {
	// User is who every browser process of the engine runs as.
	User string `json:"user"`
	// On says every content process (Chromium renderer, Firefox web content process,
	// WebKitGTK web process) runs in the engine's sandbox.
	On bool `json:"on"`
	// Sandbox says which sandbox is on, as observed, e.g. "namespace sandbox (own
	// user, pid and network namespaces) + seccomp-bpf".
	Sandbox string `json:"sandbox,omitempty"`
	// Reason says why it is off (or could not be seen).
	Reason string `json:"reason,omitempty"`

	transient bool // off for a reason a moment may change (a process just starting)
}

// SandboxReporter is implemented by engines whose processes the oracle can inspect.
type SandboxReporter interface{ Sandbox() SandboxState }

// procInfo is what /proc says of one process.
type procInfo struct {
	pid, ppid       int
	uid, euid       int
	seccomp         int // 0 none, 1 strict, 2 filter
	nnp             bool
	userNS, pidNS   string
	netNS, cmdline0 string
	args            []string
}

func readProc(pid int) (procInfo, bool) {
	p := procInfo{pid: pid}
	dir := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return p, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		switch k {
		case "PPid":
			if len(f) > 0 {
				p.ppid, _ = strconv.Atoi(f[0])
			}
		case "Uid":
			if len(f) > 1 {
				p.uid, _ = strconv.Atoi(f[0])
				p.euid, _ = strconv.Atoi(f[1])
			}
		case "Seccomp":
			if len(f) > 0 {
				p.seccomp, _ = strconv.Atoi(f[0])
			}
		case "NoNewPrivs":
			p.nnp = len(f) > 0 && f[0] == "1"
		}
	}
	if b, err := os.ReadFile(dir + "/cmdline"); err == nil {
		// Chromium and Firefox rewrite their process title into one space-separated
		// string: split on both.
		p.args = strings.Fields(strings.ReplaceAll(string(b), "\x00", " "))
		if len(p.args) > 0 {
			p.cmdline0 = filepath.Base(p.args[0])
		}
	}
	p.userNS, _ = os.Readlink(dir + "/ns/user")
	p.pidNS, _ = os.Readlink(dir + "/ns/pid")
	p.netNS, _ = os.Readlink(dir + "/ns/net")
	return p, true
}

// processTree is every live process under roots (roots included), from /proc.
func processTree(roots []int) []procInfo {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	infos := map[int]procInfo{}
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		p, ok := readProc(pid)
		if !ok {
			continue
		}
		infos[pid] = p
		children[p.ppid] = append(children[p.ppid], pid)
	}
	var out []procInfo
	seen := map[int]bool{}
	queue := append([]int{}, roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if p, ok := infos[pid]; ok {
			out = append(out, p)
			queue = append(queue, children[pid]...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out
}

func (p procInfo) hasArg(prefix string) bool {
	for _, a := range p.args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// contentProcess says whether p runs web content for engine: the processes the
// engine's sandbox exists for.
func contentProcess(engine string, p procInfo) bool {
	k := knowledgeOf(engine)
	return k.contentProcess != nil && k.contentProcess(p)
}

// inspectSandbox reads engine's sandbox from its processes under roots (the browser's
// main process, or WebKitWebDriver): every process must run as the browser user, no
// command line may say --no-sandbox, and every content process must be confined as
// the engine's sandbox confines it:
//   - Chromium renderer: its own user and pid namespace (the namespace sandbox) and
//     a seccomp-bpf filter;
//   - Firefox content process: a seccomp-bpf filter (the content sandbox), reported
//     with the namespaces it got;
//   - WebKitGTK web process: started by bubblewrap, so in its own user, pid and
//     network namespaces, with a seccomp-bpf filter.
//
// A content process sets up its filter a moment after it starts (a new Firefox
// content process was seen unfiltered at first): a state off for that reason alone is
// looked at again for up to 2 s before it is reported.
func inspectSandbox(engine string, roots []int) SandboxState {
	st := inspectSandboxOnce(engine, roots)
	for deadline := time.Now().Add(2 * time.Second); !st.On && st.transient && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		st = inspectSandboxOnce(engine, roots)
	}
	return st
}

func inspectSandboxOnce(engine string, roots []int) SandboxState {
	u := browserUser()
	st := SandboxState{User: u.Name}
	if u.Problem != "" {
		st.Reason = u.Problem
		return st
	}
	procs := processTree(roots)
	if len(procs) == 0 {
		st.Reason = "no browser process to inspect (being relaunched?)"
		return st
	}
	main := procs[0]
	for _, p := range procs {
		if p.pid == roots[0] {
			main = p
		}
	}
	var content []procInfo
	for _, p := range procs {
		if p.uid != int(u.UID) || p.euid != int(u.UID) {
			st.Reason = fmt.Sprintf("process %d (%s) runs as uid %d, not %s (%d)", p.pid, p.cmdline0, p.euid, u.Name, u.UID)
			return st
		}
		if p.hasArg("--no-sandbox") {
			st.Reason = fmt.Sprintf("process %d (%s) was started with --no-sandbox", p.pid, p.cmdline0)
			return st
		}
		if contentProcess(engine, p) {
			content = append(content, p)
		}
	}
	if len(content) == 0 {
		st.transient = true
		st.Reason = "no content process to inspect (being replaced?)"
		return st
	}
	var kind string
	for _, c := range content {
		var why string
		kind, why = knowledgeOf(engine).sandbox(c, main) // engine_*.go
		if why == "" && c.seccomp != 2 {
			why, st.transient = "its content process has no seccomp filter", true
		}
		if why != "" {
			st.Reason = fmt.Sprintf("%s (process %d)", why, c.pid)
			return st
		}
	}
	st.On, st.Sandbox = true, kind
	return st
}

// RequireSandboxes is --require-sandbox's decision: nil when every engine launched
// has its sandbox on, else an error naming each that has not and why.
func RequireSandboxes(states map[string]SandboxState) error {
	var off []string
	for _, name := range AllEngines {
		if st, ok := states[name]; ok && !st.On {
			off = append(off, fmt.Sprintf("%s: %s", name, st.Reason))
		}
	}
	if len(off) == 0 {
		return nil
	}
	return fmt.Errorf("--require-sandbox: no sandbox for %s", strings.Join(off, "; "))
}
