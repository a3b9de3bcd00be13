package main

// A test client for the real oracle binary: it builds cmd/oracle once, runs it as a
// child process with real browsers, and matches response lines to requests by id.

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
)

var oracleBin string // built once in TestMain

func TestMain(m *testing.M) {
	// Every oracle these tests start answers live unless a test names its own store:
	// no test may depend on (or fill) the user's cache.
	os.Setenv("ORACLE_STORE", "off")
	flag.Parse()
	if testing.Short() || os.Getenv("ORACLE_NOBODY_PROBE") != "" {
		// Under -short every test here drives the oracle binary and skips; sandbox_test.go's
		// probe runs as nobody and needs no oracle: no build either way.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "oracle-bin")
	if err != nil {
		panic(err)
	}
	oracleBin = filepath.Join(dir, "oracle")
	args := []string{"build", "-o", oracleBin}
	if raceBuild {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build oracle:", err)
		os.Exit(1)
	}
	code := m.Run()
	shared.close()
	groundTruth.close()
	webContent.close()
	if shared.c != nil && strings.Contains(shared.c.stderr.String(), "DATA RACE") {
		fmt.Fprintln(os.Stderr, "the shared oracle reported a data race:\n"+shared.c.stderr.String())
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

type client struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testutil.LockedBuffer // the oracle's stderr, still being written while a test reads it
	mu     sync.Mutex
	wait   map[string]chan map[string]any // by id
	lines  chan string                    // every stdout line, raw, for purity checks
	done   chan error
	exited chan struct{} // closed when the process has exited (done still holds its error)
	nextID int
}

// startOracle runs the oracle binary with args and waits until every engine serves
// or has failed (ping shows none "starting"), as a client that needs every engine
// would; it fails the test if the process prints anything on stdout that is not a
// JSON object.
func startOracle(t testing.TB, args ...string) *client {
	t.Helper()
	c := startOracleNow(t, args...)
	c.waitStarted(t)
	return c
}

// waitStarted pings until no engine or endpoint is "starting", or the process exits.
func (c *client) waitStarted(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for n := 0; time.Now().Before(deadline); n++ {
		id := "wait-started-" + strconv.Itoa(n)
		ch := make(chan map[string]any, 1)
		c.mu.Lock()
		c.wait[idKey(id)] = ch
		c.mu.Unlock()
		if _, err := io.WriteString(c.stdin, `{"op":"ping","id":"`+id+`"}`+"\n"); err != nil {
			return // exited before reading stdin: the test sees why
		}
		select {
		case m := <-ch:
			if !anyStarting(m) {
				return
			}
		case <-c.exited:
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("an engine was still starting after 3 minutes; stderr:\n%s", c.stderr.String())
}

// anyStarting says whether a ping answer has an engine, or a remote endpoint (which
// joins its engine's pool once up), in state "starting".
func anyStarting(ping map[string]any) bool {
	states, _ := ping["states"].(map[string]any)
	for _, st := range states {
		if m, _ := st.(map[string]any); m["state"] == "starting" {
			return true
		}
	}
	eps, _ := ping["endpoints"].([]any)
	for _, ep := range eps {
		if m, _ := ep.(map[string]any); m["state"] == "starting" {
			return true
		}
	}
	return false
}

// startOracleNow runs the oracle binary with args and returns at once, without
// waiting for any engine.
func startOracleNow(t testing.TB, args ...string) *client {
	t.Helper()
	return startOracleBin(t, oracleBin, args...)
}

// startOracleBin is startOracleNow with another oracle binary (race_test.go's).
func startOracleBin(t testing.TB, bin string, args ...string) *client {
	t.Helper()
	testutil.NeedsBrowsers(t)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testutil.LockedBuffer{}
	c := &client{cmd: cmd, stdin: stdin, stderr: stderr, wait: map[string]chan map[string]any{},
		lines: make(chan string, 10000), done: make(chan error, 1), exited: make(chan struct{})}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a -race build of the oracle reports races on its stderr
		if out := stderr.String(); strings.Contains(out, "DATA RACE") {
			t.Errorf("the oracle reported a data race:\n%s", out)
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 256<<20)
		for sc.Scan() {
			line := sc.Text()
			select {
			case c.lines <- line:
			default:
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				panic(fmt.Sprintf("oracle wrote a non-JSON line on stdout: %q", line))
			}
			c.mu.Lock()
			key := idKey(m["id"])
			ch := c.wait[key]
			delete(c.wait, key)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
		err := cmd.Wait()
		close(c.exited)
		c.done <- err
	}()
	return c
}

func idKey(id any) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// sendRaw writes one raw line and waits for the response carrying id (as JSON text,
// e.g. `"a"` or `null`).
func (c *client) sendRaw(t testing.TB, line, id string) map[string]any {
	t.Helper()
	ch := make(chan map[string]any, 1)
	c.mu.Lock()
	c.wait[id] = ch
	c.mu.Unlock()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatalf("write request: %v", err)
	}
	select {
	case m := <-ch:
		return m
	case err := <-c.done:
		t.Fatalf("oracle exited (%v) before answering %s; stderr:\n%s", err, id, c.stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("no answer to %s in 2 minutes", id)
	}
	return nil
}

// send sends a request object, giving it a fresh id unless it has one.
func (c *client) send(t testing.TB, req map[string]any) map[string]any {
	t.Helper()
	if _, ok := req["id"]; !ok {
		c.mu.Lock()
		c.nextID++
		req["id"] = "req-" + strconv.Itoa(c.nextID)
		c.mu.Unlock()
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return c.sendRaw(t, string(b), idKey(req["id"]))
}

// exitCode closes stdin (EOF) unless already closed and waits for the process.
func (c *client) exitCode(t testing.TB, within time.Duration) int {
	t.Helper()
	c.stdin.Close()
	select {
	case err := <-c.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("oracle still running %s after EOF", within)
	}
	return -1
}

func (c *client) close() {
	if c == nil {
		return
	}
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// descendants lists every live process below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
		rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(rest) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(rest[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(rest) > 0 && rest[0] != "Z"
}
