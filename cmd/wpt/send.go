package main

// Sending a run's requests: one request per engine for each test, bounded by each
// engine's pages (docs/web-content.md, "wpt run"), and a line per answered request
// on a pipe.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/progress"
	"github.com/layout-oracle/oracle/trace"
)

// enginePage is an engine that answers and a semaphore of its page count.
type enginePage struct {
	name  string
	pages chan struct{}
}

// enginePages are ping's engines, each with its page count (ping's pages; 1 when
// ping does not say).
func enginePages(p *client.Ping) []enginePage {
	out := make([]enginePage, 0, len(p.Engines))
	for _, e := range p.Engines {
		n := max(p.Pages[e], 1)
		out = append(out, enginePage{e, make(chan struct{}, n)})
	}
	return out
}

// runRequests sends each of reqs to every engine as a request of its own (so each
// engine's answer has its own duration), inflight tests at a time and at most an
// engine's pages of requests to it (a request the oracle holds waiting for a page
// would spend its --deadline waiting), and returns the answers by id. each, when
// not nil, is called as each request is answered.
func runRequests(ctx context.Context, c *client.Client, reqs []client.Request, engines []enginePage, inflight int, bar *progress.Bar, each func(done int, req client.Request, a answer)) map[string]answer {
	out := make(map[string]answer, len(reqs))
	var mu sync.Mutex
	next := make(chan client.Request)
	var wg sync.WaitGroup
	for range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for req := range next {
				a := do(ctx, c, req, engines)
				mu.Lock()
				out[req.ID] = a
				n := len(out)
				if each != nil {
					each(n, req, a)
				}
				mu.Unlock()
				bar.Add(1)
			}
		}()
	}
	for _, r := range reqs {
		if ctx.Err() != nil {
			break
		}
		next <- r
	}
	close(next)
	wg.Wait()
	bar.Finish()
	return out
}

// requestTimeout bounds one request; the oracle's own deadline ends it far sooner.
const requestTimeout = 5 * time.Minute

// do sends req once per engine, each when the engine has a page free, and merges
// the answers.
func do(ctx context.Context, c *client.Client, req client.Request, engines []enginePage) answer {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	a := answer{Resp: &client.Response{}, Errs: map[string]error{}, Durations: map[string]time.Duration{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case e.pages <- struct{}{}:
				defer func() { <-e.pages }()
			case <-ctx.Done():
				mu.Lock()
				a.Errs[e.name] = ctx.Err()
				mu.Unlock()
				return
			}
			r := req
			r.ID, r.Engines = req.ID+" "+e.name, []string{e.name}
			call, err := c.Start(ctx, r, nil)
			if err == nil {
				call = <-call.Done
				err = call.Err
			}
			mu.Lock()
			defer mu.Unlock()
			if call != nil {
				a.Durations[e.name] = call.Received.Sub(call.Sent)
			}
			if err != nil {
				a.Errs[e.name] = err
				return
			}
			mergeResponse(a.Resp, e.name, call.Response)
		}()
	}
	wg.Wait()
	return a
}

// mergeResponse adds engine's answer r (to a request for it alone) to m.
func mergeResponse(m *client.Response, engine string, r *client.Response) {
	if r.Error != "" {
		m.Error = r.Error
	}
	if d := r.Dumps[engine]; d != nil {
		if m.Dumps == nil {
			m.Dumps = map[string]*dump.Dump{}
		}
		m.Dumps[engine] = d
	}
	if t := r.Traces[engine]; t != nil {
		if m.Traces == nil {
			m.Traces = map[string]*trace.Trace{}
		}
		m.Traces[engine] = t
	}
	if msg, ok := r.Errors[engine]; ok {
		if m.Errors == nil {
			m.Errors = map[string]string{}
		}
		m.Errors[engine] = msg
	}
	if u := r.Unstable[engine]; len(u) > 0 {
		if m.Unstable == nil {
			m.Unstable = map[string][]string{}
		}
		m.Unstable[engine] = u
	}
	m.Stored = append(m.Stored, r.Stored...)
}

// testLine prints, as wptrunner does on a pipe, one line per answered request:
// its count, id, and per engine its status so far (a testharness test's harness
// status; a reftest's document is "answered" until its references are in) and
// duration.
func testLine(w io.Writer, total int, engines []string) func(done int, req client.Request, a answer) {
	return func(done int, req client.Request, a answer) {
		parts := make([]string, 0, len(engines))
		for _, e := range engines {
			st := "answered"
			switch why := a.engineError(e); {
			case why != "":
				st = errorStatus(why)
			case a.Resp.Traces[e] != nil:
				st, _, _ = harnessResult(a.Resp.Traces[e])
			}
			parts = append(parts, fmt.Sprintf("%s %s %d ms", e, st, a.Durations[e].Milliseconds()))
		}
		fmt.Fprintf(w, "wpt run: %d/%d %s: %s\n", done, total, req.ID, strings.Join(parts, ", "))
	}
}
