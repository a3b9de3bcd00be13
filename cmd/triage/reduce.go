package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/reduce"
)

// probe is one run of a variant: the engines' dumps and the candidate's answer,
// scored. nil report with errKind "" means no vote (an engine failed).
type probe struct {
	resp    *client.Response
	cand    *dump.Dump
	candErr error
	report  *compare.Report
	errKind string
}

// ask runs html through oracle o and the candidate, scored as judge scores a case.
func (t *triage) ask(ctx context.Context, o *client.Client, html string) *probe {
	p := &probe{}
	var wg sync.WaitGroup
	wg.Go(func() { p.cand, p.candErr = t.cfg.cand.Dump(ctx, html) })
	resp, err := o.Do(ctx, client.Request{HTML: client.Str(html)})
	wg.Wait()
	if err != nil || resp.Err() != nil {
		return p
	}
	p.resp = resp
	s := &scored{c: tcase{html: html}, resp: resp, cand: p.cand, candErr: p.candErr}
	t.judge(s)
	p.report, p.errKind = s.report, s.errKind
	if s.verdict == "candidate-error" && s.report == nil && p.errKind == "" {
		p.errKind = "error"
	}
	return p
}

func (p *probe) shows(s Signature) bool {
	if p == nil || p.resp == nil {
		return false
	}
	return shows(s, p.report, p.errKind)
}

// reduceBuckets reduces each bucket's representative (its smallest case) with
// the reduce package, keeping the bucket's signature: a variant is interesting
// when its scored answer still shows a cause of that signature, twice (the second
// from a rerun: a variant whose answer changes is not kept). The reducing oracle
// and the confirming one are fresh processes with the store off; the confirming
// one, and a fresh candidate run, answer each reduced case once.
func (t *triage) reduceBuckets(ctx context.Context, top []*Bucket, byID map[string]*scored) {
	args := append(slices.Clone(t.cfg.oracleArgs), "--store=off") // the last --store wins
	type started struct {
		c   *client.Client
		err error
	}
	start := func() started {
		for try := range 2 {
			c, err := client.Spawn(t.cfg.oracleBin, args, client.Options{Stderr: t.cfg.oracleLog, CloseTimeout: 2 * time.Minute})
			if err != nil {
				return started{nil, err}
			}
			rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			p, err := c.WaitReady(rctx, 500*time.Millisecond)
			cancel()
			if err == nil && len(p.Failed) == 0 {
				return started{c, nil}
			}
			c.Close()
			if err == nil {
				err = fmt.Errorf("engines failed to start: %v", p.Failed)
			}
			if try == 1 || ctx.Err() != nil {
				return started{nil, err}
			}
		}
		return started{}
	}
	freshCh := make(chan started, 1)
	go func() { freshCh <- start() }()
	red := start()
	fresh := func() started { f := <-freshCh; freshCh <- f; return f }
	defer func() {
		if f := fresh(); f.c != nil {
			f.c.Close()
		}
	}()
	if red.err != nil {
		fmt.Fprintf(t.stderr, "triage: the reducing oracle did not start: %v\n", red.err)
		for _, b := range top {
			b.Reduced = &Reduced{Error: "not reduced: the reducing oracle did not start: " + red.err.Error()}
		}
		return
	}
	for i, b := range top {
		if ctx.Err() != nil {
			break
		}
		rep := byID[b.Representative]
		b.Reduced = t.reduceOne(ctx, red.c, b, rep.c.html)
		fmt.Fprintf(t.stderr, "triage: bucket %d/%d %s: %d -> %d bytes in %.1fs\n", i+1, len(top),
			b.Signature.Label(), b.Reduced.BytesBefore, b.Reduced.Bytes, b.Reduced.Seconds)
	}
	red.c.Close()
	f := fresh()
	if f.err != nil {
		fmt.Fprintf(t.stderr, "triage: the confirming oracle did not start: %v\n", f.err)
		return
	}
	for _, b := range top {
		if b.Reduced == nil || b.Reduced.Error != "" {
			continue
		}
		p := t.ask(ctx, f.c, b.Reduced.HTML)
		b.Reduced.Reproduced = p.shows(b.Signature)
		b.confirm = p
	}
}

func (t *triage) reduceOne(ctx context.Context, o *client.Client, b *Bucket, html string) *Reduced {
	start := time.Now()
	v := reduce.Variant{HTML: html}
	out := &Reduced{BytesBefore: len(html)}
	var mu sync.Mutex
	unstable := 0
	mode := hasDoctype(html)
	test := func(ctx context.Context, vs []reduce.Variant) []bool {
		ok := make([]bool, len(vs))
		var wg sync.WaitGroup
		for i, v := range vs {
			if hasDoctype(v.HTML) != mode {
				continue // cutting the doctype changes the document's mode (quirks): another page
			}
			wg.Go(func() {
				if !t.ask(ctx, o, v.HTML).shows(b.Signature) {
					return
				}
				if t.ask(ctx, o, v.HTML).shows(b.Signature) {
					ok[i] = true
				} else {
					mu.Lock()
					unstable++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return ok
	}
	rctx, cancel := context.WithTimeout(ctx, t.cfg.reduceFor)
	defer cancel()
	best, st, ok := reduce.Reduce(rctx, v, test, reduce.Options{Parallel: t.cfg.parallel})
	out.Seconds = time.Since(start).Seconds()
	out.Variants = st.Tests
	if !ok {
		out.Error = "the representative no longer shows the signature in a fresh oracle (store off) and candidate run"
		if unstable > 0 {
			out.Error += fmt.Sprintf(" (%d unstable variants)", unstable)
		}
		return out
	}
	out.HTML, out.Bytes = best.HTML, len(best.HTML)
	return out
}

// hasDoctype says html starts with a doctype (after whitespace and comments): a
// rough test of standards mode, enough to keep a variant in its original's mode.
func hasDoctype(html string) bool {
	s := strings.TrimLeft(html, " \t\r\n\f\ufeff")
	for strings.HasPrefix(s, "<!--") {
		end := strings.Index(s, "-->")
		if end < 0 {
			return false
		}
		s = strings.TrimLeft(s[end+3:], " \t\r\n\f")
	}
	return len(s) >= 9 && strings.EqualFold(s[:9], "<!doctype")
}

// causeOf is the first cause of p's report the candidate fails with signature s.
func causeOf(p *probe, s Signature) *compare.Cause {
	if p == nil || p.report == nil {
		return nil
	}
	k := s.Key()
	for _, c := range p.report.Causes {
		if containsCandidate(c.Engines) && causeSignature(p.report, c).Key() == k {
			return &c
		}
	}
	return nil
}

// itemsOf lists the cause's own node's items with every engine's value and the
// candidate's, from the node-by-node vote.
func itemsOf(p *probe, c *compare.Cause, cfg config) []compare.NodeItem {
	if p == nil || p.resp == nil || c == nil {
		return nil
	}
	o, err := compare.NodeOutcomesWith(p.resp.Dumps, p.cand, cfg.scoring(compare.Unstable(p.resp.Unstable)))
	if err != nil {
		return nil
	}
	for _, n := range o.Nodes {
		if n.Node == c.Node {
			return n.Items
		}
	}
	return nil
}
