package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/internal/progress"
)

// oracleProc is one oracle binary run as a child, driven over its stdio the way any
// client would: request lines in, response lines matched back by id.
type oracleProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	log    *os.File
	exited chan struct{}
}

// startupTimes is how long an oracle took from exec to its first ping answer and to
// every engine serving or failed (no state "starting" in ping). An oracle that reads
// stdin only once every engine is up (before #10) has the two equal.
type startupTimes struct {
	FirstPing time.Duration `json:"first_ping"`
	AllReady  time.Duration `json:"all_ready"`
}

// startOracle starts bin with args, its stderr to logPath, and waits until every
// engine is serving: it pings at once, then every 50 ms while ping says an engine is
// still "starting".
func startOracle(bin string, args []string, logPath string) (*oracleProc, startupTimes, error) {
	var st startupTimes
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, st, err
	}
	if !hasStoreFlag(args) {
		args = append(args, "--store=off") // the bench measures the engines, not the store
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, st, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, st, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, st, err
	}
	p := &oracleProc{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20), log: logf, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	for n := 0; ; n++ {
		if n > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := io.WriteString(stdin, `{"id":"ready","op":"ping"}`+"\n"); err != nil {
			p.kill()
			return nil, st, fmt.Errorf("oracle did not take a ping: %v (log %s)", err, logPath)
		}
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			p.kill()
			return nil, st, fmt.Errorf("oracle exited before answering a ping (log %s)", logPath)
		}
		var ping struct {
			OK      bool                              `json:"ok"`
			Engines []string                          `json:"engines"`
			Failed  map[string]string                 `json:"failed"`
			States  map[string]struct{ State string } `json:"states"`
		}
		if err := json.Unmarshal(line, &ping); err != nil || !ping.OK {
			p.kill()
			return nil, st, fmt.Errorf("bad ping answer %.200q (log %s)", line, logPath)
		}
		if n == 0 {
			st.FirstPing = time.Since(start)
		}
		starting := false
		for _, s := range ping.States {
			starting = starting || s.State == "starting"
		}
		if starting {
			continue
		}
		st.AllReady = time.Since(start)
		if len(ping.Failed) > 0 {
			p.kill()
			return nil, st, fmt.Errorf("engines failed to launch: %v (log %s)", ping.Failed, logPath)
		}
		return p, st, nil
	}
}

func (p *oracleProc) pid() int { return p.cmd.Process.Pid }

// close ends the oracle the way a client does (EOF on stdin) and waits for it to close
// its browsers; it kills the process group if that takes more than 30 s.
func (p *oracleProc) close() error {
	p.stdin.Close()
	defer p.log.Close()
	select {
	case <-p.exited:
		if c := p.cmd.ProcessState.ExitCode(); c != 0 {
			return fmt.Errorf("oracle exited %d (log %s)", c, p.log.Name())
		}
		return nil
	case <-time.After(30 * time.Second):
		p.kill()
		return fmt.Errorf("oracle did not exit within 30s of EOF; killed (log %s)", p.log.Name())
	}
}

func (p *oracleProc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
	p.log.Close()
}

// passResult is what one pass of requests through the oracle measured.
type passResult struct {
	Wall      time.Duration
	Latencies []time.Duration // per request, send -> response, in completion order
	Errors    int             // engine errors plus request errors
	FirstErr  string
}

type request struct {
	ID      string   `json:"id"`
	HTML    string   `json:"html"`
	Script  string   `json:"script,omitempty"`
	Engines []string `json:"engines,omitempty"`
}

type response struct {
	ID     string                     `json:"id"`
	Dumps  map[string]json.RawMessage `json:"dumps"`
	Errors map[string]string          `json:"errors"`
	Error  string                     `json:"error"`
}

// pass sends every case (ids prefixed with tag) naming engines (nil: all launched),
// and waits for every answer. window > 0 keeps at most that many requests
// outstanding, so each one's latency is its service time and not time queued in the
// pipe; window 0 writes as fast as the oracle's backpressure (it reads stdin only
// when it has a place free) lets the pipe take them.
//
// A request's send time is when its line was fully written to the pipe.
func (p *oracleProc) pass(cases []benchCase, tag string, engines []string, window int) (passResult, error) {
	lines := make([][]byte, len(cases))
	for i, c := range cases {
		b, err := json.Marshal(request{ID: tag + c.ID, HTML: c.HTML, Script: c.Script, Engines: engines})
		if err != nil {
			return passResult{}, err
		}
		lines[i] = append(b, '\n')
	}
	var mu sync.Mutex
	sent := make(map[string]time.Time, len(cases))
	var slots chan struct{}
	if window > 0 {
		slots = make(chan struct{}, window)
	}
	writeErr := make(chan error, 1)
	start := time.Now()
	go func() {
		for i, l := range lines {
			if slots != nil {
				slots <- struct{}{}
			}
			if _, err := p.stdin.Write(l); err != nil {
				writeErr <- err
				return
			}
			mu.Lock()
			sent[tag+cases[i].ID] = time.Now()
			mu.Unlock()
		}
		writeErr <- nil
	}()

	res := passResult{Latencies: make([]time.Duration, 0, len(cases))}
	bar := progress.New(os.Stderr, int64(len(cases)), "bench "+strings.TrimSuffix(tag, "-"), "cases")
	defer bar.Finish()
	for got := 0; got < len(cases); got++ {
		line, err := p.out.ReadBytes('\n')
		now := time.Now()
		if err != nil {
			return res, fmt.Errorf("oracle output ended after %d of %d answers: %v (log %s)", got, len(cases), err, p.log.Name())
		}
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			return res, fmt.Errorf("malformed answer %.200q: %v", line, err)
		}
		bar.Add(1)
		mu.Lock()
		t0, ok := sent[r.ID]
		delete(sent, r.ID)
		mu.Unlock()
		if !ok {
			// The answer can overtake the writer's bookkeeping by microseconds.
			for i := 0; !ok && i < 1000; i++ {
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				t0, ok = sent[r.ID]
				delete(sent, r.ID)
				mu.Unlock()
			}
			if !ok {
				return res, fmt.Errorf("answer for an id never sent: %q", r.ID)
			}
		}
		res.Latencies = append(res.Latencies, now.Sub(t0))
		if r.Error != "" {
			res.Errors++
			res.noteErr(r.ID + ": " + r.Error)
		}
		for e, msg := range r.Errors {
			res.Errors++
			res.noteErr(r.ID + " " + e + ": " + msg)
		}
		if slots != nil {
			<-slots
		}
	}
	res.Wall = time.Since(start)
	if err := <-writeErr; err != nil {
		return res, fmt.Errorf("write request: %w", err)
	}
	return res, nil
}

func (r *passResult) noteErr(s string) {
	if r.FirstErr == "" {
		r.FirstErr = s
	}
}

func hasStoreFlag(args []string) bool {
	for _, a := range args {
		if a == "--store" || strings.HasPrefix(a, "--store=") {
			return true
		}
	}
	return false
}
