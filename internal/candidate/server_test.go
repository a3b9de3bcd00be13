package candidate

// A unit test of Server with real processes: the server is a small Python
// program, not an engine; it answers every case with the bundled passing dump,
// each case on its own thread (so replies come out of order), and acts on
// markers in a case's HTML: CRASH kills the process with SIGKILL, HANG never
// answers, FAIL answers an error, GARBAGE writes a line that is no reply, NOISE
// writes 100 kB to stderr before it crashes.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fakeServer = `
import json, os, signal, sys, threading, time, random
dump = json.load(open(sys.argv[1]))
lock = threading.Lock()
def answer(req):
    html = req["html"]
    time.sleep(random.random() * 0.05)
    if "NOISE" in html:
        sys.stderr.write("x" * 100000 + "END\n"); sys.stderr.flush()
    if "CRASH" in html or "NOISE" in html:
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    if "HANG" in html:
        time.sleep(3600)
    with lock:
        if "FAIL" in html:
            sys.stdout.write(json.dumps({"id": req["id"], "error": "no layout for FAIL"}) + "\n")
        elif "GARBAGE" in html:
            sys.stdout.write("this is not json\n")
        else:
            sys.stdout.write(json.dumps({"id": req["id"], "dump": dump}) + "\n")
        sys.stdout.flush()
for line in sys.stdin:
    threading.Thread(target=answer, args=(json.loads(line),), daemon=True).start()
`

func fakeServerCmd(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rec, err := os.ReadFile(filepath.Join("..", "..", "testdata", "compare", "candidate-pass.ndjson"))
	require.NoError(t, err)
	var first struct {
		Dump json.RawMessage `json:"dump"`
	}
	require.NoError(t, json.Unmarshal(bytes.SplitN(rec, []byte("\n"), 2)[0], &first))
	d := filepath.Join(dir, "dump.json")
	require.NoError(t, os.WriteFile(d, first.Dump, 0o600))
	py := filepath.Join(dir, "server.py")
	require.NoError(t, os.WriteFile(py, []byte(fakeServer), 0o600))
	return "exec python3 " + py + " " + d
}

// runAll runs every html through s, inflight at once, and returns each case's error.
func runAll(s Candidate, htmls []string, inflight int) []error {
	errs := make([]error, len(htmls))
	sem := make(chan struct{}, inflight)
	var wg sync.WaitGroup
	for i, h := range htmls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, errs[i] = s.Dump(context.Background(), h)
		})
	}
	wg.Wait()
	return errs
}

func kindOf(err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return ""
}

// A server that kills itself on one case, with three others in flight beside it,
// costs that case only: it becomes an "exit" error naming the signal, and every
// other case is answered (by a new process where it shared the dead one).
func TestServerCrashCostsTheCaseThatCausedIt(t *testing.T) {
	s := &Server{Cmd: fakeServerCmd(t), Timeout: 20 * time.Second}
	defer s.Close()
	var htmls []string
	for i := range 16 {
		h := fmt.Sprintf("<p>case %d", i)
		if i == 5 {
			h += " CRASH"
		}
		htmls = append(htmls, h)
	}
	errs := runAll(s, htmls, 4)
	for i, err := range errs {
		if i == 5 {
			require.Error(t, err)
			assert.Equal(t, "exit", kindOf(err))
			assert.Contains(t, err.Error(), "signal: killed")
			continue
		}
		assert.NoError(t, err, "case %d", i)
	}
	// The crash, then a new process; and when others shared the crashed process,
	// the crash once more alone, and a third.
	assert.GreaterOrEqual(t, s.Starts(), 2)
}

// A case that hangs is that case's timeout; the process is killed and restarted,
// and the cases in flight beside it are answered.
func TestServerTimeoutKillsAndRestarts(t *testing.T) {
	s := &Server{Cmd: fakeServerCmd(t), Timeout: 6 * time.Second}
	defer s.Close()
	htmls := []string{"<p>a", "<p>b HANG", "<p>c", "<p>d", "<p>e"}
	start := time.Now()
	errs := runAll(s, htmls, 3)
	for i, err := range errs {
		if i == 1 {
			assert.Equal(t, "timeout", kindOf(err), "%v", err)
			assert.Contains(t, err.Error(), "no answer within 6s")
			continue
		}
		assert.NoError(t, err, "case %d", i)
	}
	assert.Less(t, time.Since(start), 40*time.Second)
}

// An error reply is that case's candidate error, and the process goes on; a line
// that is no reply ends the process (the protocol is broken) and costs its case.
func TestServerErrorsAndBrokenReplies(t *testing.T) {
	s := &Server{Cmd: fakeServerCmd(t), Timeout: 10 * time.Second}
	defer s.Close()
	_, err := s.Dump(context.Background(), "<p>FAIL")
	assert.Equal(t, "exit", kindOf(err))
	assert.Contains(t, err.Error(), "the server answered an error: no layout for FAIL")
	assert.Equal(t, 1, s.Starts())
	d, err := s.Dump(context.Background(), "<p>fine")
	require.NoError(t, err)
	assert.Equal(t, "HTML", d.Nodes[0].Tag)
	assert.Equal(t, 1, s.Starts(), "one process for both")

	_, err = s.Dump(context.Background(), "<p>GARBAGE")
	assert.Equal(t, "output", kindOf(err))
	assert.Contains(t, err.Error(), "not a JSON reply")
	_, err = s.Dump(context.Background(), "<p>after")
	require.NoError(t, err)
	assert.Equal(t, 2, s.Starts())
}

// A crash's error keeps a bounded share of the server's stderr, its end included.
func TestServerStderrIsBounded(t *testing.T) {
	s := &Server{Cmd: fakeServerCmd(t), Timeout: 10 * time.Second}
	defer s.Close()
	_, err := s.Dump(context.Background(), "<p>NOISE")
	var ce *Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "exit", ce.Kind)
	assert.Less(t, len(ce.Stderr), maxStderr+100)
	assert.True(t, strings.HasSuffix(ce.Stderr, "END"), "the end of stderr is kept")
}

// A server command that cannot run is a clear error per case, not a hang.
func TestServerThatExitsAtOnce(t *testing.T) {
	s := &Server{Cmd: "echo broken >&2; exit 3", Timeout: 5 * time.Second}
	defer s.Close()
	_, err := s.Dump(context.Background(), "<p>x")
	require.Error(t, err)
	assert.Equal(t, "exit", kindOf(err))
	assert.Contains(t, err.Error(), "exit status 3")
	assert.Contains(t, err.Error(), "broken")
}

// WithCaseBound lowers one call's bound below the server's Timeout: the hanging
// case is killed at the bound, named by it, and the next case is answered by a new
// process. A bound above the Timeout changes nothing.
func TestServerCaseBoundCutsAHangShort(t *testing.T) {
	s := &Server{Cmd: fakeServerCmd(t), Timeout: time.Minute}
	defer s.Close()
	start := time.Now()
	_, err := s.Dump(WithCaseBound(context.Background(), 700*time.Millisecond), "<p>b HANG")
	assert.Equal(t, "timeout", kindOf(err), "%v", err)
	assert.Contains(t, err.Error(), "no answer within 700ms")
	assert.Less(t, time.Since(start), 20*time.Second, "cut at the bound, not the minute")
	_, err = s.Dump(context.Background(), "<p>c")
	assert.NoError(t, err, "a new process answers the next case")
	assert.Equal(t, 2, s.Starts())
	assert.Equal(t, time.Minute, caseTimeout(WithCaseBound(context.Background(), 2*time.Minute), time.Minute))
	assert.Equal(t, time.Second, caseTimeout(WithCaseBound(context.Background(), time.Second), 0), "a bound where there is no timeout")
}

// A command's run is bounded by WithCaseBound too, and its error names that bound.
func TestCommandCaseBound(t *testing.T) {
	c := Command{Cmd: "sleep 30", Timeout: time.Minute}
	start := time.Now()
	_, err := c.run(WithCaseBound(context.Background(), 300*time.Millisecond), "")
	var ce *Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "timeout", ce.Kind)
	assert.Contains(t, ce.Msg, "no answer within 300ms")
	assert.Less(t, time.Since(start), 10*time.Second)
}
