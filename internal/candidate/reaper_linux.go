//go:build linux

package candidate

// The reaper. A process group is not enough to end what a candidate starts: a
// child that calls setsid leaves the group, and once its parent exits it is
// re-parented to init, out of reach. A child subreaper (PR_SET_CHILD_SUBREAPER)
// adopts every orphan among its descendants instead, so it can end them all. It
// must not be this process: a subreaper reaps its adopted orphans with wait4(-1),
// which would steal the exit status of the children os/exec waits for (the
// oracle, other candidate runs, and the orphans of the oracle's browsers would be
// adopted too). So each command runs under a reaper of its own: this binary again
// (/proc/self/exe, whatever its name, so a rebuild does not matter), made a reaper
// by this package's init when started with reaperEnv set. Its only business is
// that one command: it starts it, reaps everything, and when the command has
// exited and its grace passed, or our end of the lifeline pipe is closed (End,
// or this process died), kills every process left until none is, then writes the
// command's exit status on the status pipe and exits.
//
// The command runs as this process's user, so it could kill its reaper and leave
// its orphans to init. Where this process may (root with CAP_SYS_ADMIN), the reaper
// is therefore the first process of a PID namespace of its own: the kernel lets no
// process inside send it SIGKILL or any signal it has no handler for, and ends
// every process inside when it ends, however it ends. Each process is then a pid of
// the namespace, and the reaper ends them all with kill(-1).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/layout-oracle/oracle/internal/proctree"
)

const (
	reaperEnv  = "LAYOUT_ORACLE_CANDIDATE_REAPER"
	reaperArg0 = "layout-oracle-candidate-reaper"
	// The reaper's descriptors: where it writes the command's exit status, and the
	// pipe whose end (EOF) tells it to end everything.
	statusFD   = 3
	lifelineFD = 4
	// reaperKill is how long, past its grace, a reaper may take to kill and reap
	// what is left (a loaded machine is slow at it) before it is killed itself.
	reaperKill = 30 * time.Second
)

func init() {
	if os.Getenv(reaperEnv) == "" || len(os.Args) < 4 || os.Args[0] != reaperArg0 {
		return
	}
	os.Exit(reap(os.Args[1], os.Args[2], os.Args[3:]))
}

// procSys is the Linux side of a Proc: the pipes to its reaper.
type procSys struct {
	status  *os.File // read end: the reaper's report
	life    *os.File // write end: closed by end
	endOnce sync.Once
}

func (s *procSys) start(cmd *exec.Cmd, grace time.Duration) error {
	if cmd.WaitDelay == 0 {
		// The reaper exits once every process is gone, and only then do the
		// pipes close; it is killed (its orphans lost) only if it hangs.
		cmd.WaitDelay = grace + reaperKill
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return err
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clone(env), reaperEnv+"=1")
	cmd.Args = append([]string{reaperArg0, grace.String(), cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	cmd.ExtraFiles = []*os.File{statusW, lifeR} // statusFD, lifelineFD
	// Its own group too, so that nothing it runs takes this process's terminal
	// signals (^C reaches triage, which ends its runs itself).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if pidNamespaces() {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	}
	// Set before Start: a context that ends at once has cmd.Cancel call end from
	// Start's own goroutine, which then reads them.
	s.status, s.life = statusR, lifeW
	err = cmd.Start()
	statusW.Close()
	lifeR.Close()
	if err != nil {
		statusR.Close()
		s.end(cmd)
		return err
	}
	return nil
}

func (s *procSys) end(*exec.Cmd) {
	s.endOnce.Do(func() {
		if s.life != nil {
			s.life.Close()
		}
	})
}

func (s *procSys) wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	s.end(cmd)
	b, _ := io.ReadAll(io.LimitReader(s.status, 4<<10))
	s.status.Close()
	st := strings.TrimSpace(string(b))
	switch {
	case st == "": // the reaper was killed, or failed before it could say
		if err == nil {
			err = fmt.Errorf("the reaper exited without the command's status")
		}
		return fmt.Errorf("candidate reaper: %w", err)
	case strings.HasPrefix(st, "start: "):
		return fmt.Errorf("%s", strings.TrimPrefix(st, "start: "))
	case st == "exit status 0":
		if errors.Is(err, exec.ErrWaitDelay) {
			return err
		}
		return nil
	}
	return &exitError{Status: st}
}

// reap is the reaper's main: it runs path with argv and returns its exit code.
func reap(graceText, path string, argv []string) int {
	status := os.NewFile(statusFD, "status")
	life := os.NewFile(lifelineFD, "lifeline")
	syscall.CloseOnExec(statusFD) // the command inherits neither
	syscall.CloseOnExec(lifelineFD)
	say := func(s string) { fmt.Fprintln(status, s) }
	grace, err := time.ParseDuration(graceText)
	if err != nil {
		say("start: candidate reaper: " + err.Error())
		return 1
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		say("start: candidate reaper: PR_SET_CHILD_SUBREAPER: " + err.Error())
		return 1
	}
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, reaperEnv+"=") })
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		say("start: " + err.Error())
		return 1
	}
	mainPID := proc.Pid
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, life) // returns at EOF: End, or the caller died
		close(ended)
	}()

	var mainStatus *syscall.WaitStatus
	// reapReady reaps every child that has exited; false once none is left.
	reapReady := func() bool {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			switch {
			case err == syscall.EINTR:
				continue
			case err != nil: // ECHILD: no child left
				return false
			case pid <= 0:
				return true
			case pid == mainPID:
				mainStatus = &ws
			}
		}
	}
	tick := time.NewTicker(50 * time.Millisecond) // in case a SIGCHLD is missed
	defer tick.Stop()
	var graceOver <-chan time.Time
	for waiting := true; waiting; {
		left := reapReady()
		if !left {
			break
		}
		if mainStatus != nil && graceOver == nil {
			graceOver = time.After(grace)
		}
		select {
		case <-sigchld:
		case <-tick.C:
		case <-graceOver:
			waiting = false
		case <-ended:
			waiting = false
		}
	}
	// Kill every child until none is left: a killed child's own children are
	// re-parented to us, and killed in the next round. A pid is ours until we reap
	// it, so none of them can be another process's. The first process of a PID
	// namespace reaches every other one in it with kill(-1), and only those.
	inNamespace := os.Getpid() == 1
	for reapReady() {
		if inNamespace {
			_ = syscall.Kill(-1, syscall.SIGKILL)
		} else {
			for _, pid := range children() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		select {
		case <-sigchld:
		case <-time.After(20 * time.Millisecond):
		}
	}
	if mainStatus == nil {
		say("start: the command left no exit status")
		return 1
	}
	say(waitText(*mainStatus))
	switch {
	case mainStatus.Exited():
		return mainStatus.ExitStatus()
	case mainStatus.Signaled():
		return 128 + int(mainStatus.Signal())
	}
	return 1
}

// pidNamespaces says whether this process may start a reaper in a PID namespace of
// its own: it tries once, with a process that exits at once.
var pidNamespaces = sync.OnceValue(func() bool {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	return cmd.Run() == nil
})

// waitText is ws as os.ProcessState.String says it.
func waitText(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		s := "signal: " + ws.Signal().String()
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s
	}
	return fmt.Sprintf("wait status %#x", uint32(ws))
}

// children lists the processes whose parent is this one: from each thread's
// /proc children list, else (a kernel without it) from every process's stat.
func children() []int {
	var out []int
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	read := 0
	for _, f := range lists {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		read++
		for _, w := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(w); err == nil {
				out = append(out, pid)
			}
		}
	}
	if read > 0 {
		return out
	}
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err == nil && proctree.ParsePPid(b) == self {
			out = append(out, pid)
		}
	}
	return out
}
