package probes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

// Engine statuses.
const (
	StatusOK      = "ok"
	StatusError   = "error"   // the engine answered with an error: a harness failure
	StatusTimeout = "timeout" // the trace ended by the recorder's timeout, not the probe's trace.done(): a harness failure
	StatusSkipped = "skipped" // the profile does not support the probe
)

// engineResult is one engine's outcome on one probe.
type engineResult struct {
	Status  string `json:"status"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"` // the error, the timeout, or why skipped
}

// pair is one engine pair's agreement on a probe's result.
type pair struct {
	A      string `json:"a"`
	B      string `json:"b"`
	Agree  bool   `json:"agree"`
	Detail string `json:"detail,omitempty"` // the first difference(s), when they disagree
}

// Result is one probe's outcome across the engines.
type Result struct {
	Probe   string                  `json:"probe"`
	Kind    kind                    `json:"kind"`
	Engines map[string]engineResult `json:"engines"`
	// Pairs is every pair of engines that both answered, in engine order.
	Pairs []pair `json:"pairs"`
	// Vote is the three-way vote over the engines that answered (vote.None when the
	// probe was skipped).
	Vote vote.Result `json:"vote"`
	// Skipped says why the probe did not run, when it did not.
	Skipped string `json:"skipped,omitempty"`
	// Failed: some engine errored or timed out on a probe the profile supports.
	Failed bool     `json:"failed"`
	Notes  []string `json:"notes,omitempty"`
	TookMS int64    `json:"took_ms"`
}

// RunProbe runs one probe on engines and evaluates it.
func RunProbe(ctx context.Context, o *oracle.Oracle, p probe, engines []string, profile string) Result {
	engines = ordered(engines)
	r := Result{Probe: p.Name, Kind: p.kind(), Engines: map[string]engineResult{}, Pairs: []pair{}}
	versions := map[string]string{}
	if ping, ok := o.Handle(ctx, &oracle.Request{ID: json.RawMessage(`"probe-ping"`), Op: oracle.OpPing}).(oracle.PingResponse); ok {
		versions = ping.Versions
	}
	if p.Profile != "" && p.Profile != profile {
		r.Skipped = fmt.Sprintf("needs --profile=%s (running %s)", p.Profile, profile)
		for _, e := range engines {
			r.Engines[e] = engineResult{Status: StatusSkipped, Version: versions[e], Error: r.Skipped}
		}
		r.Vote = vote.Result{Kind: vote.None}
		return r
	}

	req := p.Request
	req.ID, _ = json.Marshal("probe-" + p.Name)
	req.Engines = engines
	start := time.Now()
	resp := o.Handle(ctx, &req)
	r.TookMS = time.Since(start).Milliseconds()
	judge(&r, p, engines, resp, versions)
	return r
}

// judge fills r from resp, the oracle's answer to p on engines: each engine's
// status, the pairs and the vote, and a note per engine that is not ok.
func judge(r *Result, p probe, engines []string, resp any, versions map[string]string) {
	fail := func(e, status, msg string) {
		r.Engines[e] = engineResult{Status: status, Version: versions[e], Error: msg}
		r.Failed = true
	}
	ok := func(e string) { r.Engines[e] = engineResult{Status: StatusOK, Version: versions[e]} }

	switch resp := resp.(type) {
	case oracle.CaseResponse:
		ev := evaluatorFor(resp.KindName())
		answers := map[string]any{}
		for _, e := range engines {
			v := resp.EngineAnswer(e)
			switch {
			case resp.EngineError(e) != "":
				fail(e, StatusError, resp.EngineError(e))
			case v == nil:
				fail(e, StatusError, ev.missing)
			default:
				status, msg := StatusOK, ""
				if ev.check != nil {
					status, msg = ev.check(p, e, v)
				}
				if status == StatusOK {
					ok(e)
				} else {
					fail(e, status, msg)
				}
				answers[e] = v // a failed check's answer is still voted: it is evidence
			}
		}
		ev.eval(r, answers)
	case oracle.ErrorResponse:
		for _, e := range engines {
			fail(e, StatusError, "request refused: "+resp.Error)
		}
		r.Vote = vote.Result{Kind: vote.None}
	default:
		for _, e := range engines {
			fail(e, StatusError, fmt.Sprintf("unexpected response %T", resp))
		}
		r.Vote = vote.Result{Kind: vote.None}
	}
	for _, e := range engines {
		if s := r.Engines[e]; s.Status != StatusOK {
			r.Notes = append(r.Notes, fmt.Sprintf("%s %s: %s", e, s.Status, firstLine(s.Error)))
		}
	}
}

// evaluator is how the probes judge one request kind's answers: what an engine
// without an answer is told, the per-engine check of an answer (nil: every answer
// is ok), and the pairwise comparison and vote over the answers.
type evaluator struct {
	missing string
	check   func(p probe, engine string, v any) (status, msg string)
	eval    func(r *Result, answers map[string]any)
}

// evaluators are the kinds the probes know by name (oracle.CaseResponse.KindName).
// A kind not here is voted whole by its answers' JSON (evaluatorFor), so a new
// request kind needs no edit in this package to run as a probe.
var evaluators = map[string]evaluator{
	"trace":    {missing: "no trace", check: checkTrace, eval: evalOf(evalTrace)},
	"geometry": {missing: "no dump", eval: evalOf(evalGeometry)},
	"reflect":  {missing: "no state", eval: evalOf(evalReflect)},
}

func evaluatorFor(kind string) evaluator {
	if ev, ok := evaluators[kind]; ok {
		return ev
	}
	return evaluator{missing: "no " + kind + " answer", eval: evalJSON}
}

// evalOf adapts an evaluation of one kind's answers (all T's) to any answers.
func evalOf[T any](f func(*Result, map[string]T)) func(*Result, map[string]any) {
	return func(r *Result, answers map[string]any) {
		typed := make(map[string]T, len(answers))
		for e, v := range answers {
			typed[e] = v.(T)
		}
		f(r, typed)
	}
}

// checkTrace fails a trace that timed out or that p.Expect finds wrong.
func checkTrace(p probe, engine string, v any) (string, string) {
	t := v.(*trace.Trace)
	if t.TimedOut {
		return StatusTimeout, fmt.Sprintf("trace timed out after %d records: the probe never reached trace.done()", len(t.Records))
	}
	if wrong := expect(p, engine, t); len(wrong) > 0 {
		return StatusError, p.Name + ": " + strings.Join(wrong, "; ")
	}
	return StatusOK, ""
}

// evalJSON votes answers of a kind the probes do not know: two agree when their
// JSON is the same.
func evalJSON(r *Result, answers map[string]any) {
	text := map[string]string{}
	for e, v := range answers {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte("unencodable: " + err.Error())
		}
		text[e] = string(b)
	}
	same := func(a, b string) (bool, string) {
		if a == b {
			return true, ""
		}
		return false, "answers differ"
	}
	r.Pairs = pairs(text, same)
	r.Vote = vote.Vote(text, func(a, b string) bool { return a == b })
}

// expect is what p.Expect finds wrong with engine's trace (nothing without one).
func expect(p probe, engine string, t *trace.Trace) []string {
	if p.Expect == nil {
		return nil
	}
	return p.Expect(engine, t)
}

// pairs calls agree on every pair of engines present in values, in engine order.
func pairs[T any](values map[string]T, agree func(a, b T) (bool, string)) []pair {
	names := ordered(slices.Collect(maps.Keys(values)))
	out := []pair{}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			ok, detail := agree(values[names[i]], values[names[j]])
			p := pair{A: names[i], B: names[j], Agree: ok}
			if !ok {
				p.Detail = detail
			}
			out = append(out, p)
		}
	}
	return out
}

// evalTrace votes the traces of the engines that applied the same emulation set
// (compare.ComparableEngines): an engine that emulated other hardware is noted as
// not comparable, never outvoted.
func evalTrace(r *Result, all map[string]*trace.Trace) {
	sets := map[string][]string{}
	for e, t := range all {
		sets[e] = t.Emulated
	}
	voters, apart := compare.ComparableEngines(sets)
	traces := map[string]*trace.Trace{}
	for _, e := range voters {
		traces[e] = all[e]
	}
	for _, e := range apart {
		r.Notes = append(r.Notes, fmt.Sprintf("%s not comparable: it emulated %s, the voters (%s) %s", e,
			compare.EmulationText(sets[e]), strings.Join(voters, ", "), compare.EmulationText(sets[voters[0]])))
	}
	tol := trace.DefaultBufferTolerance
	r.Pairs = pairs(traces, func(a, b *trace.Trace) (bool, string) {
		c := trace.Compare(a, b, tol)
		var parts []string
		for i, f := range c.Findings {
			if i == 2 {
				parts = append(parts, fmt.Sprintf("(%d findings)", len(c.Findings)))
				break
			}
			parts = append(parts, describeFinding(f, a))
		}
		return c.Equal, strings.Join(parts, "; ")
	})
	v := compare.Traces(traces, tol)
	r.Vote = v.Whole
	for _, p := range r.Pairs {
		if !p.Agree {
			r.Notes = append(r.Notes, fmt.Sprintf("%s vs %s: %s", p.A, p.B, p.Detail))
		}
	}
	if v.CountsAgree && r.Vote.Kind != vote.Unanimous && r.Vote.Kind != vote.Agree {
		var any *trace.Trace
		for _, t := range traces {
			any = t
			break
		}
		for _, rv := range v.Records {
			if rv.Kind != vote.Unanimous && rv.Kind != vote.Agree {
				desc := string(rv.Kind)
				if rv.Outlier != "" {
					desc += ", outlier " + rv.Outlier
				}
				r.Notes = append(r.Notes, fmt.Sprintf("record %d (%s): %s%s", rv.Seq, any.Records[rv.Seq].Label, desc, showValues(traces, rv.Seq)))
			}
		}
	}
	bufferDiffs(r, traces)
}

// showValues renders each engine's value at a record position, when none is a
// buffer and each is short: what the engines actually said, not only that they
// differ.
func showValues(traces map[string]*trace.Trace, seq int) string {
	var parts []string
	for _, e := range ordered(slices.Collect(maps.Keys(traces))) {
		v := traces[e].Records[seq].Value
		if len(v) > 300 || bytes.Contains(v, []byte(`"$buffer"`)) || bytes.Contains(v, []byte(`"$audioBuffer"`)) {
			return ""
		}
		parts = append(parts, e+" "+string(v))
	}
	return ": " + strings.Join(parts, ", ")
}

// bufferDiffs notes, per engine pair, the largest sample difference over the
// probe's buffers, compared with no tolerance at all: how close "agree" was.
func bufferDiffs(r *Result, traces map[string]*trace.Trace) {
	names := ordered(slices.Collect(maps.Keys(traces)))
	var parts []string
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			a, b := traces[names[i]], traces[names[j]]
			if len(a.Records) != len(b.Records) {
				continue
			}
			found, max := false, 0.0
			for k := range a.Records {
				if !bytes.Contains(a.Records[k].Value, []byte(`"base64"`)) {
					continue
				}
				found = true
				for _, f := range trace.CompareRecords(k, &a.Records[k], &b.Records[k], trace.BufferTolerance{}) {
					if f.Kind == trace.MismatchBuffer && f.MaxAbsDiff > max {
						max = f.MaxAbsDiff
					}
				}
			}
			if found {
				parts = append(parts, fmt.Sprintf("%s-%s %.3g", names[i], names[j], max))
			}
		}
	}
	if len(parts) > 0 {
		tol := trace.DefaultBufferTolerance
		r.Notes = append(r.Notes, fmt.Sprintf("buffers, max |diff| with no tolerance: %s (tolerance: float %g abs + %g rel, integer %g levels)",
			strings.Join(parts, ", "), tol.Absolute, tol.Relative, tol.Integer))
	}
}

// describeFinding renders a trace finding, naming the record's label.
func describeFinding(f trace.Finding, t *trace.Trace) string {
	s := f.String()
	if f.Seq >= 0 && f.Seq < len(t.Records) {
		s = strings.Replace(s, fmt.Sprintf("record %d", f.Seq), fmt.Sprintf("record %d (%s)", f.Seq, t.Records[f.Seq].Label), 1)
	}
	return s
}

func evalGeometry(r *Result, dumps map[string]*dump.Dump) {
	tol := dump.DefaultTolerance
	r.Pairs = pairs(dumps, func(a, b *dump.Dump) (bool, string) {
		rep, err := compare.Dumps(a, b, tol)
		if err != nil {
			return false, err.Error()
		}
		if rep.Verdict == compare.Pass {
			return true, ""
		}
		detail := string(rep.Verdict)
		if rep.Reason != "" {
			detail += ": " + rep.Reason
		}
		for _, f := range rep.Worst(2) {
			if !f.Within {
				detail += fmt.Sprintf("; node %d %s %s: %g vs %g", f.Node, f.Tag, f.Property, f.Want, f.Got)
			}
		}
		for i, f := range rep.StyleFindings {
			if i == 2 {
				break
			}
			detail += fmt.Sprintf("; node %d %s %s: %q vs %q", f.Node, f.Tag, f.Property, f.Want, f.Got)
		}
		return false, detail
	})
	rep, err := compare.Geometry(dumps, nil, tol)
	if err != nil {
		r.Vote = vote.Result{Kind: vote.Split}
		r.Notes = append(r.Notes, "compare.Geometry refused the dumps: "+err.Error())
		return
	}
	r.Vote = geometryVote(rep, ordered(slices.Collect(maps.Keys(dumps))))
	var counts []string
	for _, k := range []vote.Kind{vote.Unanimous, vote.Majority, vote.Split, vote.Agree, vote.Disagree, vote.Single} {
		if n := rep.Votes[k]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(counts) > 0 {
		r.Notes = append(r.Notes, "per-item votes: "+strings.Join(counts, ", "))
	}
	for _, ol := range rep.Outliers {
		r.Notes = append(r.Notes, fmt.Sprintf("outlier %s on %s (%d items)", ol.Engine, ol.Property, ol.Count))
	}
	if rep.Verdict == compare.Discarded || rep.Verdict == compare.Untrustworthy {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %s", rep.Verdict, rep.Reason))
	}
}

// geometryVote reduces compare.Geometry's per-item votes to one vote on the probe:
// unanimous when the shape and every item were, a majority when every outvoted item
// has the same outlier, split otherwise.
func geometryVote(rep *compare.Report, engines []string) vote.Result {
	if rep.Verdict == compare.Discarded || rep.Verdict == compare.Untrustworthy {
		return vote.Result{Kind: vote.Split}
	}
	if rep.Votes[vote.Split] > 0 || rep.Votes[vote.Disagree] > 0 {
		return vote.Result{Kind: vote.Split}
	}
	outliers := map[string]bool{}
	for _, ol := range rep.Outliers {
		outliers[ol.Engine] = true
	}
	switch len(outliers) {
	case 0:
		// Every item agreed: the same kind as a vote where every pair agrees.
		return vote.Vote(mapOf(engines), func(a, b string) bool { return true })
	case 1:
		var out string
		for e := range outliers {
			out = e
		}
		var maj []string
		for _, e := range engines {
			if e != out {
				maj = append(maj, e)
			}
		}
		return vote.Result{Kind: vote.Majority, Majority: maj, Outlier: out}
	}
	return vote.Result{Kind: vote.Split}
}

// evalReflect compares the states pairwise and votes them whole, two states agreeing
// when reflection.Compare finds no difference; a pair's detail is its first difference.
func evalReflect(r *Result, states map[string]*reflection.State) {
	agree := func(a, b *reflection.State) (bool, string) {
		diffs, err := reflection.Compare(a, b)
		switch {
		case err != nil:
			return false, err.Error()
		case len(diffs) > 0:
			return false, diffs[0].String()
		}
		return true, ""
	}
	r.Pairs = pairs(states, agree)
	r.Vote = vote.Vote(states, func(a, b *reflection.State) bool { ok, _ := agree(a, b); return ok })
	for _, p := range r.Pairs {
		if !p.Agree {
			r.Notes = append(r.Notes, fmt.Sprintf("%s vs %s: %s", p.A, p.B, p.Detail))
		}
	}
}

// ordered sorts engine names in browser.AllEngines order.
func ordered(names []string) []string {
	rank := map[string]int{}
	for i, e := range browser.AllEngines {
		rank[e] = i + 1
	}
	out := append([]string(nil), names...)
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i]] < rank[out[j]] })
	return out
}

func mapOf(names []string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m[n] = n
	}
	return m
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Failures names the probes that failed (an engine errored or timed out).
func Failures(results []Result) []string {
	var out []string
	for _, r := range results {
		if r.Failed {
			out = append(out, r.Probe)
		}
	}
	return out
}
