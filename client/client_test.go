package client_test

// Unit tests of the client only: the oracle here is a fake speaking the protocol,
// over in-memory pipes or as this test binary re-executed (CLIENT_FAKE_ORACLE=1),
// so the multiplexing, cancellation and restart can be driven exactly. The real
// oracle with the real browsers is example_test.go's.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeLine is one request as the fake reads it: its id as JSON text, and its fields.
type fakeLine struct {
	id  string
	req client.Request
}

func readReq(t testing.TB, br *bufio.Reader) fakeLine {
	line, err := br.ReadBytes('\n')
	if err != nil {
		t.Errorf("fake: read: %v", err)
		return fakeLine{}
	}
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	var req client.Request
	if err := json.Unmarshal(line, &head); err != nil {
		t.Errorf("fake: %q: %v", line, err)
	}
	if err := json.Unmarshal(line, &req); err != nil {
		t.Errorf("fake: %q: %v", line, err)
	}
	return fakeLine{string(head.ID), req}
}

// answerLine is a geometry answer whose one engine "fake" fails with the case's html.
func answerLine(l fakeLine) string {
	html := ""
	if l.req.HTML != nil {
		html = *l.req.HTML
	}
	msg, _ := json.Marshal(html)
	return fmt.Sprintf(`{"id":%s,"dumps":{},"errors":{"fake":%s}}`+"\n", l.id, msg)
}

// pipes is an in-memory oracle: the test reads the client's requests from br and
// writes answers to w.
type pipes struct {
	br *bufio.Reader
	w  *io.PipeWriter
}

func attach(t *testing.T, opts client.Options) (*client.Client, pipes) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	c := client.Attach(respR, reqW, opts)
	t.Cleanup(func() { respW.Close(); reqR.Close() })
	return c, pipes{bufio.NewReader(reqR), respW}
}

func TestAnswersOutOfOrderReachTheirCalls(t *testing.T) {
	c, p := attach(t, client.Options{})
	const n = 40
	go func() {
		var got []fakeLine
		for i := 0; i < n; i++ {
			got = append(got, readReq(t, p.br))
		}
		for i := n - 1; i >= 0; i-- { // last asked, first answered
			io.WriteString(p.w, answerLine(got[i]))
		}
	}()
	var wg sync.WaitGroup
	ids := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			html := "case-" + strconv.Itoa(i)
			r, err := c.Do(context.Background(), client.Request{HTML: client.Str(html)})
			if assert.NoError(t, err) {
				assert.Equal(t, html, r.Errors["fake"])
				ids[i] = string(r.ID)
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		assert.False(t, seen[id], "id %s given twice", id)
		seen[id] = true
	}
}

func TestCancelledCallLeavesTheOthersAnswered(t *testing.T) {
	late := make(chan string, 1)
	c, p := attach(t, client.Options{Unmatched: func(line []byte) { late <- string(line) }})
	release := make(chan struct{})
	go func() {
		a, b := readReq(t, p.br), readReq(t, p.br)
		io.WriteString(p.w, answerLine(b))
		<-release
		io.WriteString(p.w, answerLine(a)) // the cancelled call's answer, late
		io.WriteString(p.w, answerLine(readReq(t, p.br)))
	}()
	ctx, cancel := context.WithCancel(context.Background())
	aDone := make(chan error, 1)
	aCall, err := c.Start(ctx, client.Request{ID: "a", HTML: client.Str("a")}, nil)
	require.NoError(t, err)
	go func() { call := <-aCall.Done; aDone <- call.Err }()
	r, err := c.Do(context.Background(), client.Request{ID: "b", HTML: client.Str("b")})
	require.NoError(t, err)
	assert.Equal(t, "b", r.Errors["fake"])
	cancel()
	assert.ErrorIs(t, <-aDone, context.Canceled)
	close(release)
	assert.Contains(t, <-late, `"id":"a"`)
	r, err = c.Do(context.Background(), client.Request{ID: "c", HTML: client.Str("c")})
	require.NoError(t, err)
	assert.Equal(t, "c", r.Errors["fake"])
}

func TestCallerIDEchoedAndOnlyOnceInFlight(t *testing.T) {
	c, p := attach(t, client.Options{})
	read := make(chan fakeLine, 1)
	go func() { read <- readReq(t, p.br) }() // an io.Pipe write waits for its reader
	call, err := c.Start(context.Background(), client.Request{ID: "x<&>", HTML: client.Str("1")}, nil)
	require.NoError(t, err)
	first := <-read
	assert.Equal(t, `"x\u003c\u0026\u003e"`, first.id)
	_, err = c.Start(context.Background(), client.Request{ID: "x<&>", HTML: client.Str("2")}, nil)
	assert.ErrorContains(t, err, "already in flight")
	go io.WriteString(p.w, answerLine(first))
	call = <-call.Done
	require.NoError(t, call.Err)
	assert.Equal(t, "1", call.Response.Errors["fake"])
	assert.Equal(t, first.id, string(call.Response.ID))
	_, err = c.Start(context.Background(), client.Request{ID: strings.Repeat("x", client.MaxIDBytes)}, nil)
	assert.ErrorContains(t, err, "MaxIDBytes")
}

func TestStreamEndFailsTheCallsInFlight(t *testing.T) {
	c, p := attach(t, client.Options{})
	go func() {
		readReq(t, p.br)
		p.w.Close()
	}()
	_, err := c.Do(context.Background(), client.Request{HTML: client.Str("x")})
	require.ErrorIs(t, err, client.ErrExited)
	assert.Contains(t, err.Error(), "in flight")
	_, err = c.Do(context.Background(), client.Request{HTML: client.Str("y")})
	assert.ErrorIs(t, err, client.ErrExited)
}

func TestPingDecodesAndWaitReadyWaitsForStartingEngines(t *testing.T) {
	c, p := attach(t, client.Options{})
	go func() {
		for i := 0; i < 3; i++ {
			l := readReq(t, p.br)
			state := "starting"
			if i == 2 {
				state = "ready"
			}
			fmt.Fprintf(p.w, `{"id":%s,"ok":true,"engines":["fake"],"versions":{"fake":"1.0"},"profile":"default",`+
				`"states":{"fake":{"state":%q,"restarts":0,"pages":1}},"store":{"hits":7}}`+"\n", l.id, state)
		}
	}()
	ping, err := c.WaitReady(context.Background(), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, "1.0", ping.Versions["fake"])
	assert.Equal(t, client.EngineState{State: "ready", Pages: 1}, ping.States["fake"])
	assert.Empty(t, ping.Starting())
	assert.JSONEq(t, `{"hits":7}`, string(ping.Store))
}

// fakeProcess is this test binary run as an oracle: it answers ping, exits with N
// on a case whose html is "exit:N", and answers any other case with answerLine.
func fakeProcess() {
	br := bufio.NewReader(os.Stdin)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			os.Exit(0) // EOF: shut down as the oracle does
		}
		var head struct {
			ID json.RawMessage `json:"id"`
		}
		var req client.Request
		json.Unmarshal(line, &head)
		json.Unmarshal(line, &req)
		switch {
		case req.Op == client.OpPing:
			fmt.Printf(`{"id":%s,"ok":true,"protocol":%d,"engines":["fake"]}`+"\n", head.ID, client.ProtocolVersion)
		case req.HTML != nil && strings.HasPrefix(*req.HTML, "env:"):
			msg, _ := json.Marshal(os.Getenv(strings.TrimPrefix(*req.HTML, "env:")))
			fmt.Printf(`{"id":%s,"dumps":{},"errors":{"fake":%s}}`+"\n", head.ID, msg)
		case req.HTML != nil && *req.HTML == "stderr-exit":
			// As an oracle given a bad flag: much on stderr, the reason last.
			for range 200 {
				fmt.Fprintln(os.Stderr, "padding line of a long usage text")
			}
			fmt.Fprintln(os.Stderr, `oracle: invalid value "x" for flag -pages`)
			os.Exit(2)
		case req.HTML != nil && *req.HTML == "linger":
			// As the oracle can: stdout closed, the process still closing browsers.
			os.Stdout.Close()
			time.Sleep(2 * time.Second)
			os.Exit(0)
		case req.HTML != nil && strings.HasPrefix(*req.HTML, "exit:"):
			code, _ := strconv.Atoi(strings.TrimPrefix(*req.HTML, "exit:"))
			os.Exit(code)
		default:
			fmt.Print(answerLine(fakeLine{string(head.ID), req}))
		}
	}
}

func spawnFake(t *testing.T, restart bool) *client.Client {
	t.Setenv("CLIENT_FAKE_ORACLE", "1") // the child inherits it
	c, err := client.Spawn(context.Background(), os.Args[0], nil, client.Options{Restart: restart, Stderr: os.Stderr})
	require.NoError(t, err)
	t.Cleanup(c.Kill)
	return c
}

func TestRestartOnExitRespawnsForTheNextCall(t *testing.T) {
	c := spawnFake(t, true)
	ctx := context.Background()
	_, err := c.Ping(ctx)
	require.NoError(t, err)
	pid := c.PID()
	_, err = c.Do(ctx, client.Request{HTML: client.Str("exit:3")})
	var ee *client.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 3, ee.Code)
	assert.ErrorIs(t, err, client.ErrExited)
	assert.Contains(t, err.Error(), "oracle exited (exit status 3) while this request was in flight")
	r, err := c.Do(ctx, client.Request{HTML: client.Str("after")})
	require.NoError(t, err)
	assert.Equal(t, "after", r.Errors["fake"])
	assert.NotEqual(t, pid, c.PID())
	assert.NoError(t, c.Close())
}

func TestWithoutRestartTheExitIsEveryLaterCallsError(t *testing.T) {
	c := spawnFake(t, false)
	ctx := context.Background()
	exited := c.Exited()
	select {
	case <-exited:
		t.Fatal("Exited is closed while the oracle runs")
	default:
	}
	_, err := c.Do(ctx, client.Request{HTML: client.Str("exit:5")})
	require.ErrorIs(t, err, client.ErrExited)
	<-exited
	_, err = c.Ping(ctx)
	var ee *client.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, "exit status 5", ee.Status)
	assert.Equal(t, ee, c.Close())
}

// Options.Env reaches the spawned oracle: here it is what makes the child a fake
// at all (without it, -test.run matches nothing and the child exits at once).
func TestSpawnAddsOptionsEnv(t *testing.T) {
	c, err := client.Spawn(context.Background(), os.Args[0], []string{"-test.run=^$"}, client.Options{Stderr: os.Stderr,
		Env: []string{"CLIENT_FAKE_ORACLE=1", "FAKE_WORD=first", "FAKE_WORD=later"}})
	require.NoError(t, err)
	t.Cleanup(c.Kill)
	r, err := c.Do(context.Background(), client.Request{HTML: client.Str("env:FAKE_WORD")})
	require.NoError(t, err)
	assert.Equal(t, "later", r.Errors["fake"])
	assert.NoError(t, c.Close())
}

// StartLine sends the caller's line as written, malformed or not, and matches the
// answer by the id given, or by the line's own.
func TestStartLineSendsTheLineAsWrittenAndMatchesItsID(t *testing.T) {
	c, p := attach(t, client.Options{})
	lines := make(chan string, 3)
	go func() {
		for range 3 {
			l, _ := p.br.ReadString('\n')
			lines <- l
		}
	}()
	malformed, err := c.StartLine(context.Background(), []byte(`{"id":"m1","html":`), json.RawMessage(`null`), nil)
	require.NoError(t, err)
	assert.Equal(t, `{"id":"m1","html":`+"\n", <-lines)
	own, err := c.StartLine(context.Background(), []byte(`{"id": 5, "op":"ping", "x-new":true}`), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"id": 5, "op":"ping", "x-new":true}`+"\n", <-lines)
	assert.Equal(t, client.OpPing, own.Request.Op)
	_, err = c.StartLine(context.Background(), []byte(`{"id":"a"}`+"\n"+`{"id":"b"}`), nil, nil)
	assert.ErrorContains(t, err, "line break")
	_, err = c.StartLine(context.Background(), []byte(`not json`), nil, nil)
	assert.ErrorContains(t, err, "no readable id")

	go io.WriteString(p.w, `{"id":5,"ok":true}`+"\n"+`{"id":null,"error":"invalid JSON"}`+"\n")
	call := <-malformed.Done
	require.NoError(t, call.Err)
	assert.Equal(t, "invalid JSON", call.Response.Error)
	call = <-own.Done
	require.NoError(t, call.Err)
	assert.True(t, call.Response.OK)
	assert.Equal(t, `{"id":5,"ok":true}`, string(call.Response.Raw))
	go func() {
		<-lines
		io.WriteString(p.w, `{"id":"d","dumps":{},"errors":{"fake":"d"}}`+"\n")
	}()
	r, err := c.DoLine(context.Background(), []byte(`{"id":"d","html":"<p>"}`), nil)
	require.NoError(t, err)
	assert.Equal(t, "d", r.Errors["fake"])
}

// An oracle that closes its stdout and exits later: Exited and Close wait for the
// exit itself and Close reports its real status, while the call in flight fails once
// the grace for the exit status is over. Before, Close returned the calls' "still
// running" error (code -1) and Exited was closed with the stdout.
func TestCloseWaitsForTheExitAfterStdoutEnds(t *testing.T) {
	defer client.SetStdoutGrace(client.SetStdoutGrace(100 * time.Millisecond))
	c := spawnFake(t, false)
	start := time.Now()
	_, err := c.Do(context.Background(), client.Request{HTML: client.Str("linger")})
	require.ErrorContains(t, err, "still running")
	select {
	case <-c.Exited():
		t.Fatal("Exited is closed while the process runs")
	default:
	}
	assert.NoError(t, c.Close(), "the process exited 0")
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Second)
	<-c.Exited()
}

// A spawned oracle that exits at once (a bad flag) says why in its ExitError, with
// the zero Options (stderr otherwise discarded): the end of its stderr.
func TestExitErrorKeepsTheEndOfStderr(t *testing.T) {
	t.Setenv("CLIENT_FAKE_ORACLE", "1")
	c, err := client.Spawn(context.Background(), os.Args[0], nil, client.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Kill)
	_, err = c.Do(context.Background(), client.Request{HTML: client.Str("stderr-exit")})
	var ee *client.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.Code)
	assert.True(t, strings.HasSuffix(ee.Stderr, "oracle: invalid value \"x\" for flag -pages\n"), "%q", ee.Stderr)
	assert.LessOrEqual(t, len(ee.Stderr), 4<<10)
	assert.True(t, strings.HasPrefix(ee.Stderr, "padding line of"), "cut at a line's start: %q", ee.Stderr[:40])
	assert.Contains(t, err.Error(), `its stderr ends: oracle: invalid value "x" for flag -pages`)
}

// Close gives up on a request line the oracle never reads (it stopped reading
// stdin): bounded by CloseTimeout, and Shutdown by its context.
func TestCloseIsBoundedByAWriteTheOracleNeverReads(t *testing.T) {
	reqR, reqW := io.Pipe() // nobody reads reqR: a write blocks for ever
	respR, respW := io.Pipe()
	t.Cleanup(func() { respW.Close(); reqR.Close() })
	c := client.Attach(respR, reqW, client.Options{CloseTimeout: 200 * time.Millisecond})
	started := make(chan struct{})
	go func() {
		close(started)
		c.Do(context.Background(), client.Request{HTML: client.Str("never read")})
	}()
	<-started
	time.Sleep(50 * time.Millisecond) // the write is blocked
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "did not end")
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked behind the write")
	}
}

// Ping checks the oracle's protocol version: the same passes, another is a
// *ProtocolError, and one from before the field (none) passes.
func TestPingChecksTheProtocolVersion(t *testing.T) {
	for _, c := range []struct {
		field string
		ok    bool
	}{{`"protocol":1,`, true}, {`"protocol":2,`, false}, {``, true}} {
		cl, p := attach(t, client.Options{})
		go func() {
			l := readReq(t, p.br)
			fmt.Fprintf(p.w, `{"id":%s,"ok":true,%s"engines":["chromium"]}`+"\n", l.id, c.field)
		}()
		ping, err := cl.Ping(context.Background())
		if c.ok {
			require.NoError(t, err, c.field)
			assert.Equal(t, []string{client.Chromium}, ping.Engines)
			continue
		}
		var pe *client.ProtocolError
		require.ErrorAs(t, err, &pe, c.field)
		assert.Equal(t, 2, pe.Oracle)
		assert.Contains(t, err.Error(), "protocol version 2, this client 1")
	}
}

// An oracle that exits before it answers Spawn's ping (a missing binary's
// wrapper, a bad flag) is Spawn's own error, once, and no client: the reader sees
// the exit at once, so every field it reads must be set before it starts. Under
// -race this failed whenever the exit won that race.
func TestSpawnOfAnOracleThatExitsAtOnce(t *testing.T) {
	for range 50 {
		c, err := client.Spawn(context.Background(), "/bin/true", nil, client.Options{})
		var ee *client.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 0, ee.Code)
		assert.Nil(t, c)
	}
}

// Spawn's wait for the first answer is bounded by its context: an oracle that
// never answers is killed, and the context's error returned.
func TestSpawnIsCancelledByItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	c, err := client.Spawn(ctx, "/bin/sleep", []string{"60"}, client.Options{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, c)
	assert.Less(t, time.Since(start), 10*time.Second)
}

// IDString is the id as a person reads it, without JSON's quotes.
func TestResponseIDString(t *testing.T) {
	for raw, want := range map[string]string{`"a\"b"`: `a"b`, `1`: "1", `null`: "", ``: ""} {
		r := &client.Response{ID: json.RawMessage(raw)}
		assert.Equal(t, want, r.IDString(), raw)
	}
}

// A line the oracle refuses without reading its id (over --max-line, not JSON) is
// answered with id null and its line's number: the call that wrote that line gets
// it, not a wait forever, while an answer under a call's own id still goes by id.
func TestARefusedLineIsMatchedByItsNumber(t *testing.T) {
	c, p := attach(t, client.Options{})
	go func() {
		for range 3 {
			readReq(t, p.br)
		}
		io.WriteString(p.w, `{"id":null,"error":"request line exceeds the maximum of 10 bytes","line":2}`+"\n"+
			`{"id":"c","error":"bad field","line":3}`+"\n"+
			`{"id":"a","dumps":{},"errors":{"fake":"a"}}`+"\n")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := c.Start(ctx, client.Request{ID: "a", HTML: client.Str("<p>")}, nil)
	require.NoError(t, err)
	b, err := c.Start(ctx, client.Request{ID: "b", HTML: client.Str("<p>a long case")}, nil)
	require.NoError(t, err)
	cc, err := c.Start(ctx, client.Request{ID: "c", HTML: client.Str("<p>")}, nil)
	require.NoError(t, err)
	call := <-b.Done
	require.NoError(t, call.Err, "the refusal is the answer, not a timeout")
	assert.Equal(t, 2, call.Response.Line)
	assert.ErrorContains(t, call.Response.Err(), "exceeds the maximum")
	call = <-cc.Done
	require.NoError(t, call.Err)
	assert.Equal(t, "bad field", call.Response.Error)
	call = <-a.Done
	require.NoError(t, call.Err)
	assert.Equal(t, "a", call.Response.Errors["fake"])
}
