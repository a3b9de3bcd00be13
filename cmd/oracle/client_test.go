package main

// The end-to-end tests' oracle: cmd/oracle built once, run as a child process with
// the real browsers, and driven through the public Go client (package client).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	oracleclient "github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle"
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
	shortDeadline.close()
	if shared.c != nil && strings.Contains(shared.c.stderr.String(), "DATA RACE") {
		fmt.Fprintln(os.Stderr, "the shared oracle reported a data race:\n"+shared.c.stderr.String())
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// client is one oracle process under test, driven through the public Go client
// (package client): spawned in its own process group, requests matched to answers
// by id with many in flight. Requests are the tests' own JSON objects sent as lines
// (StartLine), and answers decoded from the line as written (Response.Raw), so what
// a test asserts is the wire's JSON. The tests of the wire itself (raw, malformed or
// cut bytes on stdin, closed stdin or stdout, stdout read line by line) use raw
// pipes instead (protocol_edges_test.go's oracleProc).
type client struct {
	oc     *oracleclient.Client
	exited *oracleclient.ExitError // an oracle that exited before its first answer (oc is nil): exitCode says how
	stderr *testutil.LockedBuffer  // the oracle's stderr, still being written while a test reads it
	mu     sync.Mutex
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
	if c.oc == nil {
		return // exited before its first answer: the test sees why
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for n := 0; ; n++ {
		id := "wait-started-" + strconv.Itoa(n)
		r, err := c.oc.DoLine(ctx, []byte(`{"op":"ping","id":"`+id+`"}`), nil)
		switch {
		case ctx.Err() != nil:
			t.Fatalf("an engine was still starting after 3 minutes; stderr:\n%s", c.stderr.String())
		case err != nil:
			return // exited before answering: the test sees why
		case !anyStarting(decode(t, r.Raw)):
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
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
	return spawnOracle(t, bin, nil, args...)
}

// spawnOracle starts bin with args and env added to its environment.
func spawnOracle(t testing.TB, bin string, env []string, args ...string) *client {
	t.Helper()
	testutil.NeedsBrowsers(t)
	stderr := &testutil.LockedBuffer{}
	oc, err := oracleclient.Spawn(context.Background(), bin, args, oracleclient.Options{
		Stderr: stderr,
		Env:    env,
		// exitCode and close bound the wait themselves.
		CloseTimeout: 10 * time.Minute,
		// Every stdout line must be a JSON object: an answer nobody waits for still is.
		Unmatched: func(line []byte) {
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				panic(fmt.Sprintf("oracle wrote a non-JSON line on stdout: %q", line))
			}
		},
	})
	var exited *oracleclient.ExitError
	if errors.As(err, &exited) { // a usage error, a refusal to start: the test asks how it ended
		return &client{exited: exited, stderr: stderr}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a -race build of the oracle reports races on its stderr
		if out := stderr.String(); strings.Contains(out, "DATA RACE") {
			t.Errorf("the oracle reported a data race:\n%s", out)
		}
	})
	return &client{oc: oc, stderr: stderr}
}

// pid is the oracle's process id.
func (c *client) pid() int { return c.oc.PID() }

func idKey(id any) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// decode is an answer line as the JSON object tests assert on.
func decode(t testing.TB, line []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("oracle wrote a non-JSON line on stdout: %q", line)
	}
	return m
}

// sendRaw writes one raw line and waits for the response carrying id (as JSON text,
// e.g. `"a"` or `null`).
func (c *client) sendRaw(t testing.TB, line, id string) map[string]any {
	t.Helper()
	return decode(t, c.answerLine(t, c.startLine(t, []byte(line), json.RawMessage(id)), 2*time.Minute, id))
}

// send sends a request object, giving it a fresh id unless it has one.
func (c *client) send(t testing.TB, req map[string]any) map[string]any {
	t.Helper()
	return decode(t, c.sendForLine(t, req))
}

// sendForLine is send, returning the answer line as the oracle wrote it.
func (c *client) sendForLine(t testing.TB, req map[string]any) []byte {
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
	return c.answerLine(t, c.startLine(t, b, nil), 2*time.Minute, idKey(req["id"]))
}

// sendAsync writes req (with its id) and returns the call its answer arrives on,
// so a test can have several requests outstanding at once.
func (c *client) sendAsync(t testing.TB, id string, req map[string]any) *oracleclient.Call {
	t.Helper()
	req["id"] = id
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return c.startLine(t, b, nil)
}

// sendNext is sendAsync with a fresh id.
func (c *client) sendNext(t testing.TB, req map[string]any) *oracleclient.Call {
	t.Helper()
	c.mu.Lock()
	c.nextID++
	id := "async-" + strconv.Itoa(c.nextID)
	c.mu.Unlock()
	return c.sendAsync(t, id, req)
}

func (c *client) startLine(t testing.TB, line []byte, id json.RawMessage) *oracleclient.Call {
	t.Helper()
	if c.oc == nil {
		t.Fatalf("the oracle exited before its first answer: %v", c.exited)
	}
	call, err := c.oc.StartLine(context.Background(), line, id, nil)
	if err != nil {
		t.Fatalf("write request: %v; stderr:\n%s", err, c.stderr.String())
	}
	return call
}

// await waits up to within for call's answer.
func (c *client) await(t testing.TB, call *oracleclient.Call, within time.Duration) map[string]any {
	t.Helper()
	return decode(t, c.answerLine(t, call, within, string(call.Request.ID)))
}

// answerLine waits up to within for call's answer line.
func (c *client) answerLine(t testing.TB, call *oracleclient.Call, within time.Duration, what string) []byte {
	t.Helper()
	select {
	case call = <-call.Done:
		if call.Err != nil {
			t.Fatalf("no answer to %s: %v; stderr:\n%s", what, call.Err, c.stderr.String())
		}
		return call.Response.Raw
	case <-time.After(within):
		t.Fatalf("no answer to %s in %s", what, within)
	}
	return nil
}

// exitCode closes stdin (EOF) unless already closed and waits for the process.
func (c *client) exitCode(t testing.TB, within time.Duration) int {
	t.Helper()
	if c.exited != nil {
		return c.exited.Code
	}
	done := make(chan error, 1)
	go func() { done <- c.oc.Close() }()
	select {
	case err := <-done:
		var ee *oracleclient.ExitError
		if errors.As(err, &ee) {
			return ee.Code
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

// close ends the oracle with EOF, and kills its process group after 30s.
func (c *client) close() {
	if c == nil || c.oc == nil {
		return
	}
	done := make(chan error, 1)
	go func() { done <- c.oc.Close() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.oc.Kill()
	}
}

// childrenOf maps each live process's pid to its children's, from /proc.
func childrenOf() map[int][]int {
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
	return children
}

// children lists pid's live child processes.
func children(pid int) []int { return childrenOf()[pid] }

// descendants lists every live process below pid.
func descendants(pid int) []int {
	children := childrenOf()
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

// The client checks ping's protocol version against its own: the two constants
// are one version (the client cannot import the oracle, so each has its own).
func TestClientAndOracleSpeakOneProtocolVersion(t *testing.T) {
	if oracle.ProtocolVersion != oracleclient.ProtocolVersion {
		t.Fatalf("oracle.ProtocolVersion %d, client.ProtocolVersion %d", oracle.ProtocolVersion, oracleclient.ProtocolVersion)
	}
}

// The real oracle given a bad flag, spawned with the zero Options (its stderr not
// kept): Spawn's own error says why, not only "exit status 2", in the plain line
// the oracle printed, and there is no client to call or close.
func TestClientSaysWhyTheOracleExited(t *testing.T) {
	if oracleBin == "" {
		t.Skip("no oracle binary under -short")
	}
	c, err := oracleclient.Spawn(context.Background(), oracleBin, []string{"--no-such-flag"}, oracleclient.Options{})
	if c != nil {
		t.Errorf("a client for an oracle that exited")
		c.Kill()
	}
	var ee *oracleclient.ExitError
	if !errors.As(err, &ee) || ee.Code != 2 {
		t.Fatalf("want an ExitError with code 2, got %v", err)
	}
	if !strings.Contains(err.Error(), "its stderr ends: oracle: flag provided but not defined: -no-such-flag") {
		t.Errorf("the error does not say why: %v", err)
	}
}
