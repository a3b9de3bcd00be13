package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/dump"
)

// candidateEngine is the engine field of every planted dump.
const candidateEngine = "planted"

// planter holds one long-lived oracle serving one engine, and answers a case's
// HTML with that engine's dump under a set of planted defects.
type planter struct {
	c      *client.Client
	engine string
}

// startPlanter spawns the oracle (one engine, no store: a planted run is not
// ground truth worth keeping) and waits until it serves.
func startPlanter(ctx context.Context, oracleBin, engine string, pages int, stderr io.Writer) (*planter, error) {
	args := []string{"--store=off", "--engines=" + engine, fmt.Sprintf("--pages=%d", pages)}
	c, err := client.Spawn(ctx, oracleBin, args, client.Options{Stderr: stderr, CloseTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	p, err := c.WaitReady(ctx, 200*time.Millisecond)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("oracle %s: %w", oracleBin, err)
	}
	if len(p.Engines) == 0 {
		c.Close()
		return nil, fmt.Errorf("oracle %s serves no engine (asked for %s)", oracleBin, engine)
	}
	return &planter{c: c, engine: engine}, nil
}

func (p *planter) Close() error { return p.c.Close() }

// dump answers html with the engine's dump under ds (crash defects aside: the
// caller decides those), its engine field the candidate's.
func (p *planter) dump(ctx context.Context, html string, ds []Defect) (*dump.Dump, error) {
	r, err := p.c.Do(ctx, client.Request{HTML: client.Str(html), Script: client.Str(plantScript(ds))})
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return nil, err
	}
	d := r.Dumps[p.engine]
	if d == nil {
		return nil, fmt.Errorf("%s gave no dump: %s", p.engine, r.Errors[p.engine])
	}
	d.Engine = candidateEngine
	d.EngineVersion = p.engine + " " + d.EngineVersion + " with planted defects"
	return d, nil
}

// sockRequest is one case over the daemon's socket: one line each way per
// connection.
type sockRequest struct {
	HTML    string   `json:"html"`
	Defects []string `json:"defects"`
}

type sockAnswer struct {
	Dump  *dump.Dump `json:"dump,omitempty"`
	Error string     `json:"error,omitempty"`
}

// serveSocket answers connections on ln until ctx ends: each reads one
// sockRequest line and writes one sockAnswer line.
func serveSocket(ctx context.Context, ln net.Listener, p *planter) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			ans := answerSocket(ctx, conn, p)
			json.NewEncoder(conn).Encode(ans)
		}()
	}
}

func answerSocket(ctx context.Context, conn net.Conn, p *planter) sockAnswer {
	line, err := bufio.NewReader(io.LimitReader(conn, 256<<20)).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return sockAnswer{Error: "reading the request: " + err.Error()}
	}
	var req sockRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return sockAnswer{Error: "bad request: " + err.Error()}
	}
	ds, err := pickDefects(strings.Join(req.Defects, ","))
	if err != nil {
		return sockAnswer{Error: err.Error()}
	}
	d, err := p.dump(ctx, req.HTML, ds)
	if err != nil {
		return sockAnswer{Error: err.Error()}
	}
	return sockAnswer{Dump: d}
}

// askSocket sends one case to the daemon at sock and returns its dump.
func askSocket(ctx context.Context, sock, html string, ds []Defect) (*dump.Dump, error) {
	var dl net.Dialer
	conn, err := dl.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, fmt.Errorf("no planted daemon at %s (start one: planted serve --socket %s): %w", sock, sock, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if err := json.NewEncoder(conn).Encode(sockRequest{HTML: html, Defects: names(ds)}); err != nil {
		return nil, err
	}
	var ans sockAnswer
	if err := json.NewDecoder(conn).Decode(&ans); err != nil {
		return nil, fmt.Errorf("reading the daemon's answer: %w", err)
	}
	if ans.Error != "" {
		return nil, errors.New(ans.Error)
	}
	if ans.Dump == nil {
		return nil, errors.New("the daemon answered no dump")
	}
	return ans.Dump, nil
}

// stdioRequest and stdioAnswer are the candidate-server protocol: {"id","html"}
// lines in, {"id","dump"} or {"id","error"} lines out, in any order.
type stdioRequest struct {
	ID   json.RawMessage `json:"id"`
	HTML *string         `json:"html"`
}

type stdioAnswer struct {
	ID    json.RawMessage `json:"id"`
	Dump  *dump.Dump      `json:"dump,omitempty"`
	Error string          `json:"error,omitempty"`
}

// serveStdio answers the candidate-server protocol on r and w with parallel cases
// in flight, until r ends. A case a crash defect matches kills the whole process
// by SIGSEGV, as a crashed engine server would die.
func serveStdio(ctx context.Context, r io.Reader, w io.Writer, p *planter, ds []Defect, parallel int) error {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	write := func(a stdioAnswer) {
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(a)
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		var req stdioRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			write(stdioAnswer{ID: json.RawMessage("null"), Error: "bad request line: " + err.Error()})
			continue
		}
		if len(req.ID) == 0 {
			req.ID = json.RawMessage("null")
		}
		if req.HTML == nil {
			write(stdioAnswer{ID: req.ID, Error: `bad request line: no "html"`})
			continue
		}
		if d := crashes(ds, *req.HTML); d != nil {
			dieBySegv(d)
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(req stdioRequest) {
			defer func() { <-sem; wg.Done() }()
			d, err := p.dump(ctx, *req.HTML, ds)
			if err != nil {
				write(stdioAnswer{ID: req.ID, Error: err.Error()})
				return
			}
			write(stdioAnswer{ID: req.ID, Dump: d})
		}(req)
	}
	wg.Wait()
	return sc.Err()
}

// runOnce is the one-shot candidate: the case's HTML from r, its dump to w,
// through the daemon at sock.
func runOnce(ctx context.Context, sock string, ds []Defect, r io.Reader, w io.Writer) error {
	html, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if d := crashes(ds, string(html)); d != nil {
		dieBySegv(d)
	}
	d, err := askSocket(ctx, sock, string(html), ds)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(d)
}

func removeStaleSocket(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return fmt.Errorf("a daemon already serves %s", path)
		}
		return os.Remove(path)
	}
	return nil
}
