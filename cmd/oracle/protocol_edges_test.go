package main

// Protocol edges through the real oracle binary and real engines: ping while cases
// run, keys encoding/json would let through, an id that is not UTF-8, a closed
// stdout, lines after shutdown. Each failed on the code before its fix.

import (
	"bufio"
	"encoding/json"
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
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Four cases that keep every page of every engine busy for 2 s each, then a ping:
// the ping is answered within a second, before the cases. Before, it waited for a
// place behind the cases (at least 2 s; the hostile run measured 4.6 s).
func TestPingIsAnsweredAtOnceWhileCasesRun(t *testing.T) {
	c := shared.get(t)
	c.send(t, map[string]any{"op": "ping"}) // the oracle is up: only the cases can delay the next ping
	busy := `const t0 = Date.now(); while (Date.now() - t0 < 2000) {}`
	procs := renderers(c.pid())
	before := ticksOf(procs)
	var wg sync.WaitGroup
	answered := make(chan string, 8)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := c.send(t, map[string]any{"id": fmt.Sprintf("busy-%d", i), "html": "<p>busy</p>", "script": busy})
			assert.Nil(t, resp["errors"])
			answered <- resp["id"].(string)
		}()
	}
	waitBusy(t, procs, before, 1500*time.Millisecond) // the cases reached the pages first; the ping must overtake them
	start := time.Now()
	resp := c.send(t, map[string]any{"op": "ping"})
	took := time.Since(start)
	assert.Equal(t, true, resp["ok"])
	t.Logf("ping answered in %s while 4 cases of 2 s ran on %d pages", took, 2)
	// Not a time bound (a CI run under -race took 1.1 s with both cores busy): a ping
	// queued behind a case would come back after that case's answer.
	assert.Empty(t, answered, "the ping came back before any case: it did not wait behind them")
	wg.Wait()
}

func TestDuplicateMiscasedKeysAndANonUTF8IDAreRefused(t *testing.T) {
	c := shared.get(t)
	for _, tc := range []struct{ line, id, want string }{
		{`{"id":"k1","html":"<p>","script":"a()","script":"b()"}`, `"k1"`, `duplicate key "script"`},
		{`{"id":"k2","html":"<p>","Script":"x()"}`, `"k2"`, `key "Script" must be spelled "script"`},
		{"{\"id\":\"k3\xff\",\"op\":\"ping\"}", `null`, `"id" is not valid UTF-8`},
	} {
		resp := c.sendRaw(t, tc.line, tc.id)
		assert.Contains(t, resp["error"], tc.want, tc.line)
	}
}

// An id holding <, > or & comes back as it was sent, so the Go client matches its
// answer: with the id's escapes written instead, it matched none and waited for ever.
func TestAnIDWithMarkupIsEchoedAsSent(t *testing.T) {
	c := shared.get(t)
	for _, line := range []string{`{"id":"<a>&b","op":"ping"}`, `{"id":"</p>","html":"<p>x"}`} {
		got := string(c.answerLine(t, c.startLine(t, []byte(line), nil), time.Minute, line))
		id, _, _ := strings.Cut(strings.TrimPrefix(line, `{"id":`), `,`)
		assert.True(t, strings.HasPrefix(got, `{"id":`+id+`,`), "%s answered %.80s", line, got)
	}
}

// oracleProc is an oracle run with raw pipes, not through package client: its tests
// test the wire itself (they close stdin, stdout or stderr on purpose, write bytes
// after shutdown, and read stdout line by line as it comes).
type oracleProc struct {
	cmd     *exec.Cmd
	stdin   *os.File
	stdout  *os.File
	stderr  *testutil.LockedBuffer
	stderrR *os.File      // startRawStderr's pipe, else nil
	done    chan struct{} // closed once the process is reaped; err is then its Wait error
	err     error
}

func startRaw(t *testing.T, args ...string) *oracleProc {
	t.Helper()
	return startRawStderr(t, false, args...)
}

// startRawStderr is startRaw; with pipe, the oracle's stderr is a pipe copied into
// p.stderr until the test closes its read end (p.stderrR).
func startRawStderr(t *testing.T, pipe bool, args ...string) *oracleProc {
	t.Helper()
	testutil.NeedsBrowsers(t)
	p := &oracleProc{cmd: exec.Command(oracleBin, args...), done: make(chan struct{}), stderr: &testutil.LockedBuffer{}}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, p.stderr
	var errW *os.File
	if pipe {
		p.stderrR, errW, err = os.Pipe()
		require.NoError(t, err)
		p.cmd.Stderr = errW
		go io.Copy(p.stderr, p.stderrR) // ends when the test closes stderrR
	}
	require.NoError(t, p.cmd.Start())
	inR.Close()
	outW.Close()
	if errW != nil {
		errW.Close()
	}
	p.stdin, p.stdout = inW, outR
	// Closed, not sent on: wait and the cleanup both see the exit. A sent value went
	// to wait alone, and the cleanup then waited out its 30 s on every such test.
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stdin.Close()
		p.stdout.Close()
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	return p
}

func (p *oracleProc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		if ee, ok := p.err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		require.NoError(t, p.err)
		return 0
	case <-time.After(within):
		t.Fatalf("oracle still running after %s; stderr:\n%s", within, p.stderr.String())
	}
	return -1
}

// A client that closes its end of stdout: the oracle notices at its next answer,
// says so on stderr, closes its browsers and exits 1. Before, the write error was
// ignored and the oracle served on into the void.
func TestClosedStdoutEndsTheOracleCleanly(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	p := startRaw(t, "--engines=chromium", "--pages=1", "--self-check=false", "--log-level=warn")
	// Ping is answered at spawn; the browser is up once ping says it is ready.
	out := bufio.NewReader(p.stdout)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := p.stdin.WriteString(`{"id":"p1","op":"ping"}` + "\n")
		require.NoError(t, err)
		line, err := out.ReadString('\n')
		require.NoError(t, err, "stderr:\n%s", p.stderr.String())
		require.Contains(t, line, `"id":"p1"`)
		if strings.Contains(line, `"state":"ready"`) {
			break
		}
		require.True(t, time.Now().Before(deadline), "chromium not ready within 90 s: %s", line)
	}
	kids := descendants(p.cmd.Process.Pid)
	require.NotEmpty(t, kids, "the browser runs below the oracle")

	p.stdout.Close()
	_, err := p.stdin.WriteString(`{"id":"c1","html":"<p>"}` + "\n" + `{"id":"p2","op":"ping"}` + "\n")
	require.NoError(t, err)
	assert.Equal(t, 1, p.wait(t, 60*time.Second))
	assert.Contains(t, p.stderr.String(), "stdout is closed or broken")
	assert.Contains(t, p.stderr.String(), "broken pipe")
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range kids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		assert.False(t, alive(pid), "process %d outlived the oracle", pid)
	}
}

// A supervisor that closes the oracle's stderr must not end it: before,
// the next log line raised SIGPIPE on fd 2 and killed the oracle (exit -13, signal)
// with cases unanswered. Closing stdout afterwards still ends it cleanly.
// Chromium only: on its default CDP route the browser's output reaches stderr
// through the oracle's log, as every engine's does on the own-client and WebDriver
// routes, and the debug lines write to the closed fd 2 on every case
// (docs/log/testing.md, the fourth pass, has why one engine was enough).
func TestClosedStderrDoesNotEndTheOracle(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	// debug: every request logs a line, so each case below writes to the closed pipe.
	p := startRawStderr(t, true, "--engines=chromium", "--pages=1", "--self-check=false", "--log-level=debug")
	out := bufio.NewReader(p.stdout)
	ask := func(line string) string {
		t.Helper()
		_, err := p.stdin.WriteString(line + "\n")
		require.NoError(t, err)
		got, err := out.ReadString('\n')
		require.NoError(t, err, "no answer to %s; stderr:\n%s", line, p.stderr.String())
		return got
	}
	require.Contains(t, ask(`{"id":"p1","op":"ping"}`), `"id":"p1"`)
	for i := 0; i < 50; i++ { // every engine serves before stderr closes
		if !strings.Contains(ask(`{"id":"w","op":"ping"}`), `"starting"`) {
			break
		}
		time.Sleep(time.Second)
	}
	kids := descendants(p.cmd.Process.Pid)
	require.NotEmpty(t, kids)
	require.NoError(t, p.stderrR.Close())

	for i := 0; i < 3; i++ {
		resp := ask(`{"id":"c` + strconv.Itoa(i) + `","html":"<p>after stderr closed"}`)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(resp), &m))
		assert.Nil(t, m["errors"], "case %d", i)
		assert.Contains(t, m["dumps"], "chromium", "case %d: the engine answers", i)
	}
	select {
	case <-p.done:
		t.Fatalf("the oracle ended after its stderr closed: %v", p.err)
	default:
	}

	// The protocol stdout closed too: the oracle ends (exit 1) and closes its browsers.
	p.stdout.Close()
	_, err := p.stdin.WriteString(`{"id":"c9","html":"<p>"}` + "\n")
	require.NoError(t, err)
	assert.Equal(t, 1, p.wait(t, 60*time.Second))
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range kids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		assert.False(t, alive(pid), "process %d (%v) outlived the oracle", pid, cmdline(pid))
	}
}

// The oracle's own output, with a case, a trace, a ping (its additive "states"), a
// shutdown and a line after the shutdown, is read by the real compare binary: one
// case, three replies skipped (before: the ping's states was read as a reflection
// case, exit 2). The line after shutdown is not read, and stderr says so.
func TestCompareReadsTheOraclesOwnOutputWithPingShutdownAndTrace(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	compareBin := filepath.Join(t.TempDir(), "compare")
	build := exec.Command("go", "build", "-o", compareBin, "../compare")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	p := startRaw(t, "--engines=chromium", "--pages=1", "--self-check=false", "--log-level=info")
	_, err := p.stdin.WriteString(strings.Join([]string{
		`{"id":"case","html":"<div style='width:10px;height:10px'></div>"}`,
		`{"id":"tr","op":"trace","script":"trace.value('x', 1); trace.done()"}`,
		`{"id":"pg","op":"ping"}`,
		`{"id":"sd","op":"shutdown"}`,
		`{"id":"after","op":"ping"}`,
	}, "\n") + "\n")
	require.NoError(t, err)
	var out []string
	sc := bufio.NewScanner(p.stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	assert.Equal(t, 0, p.wait(t, 60*time.Second))
	require.Len(t, out, 4, "stderr:\n%s", p.stderr.String())
	var ids []string
	for _, l := range out {
		var m struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		ids = append(ids, m.ID)
	}
	assert.ElementsMatch(t, []string{"case", "tr", "pg", "sd"}, ids)
	assert.Equal(t, "sd", ids[3], "shutdown is answered last")
	assert.Contains(t, out[slicesIndex(ids, "pg")], `"states"`)
	assert.Contains(t, p.stderr.String(), "lines after it are not read")

	file := filepath.Join(t.TempDir(), "oracle.ndjson")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644))
	for _, args := range [][]string{{"--oracle", file}, {"--json", "--oracle", file}} {
		cmd := exec.Command(compareBin, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		assert.NoError(t, err, "%v: stdout:\n%s\nstderr:\n%s", args, stdout.String(), stderr.String())
		if args[0] == "--json" {
			// The geometry case and the trace are cases; ping and shutdown are skipped.
			assert.Contains(t, stdout.String(), `"cases":2,`)
			assert.Contains(t, stdout.String(), `"skipped_lines":2`)
		} else {
			assert.Contains(t, stdout.String(), "2 cases: 2 no-candidate; 2 non-case lines skipped; exit 0")
		}
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
