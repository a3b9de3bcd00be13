package candidate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/dump"
)

// Server is --candidate-server CMD: one long-lived process (sh -c CMD, in a
// reaper of its own, as every candidate run) that reads one request a line on stdin, {"id","html"},
// and writes one line per request on stdout, {"id","dump"} or {"id","error"}, in
// any order (docs/candidate.md). Up to as many requests as Dump has callers are in
// flight at once.
//
// A case is charged a crash or a timeout only when it was the one case in flight
// for as long as it was in flight: the process is then killed (a timeout), the
// case becomes a candidate error ("exit" naming the signal, or "timeout"), and the
// next case starts a new process. When the process dies or hangs while other cases
// were in flight too, the case that did it cannot be told from the others: each of
// them is run again, alone, on a new process, and only a case that fails alone is
// charged. A crash therefore costs the case that caused it and nothing else.
type Server struct {
	Cmd     string
	Timeout time.Duration // bound on one case; 0: ctx's only
	Env     []string      // added to this process's environment, e.g. Pinned()

	// gate is held shared by a case in flight, and alone by a case run again after
	// a failure it shared with others, so that what fails then is its own.
	gate   sync.RWMutex
	mu     sync.Mutex // guards proc, closed
	proc   *serverProc
	closed bool
	seq    atomic.Uint64
	starts atomic.Int64
}

// serverProc is one run of the server command.
type serverProc struct {
	cmd    *exec.Cmd
	proc   *proc // the command under its reaper: End ends it and all it started
	stdin  io.WriteCloser
	stdout *os.File // our end, closed to end a reader a descendant holds
	stderr *lockedTail

	wmu sync.Mutex // one request line at a time on stdin

	mu        sync.Mutex
	pending   map[string]*waiter
	abandoned map[string]bool // ids whose caller gave up: a late reply is dropped
	why       *Error          // how it ended; set before dead is closed
	ending    bool            // killed, or its output ended: no new case goes to it

	dead     chan struct{} // closed once the process is gone and why is set
	waitDone chan struct{} // closed once cmd.Wait returned
	waitErr  error
}

// waiter is one case in flight.
type waiter struct {
	ch     chan serverReply
	shared bool // another case was in flight at some point while this one was
}

type serverReply struct {
	dump json.RawMessage
	err  *string
}

// Describe names the server command.
func (s *Server) Describe() string { return "server: " + s.Cmd }

// Starts is how many processes the server has started (1 + its restarts).
func (s *Server) Starts() int { return int(s.starts.Load()) }

// Dump sends html to the server and decodes and checks the dump it answers.
func (s *Server) Dump(ctx context.Context, html string) (*dump.Dump, error) {
	b, err := s.run(ctx, html)
	if err != nil {
		return nil, err
	}
	return Decode(b)
}

// run sends html to the server and returns its reply's dump as written.
func (s *Server) run(ctx context.Context, html string) ([]byte, error) {
	s.gate.RLock()
	b, err, again := s.try(ctx, html, false)
	s.gate.RUnlock()
	if !again {
		return b, err
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	b, err, _ = s.try(ctx, html, true)
	return b, err
}

// try is one attempt; again says the process failed while this case shared it
// with others (and alone is false): the case is to be run again, alone.
func (s *Server) try(ctx context.Context, html string, alone bool) ([]byte, error, bool) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Kind: "timeout", Msg: err.Error()}, false
	}
	id := strconv.FormatUint(s.seq.Add(1), 10)
	var p *serverProc
	var w *waiter
	for w == nil {
		var err error
		if p, err = s.current(); err != nil {
			return nil, err, false
		}
		w = p.add(id) // nil when it ended since: current starts another
	}
	line, err := json.Marshal(map[string]string{"id": id, "html": html})
	if err != nil {
		p.drop(id)
		return nil, &Error{Kind: "start", Msg: err.Error()}, false
	}
	p.wmu.Lock()
	_, werr := p.stdin.Write(append(line, '\n'))
	p.wmu.Unlock()
	if werr != nil {
		// It is gone or going: its exit status says how (read sets it).
		p.end(nil)
	}
	var timeout <-chan time.Time
	bound := caseTimeout(ctx, s.Timeout)
	if bound > 0 {
		t := time.NewTimer(bound)
		defer t.Stop()
		timeout = t.C
	}
	answer := func(r serverReply) ([]byte, error, bool) {
		if r.err != nil {
			return nil, &Error{Kind: "exit", Msg: "the server answered an error: " + *r.err}, false
		}
		return r.dump, nil, false
	}
	select {
	case r := <-w.ch:
		return answer(r)
	case <-p.dead:
		select {
		case r := <-w.ch: // answered just before it ended
			return answer(r)
		default:
		}
		if p.sharedBy(w) && !alone {
			return nil, nil, true
		}
		return nil, p.why.forCase(), false
	case <-timeout:
		shared := p.sharedBy(w)
		p.end(&Error{Kind: "timeout", Msg: fmt.Sprintf("no answer within %v (the server's process group was killed; a new process answers the next case)", bound)})
		<-p.dead
		if shared && !alone {
			return nil, nil, true
		}
		return nil, p.why.forCase(), false
	case <-ctx.Done():
		p.abandon(id)
		return nil, &Error{Kind: "timeout", Msg: ctx.Err().Error()}, false
	}
}

// current is the live process, started when there is none.
func (s *Server) current() (*serverProc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, &Error{Kind: "start", Msg: "the candidate server is closed"}
	}
	if s.proc != nil && !s.proc.isEnding() {
		return s.proc, nil
	}
	p, err := s.start()
	if err != nil {
		return nil, err
	}
	s.proc = p
	return p, nil
}

func (s *Server) start() (*serverProc, error) {
	cmd := exec.Command("sh", "-c", s.Cmd)
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &Error{Kind: "start", Msg: err.Error()}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, &Error{Kind: "start", Msg: err.Error()}
	}
	p := &serverProc{cmd: cmd, stdin: stdin, stdout: pr, stderr: &lockedTail{t: headTail{max: maxStderr}},
		pending: map[string]*waiter{}, abandoned: map[string]bool{},
		dead: make(chan struct{}), waitDone: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = pw, p.stderr
	cmd.WaitDelay = defaultWaitDelay // a descendant holding stderr cannot hold Wait
	// Under a reaper of its own, as every candidate run (Start): when the server is
	// ended, so is every process it started, setsid and double-forked ones too.
	proc, err := start(cmd, defaultWaitDelay)
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, &Error{Kind: "start", Msg: err.Error()}
	}
	p.proc = proc
	s.starts.Add(1)
	go func() {
		p.waitErr = proc.wait()
		close(p.waitDone)
		// A descendant that keeps stdout open cannot keep the process alive.
		select {
		case <-p.dead:
		case <-time.After(defaultWaitDelay):
			proc.end()
			pr.Close()
		}
	}()
	go p.read()
	return p, nil
}

// read delivers replies until the output ends or breaks the protocol, then ends
// the process and says how it ended.
func (p *serverProc) read() {
	r := bufio.NewReaderSize(p.stdout, 64<<10)
	var why *Error
	for why == nil {
		line, err := readLine(r, maxDump+1<<10)
		switch {
		case errors.Is(err, errLineTooLong):
			why = &Error{Kind: "output", Msg: fmt.Sprintf("the server wrote a reply over %d bytes", maxDump)}
		case len(bytes.TrimSpace(line)) > 0:
			why = p.deliver(line)
		}
		if why == nil && err != nil {
			break
		}
	}
	p.end(why)
	p.proc.end()
	select {
	case <-p.waitDone:
	case <-time.After(5 * time.Second):
	}
	p.stdout.Close()
	p.mu.Lock()
	if p.why == nil {
		status := "its output closed"
		select {
		case <-p.waitDone:
			status = "exit status 0"
			if p.waitErr != nil {
				status = p.waitErr.Error() // "signal: segmentation fault", "exit status 1"
			}
			var ee *exitError
			if errors.As(p.waitErr, &ee) {
				// sh -c that did not exec its command reports a signal as 128+N.
				if code, err := strconv.Atoi(strings.TrimPrefix(ee.Status, "exit status ")); err == nil && code > 128 && code < 128+65 {
					status += ", the shell's status for signal: " + syscall.Signal(code-128).String()
				}
			}
		default:
		}
		p.why = &Error{Kind: "exit", Msg: "the server ended (" + status + ") while it held this case; a new process answers the next case"}
	}
	p.why.Stderr = p.stderr.String()
	p.mu.Unlock()
	close(p.dead)
}

// deliver hands one reply line to its case; an error when the line is not one.
func (p *serverProc) deliver(line []byte) *Error {
	var rep struct {
		ID    json.RawMessage `json:"id"`
		Dump  json.RawMessage `json:"dump"`
		Error *string         `json:"error"`
	}
	if err := json.Unmarshal(line, &rep); err != nil {
		return &Error{Kind: "output", Msg: fmt.Sprintf("the server wrote a line that is not a JSON reply (%v): %.200q", err, line)}
	}
	id := displayID(rep.ID)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.abandoned[id] {
		delete(p.abandoned, id)
		return nil
	}
	w := p.pending[id]
	switch {
	case w == nil:
		return &Error{Kind: "output", Msg: fmt.Sprintf("the server answered id %s, which no case in flight has", rep.ID)}
	case rep.Error == nil && (len(rep.Dump) == 0 || string(rep.Dump) == "null"):
		return &Error{Kind: "output", Msg: fmt.Sprintf("the server's reply to id %s has neither \"dump\" nor \"error\"", rep.ID)}
	}
	delete(p.pending, id)
	w.ch <- serverReply{dump: rep.Dump, err: rep.Error}
	return nil
}

// displayID is a string id unquoted, any other id as its JSON text.
func displayID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// add registers a case in flight; nil when the process is ending.
func (p *serverProc) add(id string) *waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ending {
		return nil
	}
	w := &waiter{ch: make(chan serverReply, 1)}
	p.pending[id] = w
	if len(p.pending) > 1 {
		for _, o := range p.pending {
			o.shared = true
		}
	}
	return w
}

func (p *serverProc) drop(id string) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

func (p *serverProc) abandon(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pending[id]; ok {
		delete(p.pending, id)
		p.abandoned[id] = true
	}
}

func (p *serverProc) sharedBy(w *waiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return w.shared
}

func (p *serverProc) isEnding() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ending
}

// end marks the process as ending for why (the first reason given is kept) and
// kills its group; read then closes dead.
func (p *serverProc) end(why *Error) {
	p.mu.Lock()
	p.ending = true
	if p.why == nil && why != nil {
		p.why = why
	}
	p.mu.Unlock()
	p.proc.end()
}

// forCase is a copy of the process's end, as one case's error.
func (e *Error) forCase() error {
	c := *e
	return &c
}

// shutdown closes the server's stdin (end of requests), waits a moment for it
// to exit, then kills its group.
func (p *serverProc) shutdown() {
	p.wmu.Lock()
	p.stdin.Close()
	p.wmu.Unlock()
	select {
	case <-p.dead:
	case <-time.After(2 * time.Second):
	}
	p.end(&Error{Kind: "exit", Msg: "the candidate server was closed"})
	<-p.dead
}

// Close ends the server process; later cases get an error.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		p.shutdown()
	}
	return nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most limit bytes; past it, errLineTooLong.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > limit {
			return nil, errLineTooLong
		}
		line = append(line, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// lockedTail is headTail for a process's whole life, written by its copier and
// read by the cases.
type lockedTail struct {
	mu sync.Mutex
	t  headTail
}

func (l *lockedTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(p)
}

func (l *lockedTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.String()
}
