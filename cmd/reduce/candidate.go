package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/reduce"
)

// candidate is --candidate CMD: the engine under test, on its side of the contract
// (dump-format.md): CMD, run by sh -c, reads a case's HTML on stdin and writes its
// dump as JSON on stdout. A run that fails, times out or writes no valid dump scores
// nothing, so the variant is not interesting.
type candidate struct {
	cmd     string
	timeout time.Duration
}

// maxCandidateDump bounds what a candidate may write: a dump of the oracle's own
// bound (docs/untrusted.md) is far below it.
const maxCandidateDump = 256 << 20

func (c *candidate) dump(ctx context.Context, v reduce.Variant) (*dump.Dump, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", c.cmd)
	cmd.Stdin = strings.NewReader(v.HTML)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b, readErr := io.ReadAll(io.LimitReader(out, maxCandidateDump+1))
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("candidate: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	if readErr != nil {
		return nil, readErr
	}
	if len(b) > maxCandidateDump {
		return nil, fmt.Errorf("candidate: the dump is over %d bytes", maxCandidateDump)
	}
	var d dump.Dump
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("candidate: not a dump: %v", err)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("candidate: %v", err)
	}
	return &d, nil
}
