package main

// The oracle reduce talks to, through the shared client package (spawn, many
// requests in flight, answers matched by id), behind the little reduce needs.

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/layout-oracle/oracle/client"
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

// procOracle is one oracle process we spawned.
type procOracle struct{ c *client.Client }

// startOracle spawns bin with args; its log goes to logw.
func startOracle(bin string, args []string, logw io.Writer) (*procOracle, error) {
	c, err := client.Spawn(context.Background(), bin, args, client.Options{Stderr: logw, CloseTimeout: 2 * time.Minute})
	if err != nil {
		return nil, err
	}
	return &procOracle{c}, nil
}

func (o *procOracle) Geometry(ctx context.Context, v reduce.Variant) (map[string]*dump.Dump, map[string]string, error) {
	req := client.Request{HTML: client.Str(v.HTML)}
	if v.Script != "" {
		req.Script = client.Str(v.Script)
	}
	r, err := o.c.Do(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Err(); err != nil {
		return nil, nil, err
	}
	return r.Dumps, r.Errors, nil
}

// Ready waits until no engine is starting: an engine still starting answers a
// case with an error once its deadline passes, which is no vote.
func (o *procOracle) Ready(ctx context.Context) error {
	p, err := o.c.WaitReady(ctx, 500*time.Millisecond)
	if err != nil {
		return err
	}
	if len(p.Failed) > 0 {
		return fmt.Errorf("engines failed to start: %v", p.Failed)
	}
	return nil
}

// Close ends the oracle the way the protocol says: EOF on stdin, then it exits.
func (o *procOracle) Close() error { return o.c.Close() }

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
