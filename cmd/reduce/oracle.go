package main

// The smallest NDJSON exchange with an oracle process that reduce needs: spawn,
// send geometry requests with many in flight, match answers by id. It sits behind
// geometryOracle so switching to the shared client package is this one file.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/reduce"
)

// geometryOracle answers geometry requests; safe for concurrent use.
type geometryOracle interface {
	// Geometry returns each engine's dump, and each failed engine's error.
	Geometry(ctx context.Context, v reduce.Variant) (map[string]*dump.Dump, map[string]string, error)
	// Ready waits until no engine is still starting; an error when one failed.
	Ready(ctx context.Context) error
	Close() error
}

type answer struct {
	ID     string                `json:"id"`
	Dumps  map[string]*dump.Dump `json:"dumps"`
	Errors map[string]string     `json:"errors"`
	Error  string                `json:"error"`
	// ping's
	OK     bool                              `json:"ok"`
	Failed map[string]string                 `json:"failed"`
	States map[string]struct{ State string } `json:"states"`
}

// procOracle is one oracle process we spawned.
type procOracle struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	wmu  sync.Mutex
	mu   sync.Mutex
	wait map[string]chan answer
	next int
	dead error
	done chan struct{}
}

// startOracle spawns bin with args; its log goes to logw.
func startOracle(bin string, args []string, logw io.Writer) (*procOracle, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logw
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	o := &procOracle{cmd: cmd, in: in, wait: map[string]chan answer{}, done: make(chan struct{})}
	go o.read(out)
	return o, nil
}

func (o *procOracle) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var a answer
		if json.Unmarshal(sc.Bytes(), &a) != nil {
			continue
		}
		o.mu.Lock()
		ch := o.wait[a.ID]
		delete(o.wait, a.ID)
		o.mu.Unlock()
		if ch != nil {
			ch <- a
		}
	}
	o.mu.Lock()
	o.dead = errors.New("oracle exited")
	if err := sc.Err(); err != nil {
		o.dead = fmt.Errorf("oracle output: %v", err)
	}
	o.mu.Unlock()
	close(o.done)
}

// request sends one request (its id set here) and waits for its answer.
func (o *procOracle) request(ctx context.Context, req map[string]any) (answer, error) {
	ch := make(chan answer, 1)
	o.mu.Lock()
	if o.dead != nil {
		o.mu.Unlock()
		return answer{}, o.dead
	}
	o.next++
	id := "reduce-" + strconv.Itoa(o.next)
	o.wait[id] = ch
	o.mu.Unlock()
	req["id"] = id
	line, err := json.Marshal(req)
	if err != nil {
		return answer{}, err
	}
	o.wmu.Lock()
	_, err = o.in.Write(append(line, '\n'))
	o.wmu.Unlock()
	if err != nil {
		return answer{}, fmt.Errorf("oracle input: %v", err)
	}
	select {
	case a := <-ch:
		if a.Error != "" {
			return a, errors.New(a.Error)
		}
		return a, nil
	case <-o.done:
		return answer{}, errors.New("oracle exited")
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
}

func (o *procOracle) Geometry(ctx context.Context, v reduce.Variant) (map[string]*dump.Dump, map[string]string, error) {
	req := map[string]any{"html": v.HTML}
	if v.Script != "" {
		req["script"] = v.Script
	}
	a, err := o.request(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	return a.Dumps, a.Errors, nil
}

// Ready pings until no engine is starting: an engine still starting answers a
// case with an error once its deadline passes, which is no vote.
func (o *procOracle) Ready(ctx context.Context) error {
	for {
		a, err := o.request(ctx, map[string]any{"op": "ping"})
		if err != nil {
			return err
		}
		starting := false
		for _, s := range a.States {
			starting = starting || s.State == "starting"
		}
		if !starting {
			if len(a.Failed) > 0 {
				return fmt.Errorf("engines failed to start: %v", a.Failed)
			}
			return nil
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close ends the oracle the way the protocol says: EOF on stdin, then it exits.
func (o *procOracle) Close() error {
	o.in.Close()
	err := o.cmd.Wait()
	if err != nil {
		return fmt.Errorf("oracle: %v", err)
	}
	return nil
}

// readyOracle starts an oracle and waits until its engines serve; on a loaded
// machine an engine can fail its startup self-check, so a failed start is
// tried once more.
func readyOracle(ctx context.Context, bin string, args []string, logw, stderr io.Writer) (*procOracle, error) {
	var err error
	for try := range 2 {
		var o *procOracle
		if o, err = startOracle(bin, args, logw); err != nil {
			return nil, err
		}
		if err = o.Ready(ctx); err == nil {
			return o, nil
		}
		o.Close()
		if try == 0 && ctx.Err() == nil {
			fmt.Fprintf(stderr, "reduce: an oracle did not start (%v); starting another\n", err)
		}
	}
	return nil, err
}
