package main

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/reduce"
)

// probe is one run of a variant: the engines' dumps and the candidate's answer,
// scored. nil report with errKind "" means no vote (an engine failed).
type probe struct {
	resp     *client.Response
	cand     *dump.Dump
	candErr  error
	report   *compare.Report
	errKind  string
	overflow bool
	verdict  string // as judge gives it; "" when the oracle gave no answer
}

// ask runs html through oracle o and the candidate, scored as judge scores a case.
func (t *triage) ask(ctx context.Context, o *client.Client, html string) *probe {
	p := &probe{}
	var wg sync.WaitGroup
	wg.Go(func() { p.cand, p.candErr = t.cfg.cand.Dump(ctx, html) })
	cctx, cancel := context.WithTimeout(ctx, t.cfg.caseFor)
	resp, err := o.Do(cctx, client.Request{HTML: client.Str(html)})
	cancel()
	wg.Wait()
	if err != nil || resp.Err() != nil {
		return p
	}
	p.resp = resp
	s := &scored{c: tcase{html: html}, resp: resp, cand: p.cand, candErr: p.candErr}
	t.judge(s)
	p.report, p.errKind, p.overflow, p.verdict = s.report, s.errKind, s.overflow, s.verdict
	if s.verdict == "candidate-error" && s.report == nil && p.errKind == "" {
		p.errKind = "error"
	}
	return p
}

// failsOn says the candidate fails some cause on a box of tag in p.
func (p *probe) failsOn(tag string) bool {
	if p == nil || p.resp == nil || p.report == nil {
		return false
	}
	for _, g := range signatures(p.report) {
		if g.Tag == tag {
			return true
		}
	}
	return false
}

func (p *probe) shows(s Signature) bool {
	if p == nil || p.resp == nil {
		return false
	}
	return shows(s, p.report, p.errKind, p.overflow)
}

// others are the signatures (keys) p fails other than s.
func (p *probe) others(s Signature) map[string]Signature {
	out := map[string]Signature{}
	if p == nil || p.resp == nil || p.errKind != "" || p.overflow {
		return out
	}
	for _, g := range signatures(p.report) {
		if g.Key() != s.Key() {
			out[g.Key()] = g
		}
	}
	return out
}

// toReduce are the entries reduced, in this order: every crash and timeout,
// then the others in rank order, at most max of them (max < 0: all).
func toReduce(entries []*Bucket, max int) []*Bucket {
	var out []*Bucket
	for _, b := range entries {
		if b.Severity == "crash" {
			out = append(out, b)
		}
	}
	n := 0
	for _, b := range entries {
		if b.Severity == "crash" {
			continue
		}
		if max >= 0 && n >= max {
			break
		}
		out = append(out, b)
		n++
	}
	return out
}

// reduceBuckets reduces each bucket's representative (its smallest case) with
// the reduce package, keeping the bucket's signature: a variant is interesting
// when its scored answer still shows a cause of that signature, twice (the second
// from a rerun: a variant whose answer changes is not kept). The reducing oracle
// and the confirming one are fresh processes with the store off; the confirming
// one, and a fresh candidate run, answer each reduced case once.
func (t *triage) reduceBuckets(ctx context.Context, entries []*Bucket, byID map[string]*scored) {
	top := toReduce(entries, t.cfg.reduceTop)
	if len(top) == 0 {
		return
	}
	deadline := time.Now().Add(t.cfg.reduceBudget)
	type started struct {
		c   *client.Client
		err error
	}
	start := func() started {
		c, err := t.liveOracle(ctx)
		return started{c, err}
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
		t.say("triage: the reducing oracle did not start: %v", red.err)
		for _, b := range top {
			b.Reduced = &Reduced{Error: "not reduced: the reducing oracle did not start: " + red.err.Error()}
		}
		return
	}
	var hang time.Duration
	if slices.ContainsFunc(top, func(b *Bucket) bool { return b.rep.Signature.hangs() }) {
		hang = hangBound(byID, t.cfg.spec.Timeout)
	}
	if hang > 0 {
		t.say("triage: a timeout entry's variants count as hanging after %v (hangBound)", hang.Round(time.Millisecond))
	}
	began := time.Now()
	for i, b := range top {
		left := time.Until(deadline)
		if ctx.Err() != nil || left <= 0 && b.Severity != "crash" {
			t.say("triage: the reduction budget (%v) is spent: %d of %d entries reduced", t.cfg.reduceBudget, i, len(top))
			break
		}
		limit := min(t.cfg.reduceFor, max(left, 10*time.Second))
		entryStart := time.Now()
		// The reduction's time left: this entry and the ones after it at the pace
		// so far (before any is done, at this one's limit), within the budget or
		// this entry's limit, whichever ends later.
		etaOf := func() time.Duration {
			per := limit
			if i > 0 {
				per = entryStart.Sub(began) / time.Duration(i)
			}
			est := per*time.Duration(len(top)-i) - time.Since(entryStart)
			return max(min(est, max(time.Until(deadline), time.Until(entryStart.Add(limit)))), 0)
		}
		t.say("triage: reducing entry %d/%d %s (at most %v; reduction ETA %v)", i+1, len(top),
			b.Signature.Label(), limit.Round(time.Second), etaOf().Round(time.Second))
		last := time.Now()
		progress := func(st reduce.Stats) { // a line every 10 s: reducing is never quiet for long
			if time.Since(last) >= 10*time.Second {
				last = time.Now()
				t.say("triage: entry %d/%d: %d -> %d bytes, %d variants tested; reduction ETA %v", i+1, len(top),
					st.BytesBefore, st.BytesAfter, st.Tests, etaOf().Round(time.Second))
			}
		}
		rep := byID[b.Representative]
		b.Reduced = t.reduceOne(ctx, red.c, b, rep, limit, hang, progress)
		if b.Reduced.Error != "" {
			t.say("triage: entry %d/%d %s: not reduced in %.1fs: %s", i+1, len(top),
				b.Signature.Label(), b.Reduced.Seconds, b.Reduced.Error)
			continue
		}
		t.say("triage: entry %d/%d %s: %d -> %d bytes in %.1fs", i+1, len(top),
			b.Signature.Label(), b.Reduced.BytesBefore, b.Reduced.Bytes, b.Reduced.Seconds)
	}
	red.c.Close()
	f := fresh()
	if f.err != nil {
		t.say("triage: the confirming oracle did not start: %v", f.err)
		return
	}
	for _, b := range top {
		if b.Reduced == nil || b.Reduced.Error != "" {
			continue
		}
		p := t.ask(ctx, f.c, b.Reduced.HTML)
		b.Reduced.Reproduced = b.showsAny(p.report, p.errKind, p.overflow) && p.resp != nil
		b.Reduced.OtherFailures = []string{}
		for _, k := range slices.Sorted(maps.Keys(p.others(b.rep.Signature))) {
			b.Reduced.OtherFailures = append(b.Reduced.OtherFailures, p.others(b.rep.Signature)[k].Label())
		}
		b.confirm = p
		if b.Reduced.Reproduced {
			t.generalize(ctx, f.c, b)
			t.stylesheetTrigger(ctx, f.c, b)
		}
	}
}

// liveOracle starts an oracle with the store off (a rerun or a variant must be
// answered live, and is not worth keeping) and waits until its engines serve,
// trying twice.
func (t *triage) liveOracle(ctx context.Context) (*client.Client, error) {
	args := append(slices.Clone(t.cfg.oracleArgs), "--store=off") // the last --store wins
	for try := 0; ; try++ {
		c, err := t.spawnOracle(ctx, args)
		if err != nil {
			return nil, err
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		p, err := c.WaitReady(rctx, 500*time.Millisecond)
		cancel()
		if err == nil && len(p.Failed) == 0 {
			return c, nil
		}
		c.Close()
		if err == nil {
			err = fmt.Errorf("engines failed to start: %v", p.Failed)
		}
		if try == 1 || ctx.Err() != nil {
			return nil, err
		}
	}
}

// authorCSS is a page's author style: style elements' text and style attributes.
var authorCSS = regexp.MustCompile(`(?is)(<style\b[^>]*>).*?(</style\s*>)|\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)

// withoutAuthorCSS is html with its style elements emptied and its style
// attributes cut: the same elements (the same shape), none of the page's CSS.
func withoutAuthorCSS(html string) string {
	return authorCSS.ReplaceAllStringFunc(html, func(m string) string {
		if sm := authorCSS.FindStringSubmatch(m); sm[1] != "" {
			return sm[1] + sm[2]
		}
		return ""
	})
}

// stylesheetTrigger asks the engines for the entry's reduced case without its
// author CSS: when the candidate's answer to the real page then passes against
// theirs, the candidate laid the page out as the engines do without its
// stylesheet, and the entry is a stylesheet-parsing defect (refine folds every
// such entry into one). Only a whole match counts: an answer that merely stops
// showing the signature without the CSS (a wrong table cell padding whose width
// error an inline padding:0 happened to hide) is some other defect, and folding
// it would hide every other defect folded with it.
func (t *triage) stylesheetTrigger(ctx context.Context, o *client.Client, b *Bucket) {
	p := b.confirm
	if p == nil || p.cand == nil || p.report == nil {
		return
	}
	bare := withoutAuthorCSS(b.Reduced.HTML)
	if bare == b.Reduced.HTML {
		return
	}
	resp, err := o.Do(ctx, client.Request{HTML: client.Str(bare)})
	if err != nil || resp.Err() != nil || len(resp.Dumps) < 3 || len(resp.Errors) > 0 {
		return
	}
	rep, err := compare.GeometryWith(resp.Dumps, p.cand, t.cfg.scoring(compare.Unstable(resp.Unstable)))
	if err != nil || rep.Verdict == compare.Untrustworthy || rep.Verdict == compare.Discarded || rep.Shape != nil {
		return
	}
	b.stylesheet = rep.Verdict == compare.Pass
}

// generalize checks that the entry's other tags are the same defect: each tag,
// swapped for the reduced case's in that case, must still fail on its own box
// (DDSET's generalization); the variants of a tag that does not are set apart
// (refine makes them an entry of their own). Any failure on the box counts, not
// only the tag's own signatures: a reduced case is the smallest page that shows
// the defect on one tag, and the same defect can show differently on another
// (a letter-spacing that widens <b> within its line wraps the wider <em> onto a
// second line: a height, not a width). The tags are already one entry's (the
// same kind, display type, properties and sign in the corpus); this asks only
// whether the reduced page's defect reaches them too.
func (t *triage) generalize(ctx context.Context, o *client.Client, b *Bucket) {
	from := b.rep.Signature.Tag
	if from == "" || !regexp.MustCompile(`(?i)<`+regexp.QuoteMeta(from)+`\b`).MatchString(b.Reduced.HTML) {
		return
	}
	tried := map[string]bool{from: true}
	for _, v := range b.Variants {
		tag := v.Signature.Tag
		if tried[tag] || tag == "" {
			continue
		}
		tried[tag] = true
		if !t.ask(ctx, o, swapTag(b.Reduced.HTML, from, tag)).failsOn(tag) {
			for _, w := range b.Variants {
				if w.Signature.Tag == tag {
					b.split = append(b.split, w)
				}
			}
		}
	}
}

// hangBound is how long a variant of a timeout entry may take before it counts as
// still hanging while it is reduced: three times the 95th percentile of the
// candidate's answers in this run (nearest rank: the slowest under 20 answers), at
// least 2 s (well above a busy machine's jitter), when that is below the candidate's
// own timeout (0, the timeout itself, otherwise, or when no answer was timed: a
// resumed run). Not the slowest: a case
// in flight beside a hang waits for the hang's timeout and is answered again alone,
// and its time counts both. Each variant that still hangs then costs this, not the
// whole --candidate-timeout; a variant merely slow past it is judged a hang, and the
// confirming run of the reduced case, under the full timeout, says whether it
// reproduced.
func hangBound(byID map[string]*scored, timeout time.Duration) time.Duration {
	var times []time.Duration
	for _, r := range byID {
		if r.candErr == nil && r.cand != nil && r.candT > 0 {
			times = append(times, r.candT)
		}
	}
	if len(times) == 0 {
		return 0
	}
	slices.Sort(times)
	p95 := times[(len(times)*95+99)/100-1]
	b := max(3*p95, 2*time.Second)
	if timeout > 0 && b >= timeout {
		return 0
	}
	return b
}

// reduceOne reduces entry b's representative (rep) for at most limit. A variant
// is kept when it shows the signature of the entry's variant rep was chosen
// from, twice (a crash or timeout once), and fails nothing the representative
// did not fail besides: a variant that shows the signature through another
// defect is not kept. A timeout entry's variants are run under hang
// (hangBound), when it is not 0.
func (t *triage) reduceOne(ctx context.Context, o *client.Client, b *Bucket, rep *scored, limit, hang time.Duration, progress func(reduce.Stats)) *Reduced {
	start := time.Now()
	html := rep.c.html
	sig := b.rep.Signature
	allowed := map[string]bool{}
	if rep.report != nil {
		for _, g := range signatures(rep.report) {
			allowed[g.Key()] = true
		}
	}
	keeps := func(p *probe) bool {
		if !p.shows(sig) {
			return false
		}
		for k := range p.others(sig) {
			if !allowed[k] {
				return false
			}
		}
		return true
	}
	v := reduce.Variant{HTML: html}
	out := &Reduced{BytesBefore: len(html)}
	var mu sync.Mutex
	unstable := 0
	mode := hasDoctype(html)
	// A crash or timeout entry's variants are tested one at a time and kept on one
	// run. A candidate charges a crash or timeout only to a case that was alone in
	// flight (a server's rule, docs/candidate.md): a hang among four variants in
	// flight ends the process they share, each is run again alone, and the hanging
	// one costs its --candidate-timeout twice or more where one at a time costs it
	// once (ddmin takes the first interesting variant of a batch anyway). A rerun
	// would cost another --candidate-timeout for each step of a hang's reduction,
	// and the rerun is for an engine answer that changes, while this signature is
	// the candidate's own error: the confirming run of the reduced case
	// (reproduced) checks it again.
	crash := b.Severity == "crash"
	inFlight := t.cfg.parallel
	if crash {
		inFlight = 1
	}
	test := func(ctx context.Context, vs []reduce.Variant) []bool {
		ok := make([]bool, len(vs))
		var wg sync.WaitGroup
		for i, v := range vs {
			if hasDoctype(v.HTML) != mode {
				continue // cutting the doctype changes the document's mode (quirks): another page
			}
			wg.Go(func() {
				if !keeps(t.ask(ctx, o, v.HTML)) {
					return
				}
				if crash || keeps(t.ask(ctx, o, v.HTML)) {
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
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if sig.hangs() && hang > 0 {
		rctx = candidate.WithCaseBound(rctx, hang)
		out.HangBound = hang.Round(time.Millisecond).String()
	}
	best, st, ok := reduce.Reduce(rctx, v, test, reduce.Options{Parallel: inFlight, Progress: progress})
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

// causeOf is the first cause of p's report the candidate fails with a signature
// of entry b's variants.
func causeOf(p *probe, b *Bucket) *compare.Cause {
	if p == nil || p.report == nil {
		return nil
	}
	for _, v := range b.Variants {
		k := v.Signature.Key()
		for _, c := range p.report.Causes {
			if containsCandidate(c.Engines) && causeSignature(p.report, c).Key() == k {
				return &c
			}
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
