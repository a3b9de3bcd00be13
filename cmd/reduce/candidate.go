package main

import (
	"context"

	"github.com/layout-oracle/oracle/dump"
	internalcand "github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/reduce"
)

// candidate is --candidate-cmd CMD: the engine under test, on its side of the contract
// (docs/dump-format.md): CMD, run by sh -c, reads a case's HTML on stdin and writes
// its dump as JSON on stdout. It runs through internal/candidate (its own process
// group, killed as a whole at the bound; a child that keeps stdout open cannot hold
// the read). A run that fails, times out or writes no valid dump scores nothing, so
// the variant is not interesting.
//
// --candidate-server CMD and --candidate-webdriver URL are the same engine run as
// triage runs them (docs/candidate.md): all three are an internal/candidate.Candidate.
type candidate struct {
	c internalcand.Candidate
}

func (c *candidate) dump(ctx context.Context, v reduce.Variant) (*dump.Dump, error) {
	return c.c.Dump(ctx, v.HTML)
}
