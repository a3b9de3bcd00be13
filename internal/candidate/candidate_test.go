package candidate

// Real processes (sh, sleep, cat); no engine.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := Command{Cmd: "sleep 30 & echo $! > " + pidFile + "; wait", Timeout: 500 * time.Millisecond}
	start := time.Now()
	_, err := c.run(context.Background(), "")
	var ce *Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "timeout", ce.Kind)
	assert.Less(t, time.Since(start), 3*time.Second)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	// The child is gone (or a zombie of init's for a moment): signal 0 fails or
	// its state says so.
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil || strings.Contains(string(st), ") Z") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	assert.True(t, err != nil || strings.Contains(string(st), ") Z"), "the background sleep outlived the timeout: %s", st)
}

func TestExitKeepsABoundedStderr(t *testing.T) {
	c := Command{Cmd: "head -c 100000 /dev/zero | tr '\\0' x >&2; echo END >&2; exit 3", Timeout: 5 * time.Second}
	_, err := c.run(context.Background(), "")
	var ce *Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "exit", ce.Kind)
	assert.Contains(t, ce.Msg, "exit status 3")
	assert.Equal(t, "exit", KindOf(err.Error()))
	assert.Equal(t, "", KindOf("candidate: something else"))
	assert.Less(t, len(ce.Stderr), maxStderr+100)
	assert.True(t, strings.HasSuffix(ce.Stderr, "END"), "the end of stderr is kept")
}

func TestStdinIsTheCaseAndBadDumpsAreRefused(t *testing.T) {
	c := Command{Cmd: "cat", Timeout: 5 * time.Second}
	out, err := c.run(context.Background(), "<p>hi")
	require.NoError(t, err)
	assert.Equal(t, "<p>hi", string(out))
	_, err = c.Dump(context.Background(), `{"engine":"x"}`)
	require.Error(t, err)
	// Refused by the contract's schema, which names what is missing and where.
	assert.Contains(t, err.Error(), "not a dump of the contract")
	assert.Contains(t, err.Error(), "missing properties 'engine_version'")
	assert.Contains(t, err.Error(), "[dump.schema.json#/required]")
	_, err = c.Dump(context.Background(), ``)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no dump on stdout")
}

func TestPinnedEnvironment(t *testing.T) {
	env, err := Pinned()
	require.NoError(t, err)
	fc := lookup(env, "FONTCONFIG_FILE")
	require.NotEmpty(t, fc)
	b, err := os.ReadFile(fc)
	require.NoError(t, err, "the browsers' fontconfig file exists")
	assert.Contains(t, string(b), "Liberation Serif")
	assert.Equal(t, "en_US.UTF-8", lookup(env, "LC_ALL"))
	assert.Equal(t, "en_US.UTF-8", lookup(env, "LANG"))
	assert.Equal(t, "UTC", lookup(env, "TZ"))
	assert.Equal(t, "16", lookup(env, "LAYOUT_ORACLE_FONT_SIZE"))
	assert.Equal(t, "800x600", lookup(env, "LAYOUT_ORACLE_VIEWPORT"))
	c := Command{Cmd: `printf '%s|%s' "$TZ" "$FONTCONFIG_FILE"`, Env: env, Timeout: 5 * time.Second}
	out, err := c.run(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, "UTC|"+fc, string(out))
	assert.Contains(t, Exports([]string{"A=it's"}), `export A='it'\''s'`)
}

// gone waits up to 10 s (a loaded machine) for pid to be gone (or a zombie of another process's) and
// says whether it is.
func gone(pid int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readPID reads the pid a test's shell wrote to file, as this process sees it. The
// shell writes its pid with cut -d" " -f4 /proc/self/stat (cut's parent), not $$:
// a reaper in a PID namespace of its own gives its processes that namespace's
// pids, and /proc, the host's mount, names them by the host's.
func readPID(t *testing.T, file string) int {
	t.Helper()
	var b []byte
	for range 100 { // the child writes it on its own time
		if b, _ = os.ReadFile(file); len(b) > 0 && b[len(b)-1] == '\n' {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err, "pid file %q", b)
	return pid
}

// A child that leaves the process group (setsid) or is double-forked to init
// outlived every run before the reaper: after a run that exits, after a timeout,
// and after End of a command still running. Real processes; Linux only (elsewhere
// a process group is all there is).
func TestSetsidAndDoubleForkedChildrenEndWithTheRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reaper is Linux's")
	}
	dir := t.TempDir()
	// Each leaves a sleep in a session of its own, and the double fork's parent
	// exits at once, so that sleep is an orphan.
	spawn := func(name string) string {
		f := filepath.Join(dir, name)
		return `setsid sh -c 'cut -d" " -f4 /proc/self/stat > ` + f + `; exec sleep 60' & (setsid sh -c 'cut -d" " -f4 /proc/self/stat > ` + f + `2; exec sleep 60' &) ; `
	}
	for _, tc := range []struct {
		name, cmd string
		timeout   time.Duration
		kind      string
	}{
		{"exits", spawn("exits") + "sleep 0.3; echo '{}'", 10 * time.Second, ""},
		{"times-out", spawn("times-out") + "sleep 60", time.Second, "timeout"},
		{"fails", spawn("fails") + "sleep 0.3; exit 3", 10 * time.Second, "exit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Command{Cmd: tc.cmd, Timeout: tc.timeout, WaitDelay: 200 * time.Millisecond}
			start := time.Now()
			out, err := c.run(context.Background(), "")
			if tc.kind == "" {
				require.NoError(t, err)
				assert.Equal(t, "{}\n", string(out))
			} else {
				var ce *Error
				require.True(t, errors.As(err, &ce), "%v", err)
				assert.Equal(t, tc.kind, ce.Kind)
				if tc.kind == "exit" {
					assert.Equal(t, "exit status 3", ce.Msg)
				}
			}
			assert.Less(t, time.Since(start), 15*time.Second, "not the sleep's 60 s")
			for _, f := range []string{tc.name, tc.name + "2"} {
				pid := readPID(t, filepath.Join(dir, f))
				assert.True(t, gone(pid), "%s: the setsid sleep %d outlived the run", f, pid)
			}
		})
	}
}

// End ends a command still running and all it started; Wait says so. Real
// processes.
func TestEndEndsEveryDescendant(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reaper is Linux's")
	}
	f := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", `(setsid sh -c 'cut -d" " -f4 /proc/self/stat > `+f+`; exec sleep 60' &); sleep 60`)
	p, err := start(cmd, time.Second)
	require.NoError(t, err)
	pid := readPID(t, f)
	p.end()
	start := time.Now()
	err = p.wait()
	var ee *exitError
	require.True(t, errors.As(err, &ee), "%v", err)
	assert.Equal(t, "signal: killed", ee.Status)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.True(t, gone(pid), "the setsid sleep %d outlived End", pid)
}

// The reaper is a process of its own, so this process's children keep their exit
// statuses: a subreaper here reaping its adopted orphans with wait4(-1) would take
// them from os/exec. Real processes.
func TestOtherChildrenKeepTheirExitStatus(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			c := Command{Cmd: "(setsid sleep 0.1 &); echo x", Timeout: 10 * time.Second, WaitDelay: 50 * time.Millisecond}
			_, err := c.run(context.Background(), "")
			assert.NoError(t, err)
		})
	}
	for range 20 {
		err := exec.Command("sh", "-c", "exit 7").Run()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "%v", err)
		assert.Equal(t, 7, ee.ExitCode())
	}
	wg.Wait()
}
