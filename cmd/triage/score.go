package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/progress"
)

type triage struct {
	cfg    config
	stderr io.Writer
}

// scored is one case's outcome.
type scored struct {
	c        tcase
	resp     *client.Response
	oracle   error // the oracle gave no answer at all
	cand     *dump.Dump
	candErr  error
	report   *compare.Report
	verdict  string // pass, fail, candidate-error, discarded, untrustworthy, no-vote
	oracleT  time.Duration
	candT    time.Duration
	errKind  string // the candidate error's kind, when it counts as a failure
	failures int    // the candidate's causes (or 1 for a counted candidate error)
}

// summary is what a run measured (DIR/summary.json, and stdout).
type summary struct {
	Cases          int            `json:"cases"`
	Skipped        int            `json:"skipped"` // scripted or non-geometry cases
	Verdicts       map[string]int `json:"verdicts"`
	Failing        int            `json:"failing"` // fail + counted candidate errors
	Causes         int            `json:"causes"`
	Buckets        int            `json:"buckets"`
	CausesPerBkt   float64        `json:"causes_per_bucket"`
	Stored         int            `json:"cases_answered_from_store"`
	ScoreSeconds   float64        `json:"score_seconds"`
	CasesPerSecond float64        `json:"cases_per_second"`
	OracleSeconds  float64        `json:"oracle_seconds"`    // summed over cases (they overlap)
	CandSeconds    float64        `json:"candidate_seconds"` // summed over cases
	OracleShare    float64        `json:"oracle_share"`
	CandShare      float64        `json:"candidate_share"`
	Reduced        []reducedStat  `json:"reduced,omitempty"`
	ReduceSeconds  float64        `json:"reduce_seconds"`
	MedianRatio    float64        `json:"median_reduced_ratio,omitempty"`
	Reproduced     int            `json:"reproduced"`
	WallSeconds    float64        `json:"wall_seconds"`
	Environment    string         `json:"candidate_environment"`
	Candidate      string         `json:"candidate"` // how it ran: the command, "server: CMD" or "webdriver: URL (...)"
	Out            string         `json:"out"`
}

type reducedStat struct {
	Rank        int     `json:"rank"`
	Signature   string  `json:"signature"`
	Cases       int     `json:"cases"`
	Causes      int     `json:"causes"`
	BytesBefore int     `json:"bytes_before"`
	BytesAfter  int     `json:"bytes_after"`
	Seconds     float64 `json:"seconds"`
	Reproduced  bool    `json:"reproduced"`
}

func (t *triage) run(ctx context.Context, cases []tcase, skipped int) (*summary, error) {
	start := time.Now()
	var results []*scored
	var err error
	if t.cfg.from != "" {
		results, err = t.rescore(cases)
	} else {
		oc, serr := client.Spawn(t.cfg.oracleBin, t.cfg.oracleArgs, client.Options{Stderr: t.cfg.oracleLog, CloseTimeout: 2 * time.Minute})
		if serr != nil {
			return nil, fmt.Errorf("the oracle: %v", serr)
		}
		results, err = t.score(ctx, oc, cases)
		oc.Close()
	}
	if err != nil {
		return nil, err
	}
	scoreSecs := time.Since(start).Seconds()
	sum := &summary{Cases: len(cases), Skipped: skipped, Verdicts: map[string]int{}, ScoreSeconds: scoreSecs, Out: t.cfg.out,
		Environment: t.cfg.envName, Candidate: t.cfg.cand.Describe()}
	bk := newBucketer()
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
			bk.add(r.c.id, len(r.c.html), r.report, r.errKind)
		}
	}
	if busy := sum.OracleSeconds + sum.CandSeconds; busy > 0 {
		sum.OracleShare, sum.CandShare = sum.OracleSeconds/busy, sum.CandSeconds/busy
	}
	sum.CasesPerSecond = float64(len(cases)) / scoreSecs
	buckets := bk.ranked()
	sum.Buckets = len(buckets)
	if len(buckets) > 0 {
		sum.CausesPerBkt = float64(sum.Causes) / float64(len(buckets))
	}
	fmt.Fprintf(t.stderr, "triage: scored %d cases in %.1fs: %s; %d causes in %d buckets\n",
		len(cases), scoreSecs, verdictText(sum.Verdicts), sum.Causes, len(buckets))

	// Written now, and again with the reductions: a long reduction interrupted
	// still leaves the ranking.
	if err := writeBuckets(filepath.Join(t.cfg.out, "buckets.json"), buckets); err != nil {
		return nil, err
	}
	if t.cfg.reduceTop > 0 && len(buckets) > 0 && ctx.Err() == nil {
		rs := time.Now()
		top := buckets[:min(t.cfg.reduceTop, len(buckets))]
		t.reduceBuckets(ctx, top, byID)
		sum.ReduceSeconds = time.Since(rs).Seconds()
		var ratios []float64
		for i, b := range top {
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
	if err := writeBuckets(filepath.Join(t.cfg.out, "buckets.json"), buckets); err != nil {
		return nil, err
	}
	if err := writeIndex(t.cfg, buckets, byID, sum); err != nil {
		return nil, err
	}
	sum.WallSeconds = time.Since(start).Seconds()
	b, _ := json.MarshalIndent(sum, "", "  ")
	if err := os.WriteFile(filepath.Join(t.cfg.out, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	return sum, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func verdictText(v map[string]int) string {
	out := ""
	for _, k := range []string{"pass", "fail", "candidate-error", "discarded", "untrustworthy", "no-vote"} {
		if v[k] > 0 {
			if out != "" {
				out += ", "
			}
			out += fmt.Sprintf("%d %s", v[k], k)
		}
	}
	return out
}

// score runs every case through the oracle and the candidate, parallel cases at
// once, writing DIR/oracle.ndjson and DIR/candidate.ndjson in corpus order.
func (t *triage) score(ctx context.Context, oc *client.Client, cases []tcase) ([]*scored, error) {
	of, err := os.Create(filepath.Join(t.cfg.out, "oracle.ndjson"))
	if err != nil {
		return nil, err
	}
	defer of.Close()
	cf, err := os.Create(filepath.Join(t.cfg.out, "candidate.ndjson"))
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
	next, written, counted := 0, 0, map[string]int{}
	last := time.Now()
	finished := make([]bool, len(cases)) // results[i] is read only once its done arrived
	for i := range done {
		bar.Add(1)
		written++
		finished[i] = true
		counted[results[i].verdict]++
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
			fmt.Fprintf(t.stderr, "triage: %d/%d cases, %.2f cases/s (%s)\n", written, len(cases),
				float64(written)/time.Since(start).Seconds(), verdictText(counted))
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

// one scores one case: the oracle's answer and the candidate's, run at once.
func (t *triage) one(ctx context.Context, oc *client.Client, c tcase, ready func()) *scored {
	r := &scored{c: c}
	var wg sync.WaitGroup
	wg.Go(func() {
		s := time.Now()
		r.cand, r.candErr = t.cfg.cand.Dump(ctx, c.html)
		r.candT = time.Since(s)
	})
	s := time.Now()
	for try := range 2 {
		r.resp, r.oracle = oc.Do(ctx, client.Request{ID: c.id, HTML: client.Str(c.html)})
		if r.oracle == nil {
			r.oracle = r.resp.Err()
		}
		if try > 0 || r.oracle != nil || len(r.resp.Errors) == 0 {
			break
		}
		ready() // an engine still starting (or relaunching) misses its deadline once
	}
	r.oracleT = time.Since(s)
	wg.Wait()
	t.judge(r)
	return r
}

// judge sets r's verdict: only a case with all three engines' dumps and a trusted
// shape is scored (compare.Geometry counts only items the engines are unanimous on
// or have a majority for); a candidate error on such a case is a failure.
func (t *triage) judge(r *scored) {
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
			r.verdict, r.failures = "candidate-error", 1
			r.errKind = "error"
			var ce *candidate.Error
			if errors.As(r.candErr, &ce) {
				r.errKind = ce.Kind
			} else if k := candidate.KindOf(r.candErr.Error()); k != "" {
				r.errKind = k // read back from an earlier run's candidate.ndjson
			}
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
	rec := map[string]any{"id": r.c.id}
	if r.candErr != nil {
		rec["error"] = r.candErr.Error()
	} else {
		rec["dump"] = r.cand
	}
	b, err := json.Marshal(rec)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"id": r.c.id, "error": err.Error()})
	}
	w.Write(append(b, '\n'))
}

func writeBuckets(path string, buckets []*Bucket) error {
	if buckets == nil {
		buckets = []*Bucket{}
	}
	b, err := json.MarshalIndent(buckets, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func (s *summary) print(w io.Writer) {
	fmt.Fprintf(w, "cases %d: %s\n", s.Cases, verdictText(s.Verdicts))
	fmt.Fprintf(w, "scoring: %.1fs, %.2f cases/s (%d answered from the store); time share: oracle %.0f%%, candidate %.0f%%\n",
		s.ScoreSeconds, s.CasesPerSecond, s.Stored, 100*s.OracleShare, 100*s.CandShare)
	fmt.Fprintf(w, "failing cases %d, causes %d, buckets %d (%.1f causes per bucket)\n", s.Failing, s.Causes, s.Buckets, s.CausesPerBkt)
	for _, r := range s.Reduced {
		fmt.Fprintf(w, "  #%d %s: %d cases, %d causes; reduced %d -> %d bytes in %.1fs, reproduced %v\n",
			r.Rank, r.Signature, r.Cases, r.Causes, r.BytesBefore, r.BytesAfter, r.Seconds, r.Reproduced)
	}
	if len(s.Reduced) > 0 {
		fmt.Fprintf(w, "reduction: %.1fs, median reduced size %.1f%% of the representative, %d of %d reproduced in a fresh oracle and candidate run\n",
			s.ReduceSeconds, 100*s.MedianRatio, s.Reproduced, len(s.Reduced))
	}
	fmt.Fprintf(w, "candidate: %s\n", s.Candidate)
	fmt.Fprintf(w, "wall %.1fs; wrote %s\n", s.WallSeconds, filepath.Join(s.Out, "index.html"))
}

// rescore is score from an earlier run's files (--from DIR): each corpus case's
// oracle answer and candidate record, found by id, judged again.
func (t *triage) rescore(cases []tcase) ([]*scored, error) {
	answers := map[string]*client.Response{}
	if err := eachLine(filepath.Join(t.cfg.from, "oracle.ndjson"), func(line []byte) error {
		var r client.Response
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		r.Raw = append(json.RawMessage(nil), line...)
		answers[displayID(r.ID)] = &r
		return nil
	}); err != nil {
		return nil, err
	}
	type record struct {
		ID    json.RawMessage `json:"id"`
		Dump  json.RawMessage `json:"dump"`
		Error *string         `json:"error"`
	}
	records := map[string]record{}
	if err := eachLine(filepath.Join(t.cfg.from, "candidate.ndjson"), func(line []byte) error {
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		records[displayID(r.ID)] = r
		return nil
	}); err != nil {
		return nil, err
	}
	results := make([]*scored, len(cases))
	for i, c := range cases {
		r := &scored{c: c, resp: answers[c.id]}
		rec, ok := records[c.id]
		switch {
		case r.resp == nil || !ok:
			return nil, fmt.Errorf("--from %s: no answer for case %q (a run on another corpus?)", t.cfg.from, c.id)
		case rec.Error != nil:
			r.candErr = errors.New(*rec.Error)
		default:
			r.cand, r.candErr = candidate.Decode(rec.Dump)
		}
		t.judge(r)
		results[i] = r
	}
	if filepath.Clean(t.cfg.from) != filepath.Clean(t.cfg.out) {
		if err := t.writeAnswers(results); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// writeAnswers writes DIR/oracle.ndjson and DIR/candidate.ndjson from results.
func (t *triage) writeAnswers(results []*scored) error {
	var ob, cb bytes.Buffer
	for _, r := range results {
		ob.Write(r.resp.Raw)
		ob.WriteByte('\n')
		writeCandidateLine(&cb, r)
	}
	return errors.Join(os.WriteFile(filepath.Join(t.cfg.out, "oracle.ndjson"), ob.Bytes(), 0o644),
		os.WriteFile(filepath.Join(t.cfg.out, "candidate.ndjson"), cb.Bytes(), 0o644))
}

func eachLine(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 512<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := f(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	return sc.Err()
}
