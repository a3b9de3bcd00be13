package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/internal/progress"
)

type triage struct {
	cfg    config
	stderr io.Writer
	sayMu  sync.Mutex // say is called from the cases' goroutines too
}

// say writes one line on stderr, made cli.Printable: a case's id, an entry's label
// and the errors come from the corpus, the candidate and the engines.
func (t *triage) say(format string, a ...any) {
	line := cli.Printable(fmt.Sprintf(format, a...))
	t.sayMu.Lock()
	defer t.sayMu.Unlock()
	fmt.Fprintln(t.stderr, line)
}

// scored is one case's outcome.
type scored struct {
	c      tcase
	resp   *client.Response
	oracle error // the oracle gave no answer at all
	// unanswered: resp is triage's own error for a case the oracle never answered
	// (--case-timeout), written to oracle.ndjson but not journaled, so that a next
	// --resume asks again.
	unanswered bool
	cand       *dump.Dump
	candErr    error
	report     *compare.Report
	verdict    string // pass, fail, candidate-error, discarded, untrustworthy, no-vote
	oracleT    time.Duration
	candT      time.Duration
	errKind    string // the candidate error's kind, when it counts as a failure
	overflow   bool   // only the candidate's page overflowed: a failure
	failures   int    // the candidate's causes (or 1 for a counted candidate error)
}

func (t *triage) run(ctx context.Context, cases []tcase, skipped int) (*summary, error) {
	start := time.Now()
	var results []*scored
	var err error
	var recheck map[int]string
	pre := map[int]*scored{}
	if t.cfg.resume {
		if pre, err = t.resumed(cases); err != nil {
			return nil, err
		}
	}
	if t.cfg.from != "" {
		if t.cfg.base != nil {
			fmt.Fprintln(t.stderr, "triage: --from: the baseline's reduced cases are not rechecked (no oracle runs on the corpus)")
		}
		results, err = t.rescore(cases)
	} else {
		oc, serr := t.spawnOracle(ctx, t.cfg.oracleArgs)
		if serr != nil {
			return nil, fmt.Errorf("the oracle: %v", serr)
		}
		if t.cfg.base != nil {
			recheck = t.recheckBaseline(ctx, oc)
		}
		results, err = t.score(ctx, oc, cases, pre)
		oc.Close()
	}
	if err != nil {
		return nil, err
	}
	scoreSecs := time.Since(start).Seconds()
	sum := &summary{Cases: len(cases), Skipped: skipped, Verdicts: map[string]int{}, ScoreSeconds: scoreSecs, Out: t.cfg.out,
		Environment: t.cfg.envName, Candidate: t.cfg.cand.Describe(), Resumed: len(pre)}
	if t.cfg.shard.n > 0 {
		sum.Shard = t.cfg.shard.String()
	}
	bk := newBucketer(t.cfg.scoring(nil))
	byID := map[string]*scored{}
	for _, r := range results {
		byID[r.c.id] = r
		sum.Verdicts[r.verdict]++
		sum.OracleSeconds += r.oracleT.Seconds()
		sum.CandSeconds += r.candT.Seconds()
		if r.resp != nil && len(r.resp.Stored) == len(r.resp.Dumps) && len(r.resp.Dumps) > 0 {
			sum.Stored++
		}
		if r.failures > 0 {
			sum.Failing++
			sum.Causes += r.failures
			bk.add(r)
		}
	}
	if busy := sum.OracleSeconds + sum.CandSeconds; busy > 0 {
		sum.OracleShare, sum.CandShare = sum.OracleSeconds/busy, sum.CandSeconds/busy
	}
	sum.CasesPerSecond = float64(len(cases)) / scoreSecs
	buckets := bk.ranked(t.cfg.aloneFirst)
	sum.Buckets = len(buckets)
	if len(buckets) > 0 {
		sum.CausesPerBkt = float64(sum.Causes) / float64(len(buckets))
	}
	t.say("triage: scored %d cases in %.1fs: %s; %d causes in %d entries",
		len(cases), scoreSecs, verdictText(sum.Verdicts), sum.Causes, len(buckets))

	// Written now, and again with the reductions: a long reduction interrupted
	// still leaves the ranking.
	var fixed []*Bucket
	if t.cfg.base != nil {
		fixed, sum.Baseline = compareBaseline(buckets, t.cfg.base, recheck)
	}
	if err := writeBuckets(t.cfg.dir, append(slices.Clone(buckets), fixed...)); err != nil {
		return nil, err
	}
	if len(buckets) > 0 && ctx.Err() == nil {
		rs := time.Now()
		t.reduceBuckets(ctx, buckets, byID)
		buckets = bk.refine(buckets, t.cfg.aloneFirst)
		sum.Buckets = len(buckets)
		sum.CausesPerBkt = float64(sum.Causes) / float64(len(buckets))
		sum.ReduceSeconds = time.Since(rs).Seconds()
		var ratios []float64
		for i, b := range buckets {
			if b.Reduced == nil || b.Reduced.Error != "" {
				continue
			}
			st := reducedStat{Rank: i + 1, Signature: b.Signature.Label(), Cases: len(b.Cases), Causes: b.Causes,
				BytesBefore: b.Reduced.BytesBefore, BytesAfter: b.Reduced.Bytes, Seconds: b.Reduced.Seconds, Reproduced: b.Reduced.Reproduced}
			sum.Reduced = append(sum.Reduced, st)
			if st.BytesBefore > 0 {
				ratios = append(ratios, float64(st.BytesAfter)/float64(st.BytesBefore))
			}
			if st.Reproduced {
				sum.Reproduced++
			}
		}
		sum.MedianRatio = median(ratios)
	}
	if t.cfg.base != nil {
		fixed, sum.Baseline = compareBaseline(buckets, t.cfg.base, recheck)
		t.say("triage: against the baseline %s: %d new, %d still, %d fixed",
			t.cfg.base.dir, sum.Baseline.New, sum.Baseline.Still, sum.Baseline.Fixed)
	}
	// The index first: it draws each reduced case's page and writes each entry's
	// folder, whose paths buckets.json then names (reduced.page, report, rerun).
	if err := writeIndex(t.cfg, buckets, fixed, byID, sum); err != nil {
		return nil, err
	}
	if err := writeBuckets(t.cfg.dir, append(slices.Clone(buckets), fixed...)); err != nil {
		return nil, err
	}
	sum.WallSeconds = time.Since(start).Seconds()
	if err := writeSummary(t.cfg.dir, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// spawnOracle starts an oracle with args. It answers ping at once while its
// engines start; one that does not within a case's deadline would hold every case,
// so that bounds the wait.
func (t *triage) spawnOracle(ctx context.Context, args []string) (*client.Client, error) {
	if t.cfg.caseFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.cfg.caseFor)
		defer cancel()
	}
	return client.Spawn(ctx, t.cfg.oracleBin, args, client.Options{Stderr: t.cfg.oracleLog, CloseTimeout: 2 * time.Minute})
}

// score runs every case through the oracle and the candidate, parallel cases at
// once, writing DIR/oracle.ndjson and DIR/candidate.ndjson in corpus order, and
// each case to the journal (answered.ndjson) as soon as it is answered. The cases
// in pre (by index, from --resume) are not run again.
func (t *triage) score(ctx context.Context, oc *client.Client, cases []tcase, pre map[int]*scored) ([]*scored, error) {
	open := t.cfg.dir.Create
	if t.cfg.resume {
		open = t.cfg.dir.Append
	}
	jf, err := open(journalName)
	if err != nil {
		return nil, err
	}
	defer jf.Close()
	if t.cfg.resume {
		jf.Write([]byte("\n")) // ends a line the interruption cut short (an empty line is skipped)
	}
	of, err := t.cfg.dir.Create("oracle.ndjson")
	if err != nil {
		return nil, err
	}
	defer of.Close()
	cf, err := t.cfg.dir.Create("candidate.ndjson")
	if err != nil {
		return nil, err
	}
	defer cf.Close()
	ow, cw := bufio.NewWriter(of), bufio.NewWriter(cf)

	results := make([]*scored, len(cases))
	done := make(chan int, len(cases))
	sem := make(chan struct{}, t.cfg.parallel)
	var wg sync.WaitGroup
	start := time.Now()
	var readyOnce sync.Once
	ready := func() { // after an engine error: wait until no engine is starting, once
		readyOnce.Do(func() {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			defer cancel()
			oc.WaitReady(rctx, time.Second)
		})
	}
	go func() { // launch, parallel at once, while the loop below reports
		for i := range cases {
			if r := pre[i]; r != nil {
				results[i] = r
				done <- i
				continue
			}
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem; done <- i }()
				results[i] = t.one(ctx, oc, cases[i], ready)
			})
		}
		wg.Wait()
		close(done)
	}()

	// Progress: a bar on a terminal, else a line every 10 s or 10% of the cases.
	bar := progress.New(t.stderr, int64(len(cases)), "triage", " cases")
	terminal := progress.Terminal(t.stderr)
	next, written, ran, counted := 0, 0, 0, map[string]int{}
	last := time.Now()
	finished := make([]bool, len(cases)) // results[i] is read only once its done arrived
	for i := range done {
		bar.Add(1)
		written++
		finished[i] = true
		counted[results[i].verdict]++
		if pre[i] == nil {
			ran++
			// Answered, not cut short by an interruption: kept for --resume.
			if r := results[i]; r.resp != nil && !r.unanswered && ctx.Err() == nil {
				if _, err := jf.Write(journalEntry(r)); err != nil {
					return nil, fmt.Errorf("%s: %v", journalName, err)
				}
			}
		}
		for next < len(cases) && finished[next] {
			r := results[next]
			if r.resp != nil {
				ow.Write(r.resp.Raw)
				ow.WriteByte('\n')
			}
			writeCandidateLine(cw, r)
			next++
		}
		if !terminal && (time.Since(last) > 10*time.Second || written%max(len(cases)/10, 1) == 0 || written == len(cases)) {
			last = time.Now()
			t.say("triage: %d/%d cases, %.2f cases/s, %s (%s)", written, len(cases),
				float64(ran)/time.Since(start).Seconds(), eta(ran, written, len(cases), time.Since(start)), verdictText(counted))
		}
	}
	bar.Finish()
	if err := errors.Join(ow.Flush(), cw.Flush()); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted after %d of %d cases", next, len(cases))
	}
	return results, nil
}

// one scores one case: the oracle's answer and the candidate's, run at once. A
// case whose request line is over the oracle's --max-line is not sent (nor given
// to the candidate): its answer is triage's refusal, no vote.
func (t *triage) one(ctx context.Context, oc *client.Client, c tcase, ready func()) *scored {
	r := &scored{c: c}
	line, err := caseLine(c)
	if err == nil && len(line) > t.cfg.maxLine {
		err = fmt.Errorf("not sent: its request line is %d bytes, over the oracle's --max-line of %d", len(line), t.cfg.maxLine)
	}
	if err != nil {
		r.resp = refusal(c, err)
		r.oracle = r.resp.Err()
		r.candErr = fmt.Errorf("not run: the case was not sent to the oracle")
		r.verdict = "no-vote"
		t.say("triage: case %s: %v", c.id, err)
		return r
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		s := time.Now()
		r.cand, r.candErr = t.cfg.cand.Dump(ctx, c.html)
		r.candT = time.Since(s)
	})
	s := time.Now()
	for try := range 2 {
		r.resp, r.oracle = t.doCase(ctx, oc, line, c.raw)
		if r.oracle == nil {
			r.oracle = r.resp.Err()
		}
		if try > 0 || r.oracle != nil || len(r.resp.Errors) == 0 {
			break
		}
		ready() // an engine still starting (or relaunching) misses its deadline once
	}
	if r.resp == nil && r.oracle != nil && ctx.Err() == nil {
		// No answer at all (past --case-timeout): oracle.ndjson and stderr say so
		// under the case's id.
		r.resp, r.unanswered = refusal(c, r.oracle), true
		t.say("triage: case %s: %v", c.id, r.oracle)
	}
	if r.resp != nil && r.resp.Line > 0 && !bytes.Equal(compactID(r.resp.ID), c.raw) {
		// The oracle refused the line unread (its id null): its answer under the
		// case's id, so that oracle.ndjson still finds the case by it.
		r.resp = refusal(c, fmt.Errorf("the oracle refused its request line %d: %s", r.resp.Line, r.resp.Error))
		r.oracle = r.resp.Err()
		t.say("triage: case %s: %s", c.id, r.resp.Error)
	}
	r.oracleT = time.Since(s)
	wg.Wait()
	t.judge(r)
	return r
}

// caseLine is c's geometry request line, its id as the corpus wrote it: json.Marshal
// would write the id's <, > and & as \u escapes, and the oracle's answer, which
// echoes the id as sent, would then not be the case's (client.StartLine matches the
// id's text).
func caseLine(c tcase) ([]byte, error) {
	return withID(c.raw, "html", c.html)
}

// refusal is the answer triage writes for a case it did not send, or the oracle did
// not answer: an error answer, as the oracle's to a request it refuses, under the
// case's id.
func refusal(c tcase, err error) *client.Response {
	raw, _ := withID(c.raw, "error", "triage: "+err.Error())
	return &client.Response{ID: c.raw, Error: "triage: " + err.Error(), Raw: raw}
}

// withID is the JSON object {"id": id, key: value}, with id's text as it is.
func withID(id json.RawMessage, key, value string) ([]byte, error) {
	v, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	return slices.Concat([]byte(`{"id":`), id, []byte(`,"`+key+`":`), v, []byte(`}`)), nil
}

// doCase sends one request line with the case deadline: past it the case has no
// answer (an oracle that never answers a line cannot hold triage).
func (t *triage) doCase(ctx context.Context, oc *client.Client, line []byte, id json.RawMessage) (*client.Response, error) {
	cctx, cancel := context.WithTimeout(ctx, t.cfg.caseFor)
	defer cancel()
	resp, err := oc.DoLine(cctx, line, id)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within --case-timeout %v", t.cfg.caseFor)
	}
	return resp, err
}

// judge sets r's verdict: only a case with all three engines' dumps and a trusted
// shape is scored (compare.Geometry counts only items the engines are unanimous on
// or have a majority for); a candidate error on such a case is a failure. A crash
// or a hang of the candidate (exit, timeout: a "crash" entry) is a failure on any
// case the oracle answered: it needs no vote to be the candidate's defect.
func (t *triage) judge(r *scored) {
	if r.candErr != nil && r.oracle == nil && r.resp != nil {
		if k := errKindOf(r.candErr); crashKind(k) {
			r.verdict, r.failures, r.errKind = "candidate-error", 1, k
			return
		}
	}
	if r.oracle != nil || r.resp == nil || len(r.resp.Dumps) < 3 || len(r.resp.Errors) > 0 {
		r.verdict = "no-vote"
		return
	}
	unstable := compare.Unstable(r.resp.Unstable)
	if r.candErr != nil {
		base, err := compare.GeometryWith(r.resp.Dumps, nil, t.cfg.scoring(unstable))
		switch {
		case err != nil || base.Verdict == compare.Untrustworthy:
			r.verdict = "untrustworthy"
		case base.Verdict == compare.Discarded:
			r.verdict = "discarded"
		default:
			r.verdict, r.failures, r.errKind = "candidate-error", 1, errKindOf(r.candErr)
		}
		return
	}
	rep, err := compare.GeometryWith(r.resp.Dumps, r.cand, t.cfg.scoring(unstable))
	if err != nil {
		// The dumps disagree on the viewport, or the candidate's is refused.
		r.candErr = fmt.Errorf("candidate: %v", err)
		r.verdict, r.failures, r.errKind = "candidate-error", 1, "dump"
		return
	}
	r.report = rep
	r.verdict = string(rep.Verdict)
	if rep.Verdict == compare.Discarded && candidateOnlyOverflow(r.resp.Dumps, r.cand) {
		// No engine's page overflows and the candidate's does: its own failure
		// (docs/triage.md, "Scoring"), with an entry of its own.
		r.verdict, r.failures, r.overflow = "candidate-overflow", 1, true
		return
	}
	if rep.Verdict == compare.Fail {
		for _, c := range rep.Causes {
			if containsCandidate(c.Engines) {
				r.failures++
			}
		}
		if r.failures == 0 { // failed items with no cause: count the case once
			r.failures = 1
		}
	}
}

// errKindOf is a candidate error's kind (candidate.Error's), "error" when it names
// none.
func errKindOf(err error) string {
	var ce *candidate.Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	if k := candidate.KindOf(err.Error()); k != "" {
		return k // read back from an earlier run's candidate.ndjson
	}
	return "error"
}

// candidateOnlyOverflow says only the candidate's page overflows: every
// engine's dump (all three voted) says it does not, and the candidate's says it
// does.
func candidateOnlyOverflow(dumps map[string]*dump.Dump, cand *dump.Dump) bool {
	if cand == nil || !cand.Overflowed || len(dumps) < 3 {
		return false
	}
	for _, d := range dumps {
		if d == nil || d.Overflowed {
			return false
		}
	}
	return true
}

func containsCandidate(engines []string) bool {
	for _, e := range engines {
		if e == candidateName {
			return true
		}
	}
	return false
}

// writeCandidateLine writes r's candidate record as cmd/compare reads it.
func writeCandidateLine(w io.Writer, r *scored) {
	w.Write(append(candidateRecord(r), '\n'))
}

// candidateRecord is r's candidate record, {"id","dump"} or {"id","error"}.
func candidateRecord(r *scored) []byte {
	rec := map[string]any{"id": r.c.raw}
	if r.candErr != nil {
		rec["error"] = r.candErr.Error()
	} else {
		rec["dump"] = r.cand
	}
	b, err := json.Marshal(rec)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"id": r.c.raw, "error": err.Error()})
	}
	return b
}

func writeBuckets(d *outdir.Dir, buckets []*Bucket) error {
	if buckets == nil {
		buckets = []*Bucket{}
	}
	b, err := json.MarshalIndent(buckets, "", " ")
	if err != nil {
		return err
	}
	return d.WriteFile("buckets.json", append(b, '\n'))
}
