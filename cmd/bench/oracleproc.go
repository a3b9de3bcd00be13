package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/progress"
)

// oracleProc is one oracle binary run as a child, driven through package client
// the way any Go tool would; its stderr goes to log.
type oracleProc struct {
	c   *client.Client
	log *os.File
}

// startupTimes is how long an oracle took from exec to its first ping answer and to
// every engine serving or failed (no state "starting" in ping). An oracle that reads
// stdin only once every engine is up (as the oracle once did) has the two equal.
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
	if !client.NamesStore(args) {
		args = append(args, "--store=off") // the bench measures the engines, not the store
	}
	start := time.Now()
	c, err := client.Spawn(context.Background(), bin, args, client.Options{Stderr: logf})
	if err != nil {
		logf.Close()
		return nil, st, err
	}
	p := &oracleProc{c: c, log: logf}
	ctx := context.Background()
	ping, err := c.Ping(ctx)
	if err == nil && !ping.OK {
		err = errors.New("ping answered without ok")
	}
	if err != nil {
		p.kill()
		return nil, st, fmt.Errorf("oracle did not answer a ping: %v (log %s)", err, logPath)
	}
	st.FirstPing = time.Since(start)
	if ping, err = c.WaitReady(ctx, 50*time.Millisecond); err != nil {
		p.kill()
		return nil, st, fmt.Errorf("oracle did not answer a ping: %v (log %s)", err, logPath)
	}
	st.AllReady = time.Since(start)
	if len(ping.Failed) > 0 {
		p.kill()
		return nil, st, fmt.Errorf("engines failed to launch: %v (log %s)", ping.Failed, logPath)
	}
	return p, st, nil
}

func (p *oracleProc) pid() int { return p.c.PID() }

// close ends the oracle the way a client does (EOF on stdin) and waits for it to close
// its browsers; it kills the process group if that takes more than 30 s.
func (p *oracleProc) close() error {
	defer p.log.Close()
	err := p.c.Close()
	var ee *client.ExitError
	switch {
	case errors.As(err, &ee):
		return fmt.Errorf("oracle exited %d (log %s)", ee.Code, p.log.Name())
	case err != nil:
		return fmt.Errorf("%v (log %s)", err, p.log.Name())
	}
	return nil
}

func (p *oracleProc) kill() {
	p.c.Kill()
	p.log.Close()
}

// passResult is what one pass of requests through the oracle measured.
type passResult struct {
	Wall      time.Duration
	Latencies []time.Duration // per request, send -> response, in completion order
	Errors    int             // engine errors plus request errors
	FirstErr  string
}

// caseRequest is c's geometry request, id tag+c.ID, naming engines (nil: all).
func caseRequest(c benchCase, tag string, engines []string) client.Request {
	r := client.Request{ID: tag + c.ID, HTML: client.Str(c.HTML), Engines: engines}
	if c.Script != "" {
		r.Script = client.Str(c.Script)
	}
	return r
}

// pass sends every case (ids prefixed with tag) naming engines (nil: all launched),
// and waits for every answer. window > 0 keeps at most that many requests
// outstanding, so each one's latency is its service time and not time queued in the
// pipe; window 0 writes as fast as the oracle's backpressure (it reads stdin only
// when it has a place free) lets the pipe take them.
//
// A request's send time is when its line was fully written to the pipe.
func (p *oracleProc) pass(cases []benchCase, tag string, engines []string, window int) (passResult, error) {
	var slots chan struct{}
	if window > 0 {
		slots = make(chan struct{}, window)
	}
	done := make(chan *client.Call, len(cases))
	writeErr := make(chan error, 1)
	start := time.Now()
	go func() {
		for _, c := range cases {
			if slots != nil {
				slots <- struct{}{}
			}
			if _, err := p.c.Start(context.Background(), caseRequest(c, tag, engines), done); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()

	res := passResult{Latencies: make([]time.Duration, 0, len(cases))}
	bar := progress.New(os.Stderr, int64(len(cases)), "bench "+strings.TrimSuffix(tag, "-"), "cases")
	defer bar.Finish()
	wrote := writeErr
	for got := 0; got < len(cases); got++ {
		var call *client.Call
		select {
		case call = <-done:
		case err := <-wrote:
			if err != nil {
				return res, fmt.Errorf("write request: %w (log %s)", err, p.log.Name())
			}
			wrote, got = nil, got-1 // every request is out; wait for the answers
			continue
		}
		if call.Err != nil {
			return res, fmt.Errorf("oracle output ended after %d of %d answers: %v (log %s)", got, len(cases), call.Err, p.log.Name())
		}
		bar.Add(1)
		r := call.Response
		res.Latencies = append(res.Latencies, call.Received.Sub(call.Sent))
		if r.Error != "" {
			res.Errors++
			res.noteErr(call.Request.ID + ": " + r.Error)
		}
		for e, msg := range r.Errors {
			res.Errors++
			res.noteErr(call.Request.ID + " " + e + ": " + msg)
		}
		if slots != nil {
			<-slots
		}
	}
	res.Wall = time.Since(start)
	if wrote != nil {
		if err := <-wrote; err != nil {
			return res, fmt.Errorf("write request: %w", err)
		}
	}
	return res, nil
}

func (r *passResult) noteErr(s string) {
	if r.FirstErr == "" {
		r.FirstErr = s
	}
}
