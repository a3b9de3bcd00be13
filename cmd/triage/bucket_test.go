package main

// Pure tests of the command's parts (no browser): the reports are built by hand.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/candidate"
)

func pTaller(node int, delta float64) *compare.Report {
	return &compare.Report{Verdict: compare.Fail,
		Findings: []compare.Finding{{Node: node, Tag: "P", Property: "bounding.h", Delta: delta}, {Node: node, Tag: "P", Property: "rects[1].h", Delta: delta}},
		Causes: []compare.Cause{{Node: node, Tag: "P", Kind: compare.CauseLayout, Engines: []string{"candidate"},
			Items: []compare.ItemRef{{Node: node, Property: "bounding.h"}, {Node: node, Property: "rects[1].h"}, {Node: node + 1, Property: "offset.y"}}, Explains: 3}}}
}

// sc is a scored case for the bucketer: its id, size, report and candidate error.
func sc(id string, size int, r *compare.Report, errKind string) *scored {
	return &scored{c: tcase{id: id, html: strings.Repeat("x", size)}, report: r, errKind: errKind}
}

func TestOneDefectIsOneBucket(t *testing.T) {
	b := newBucketer(compare.Options{})
	b.add(sc("a", 300, pTaller(2, 3), ""))
	b.add(sc("b", 100, pTaller(5, 3.5), "")) // another node, another fragment count: the same defect
	b.add(sc("c", 50, pTaller(2, -3), ""))   // shorter: another defect
	b.add(sc("d", 10, nil, "timeout"))
	style := &compare.Report{Verdict: compare.Fail,
		StyleFindings: []compare.StyleFinding{{Node: 1, Tag: "BR", Property: "style.display", Want: "inline", Got: "block"}},
		Causes: []compare.Cause{{Node: 1, Tag: "BR", Kind: compare.CauseStyle, Engines: []string{"firefox", "candidate"},
			Items: []compare.ItemRef{{Node: 1, Property: "style.display"}}, Explains: 1}}}
	b.add(sc("e", 20, style, ""))
	b.add(sc("f", 20, &compare.Report{Causes: []compare.Cause{{Node: 1, Tag: "BR", Engines: []string{"firefox"}, Kind: compare.CauseStyle}}}, ""))
	r := b.ranked(false)
	require.Len(t, r, 4)
	assert.Equal(t, "candidate error: timeout", r[0].Signature.Label(), "a crash or timeout ranks first")
	assert.Equal(t, "crash", r[0].Severity)
	assert.Equal(t, "layout P bounding.h +", r[1].Signature.Label())
	assert.Equal(t, []string{"a", "b"}, r[1].Cases)
	assert.Equal(t, 2, r[1].Fixes)
	assert.Equal(t, "b", r[1].Representative, "the smallest case")
	assert.Equal(t, 6, r[1].Items)
	assert.Equal(t, []string{}, r[1].AgreeingEngines)
	labels := []string{r[2].Signature.Label(), r[3].Signature.Label()}
	assert.ElementsMatch(t, []string{"layout P bounding.h -", "style BR display=block"}, labels)
	assert.True(t, shows(r[1].Variants[0].Signature, pTaller(9, 1), "", false))
	assert.False(t, shows(r[1].Variants[0].Signature, pTaller(9, -1), "", false))
	assert.True(t, shows(Signature{Kind: "error", Error: "timeout"}, nil, "timeout", false))
	assert.True(t, shows(Signature{Kind: "overflow"}, nil, "", true))
	assert.False(t, shows(r[1].Variants[0].Signature, pTaller(9, 1), "", true), "an overflowed page shows only its overflow")
}

// cause is a one-item candidate cause on node 1 with a finding of delta d.
func cause(kind compare.CauseKind, tag, prop string, d float64) (compare.Cause, compare.Finding) {
	return compare.Cause{Node: 1, Tag: tag, Kind: kind, Engines: []string{"candidate"}, Items: []compare.ItemRef{{Node: 1, Property: prop}}, Explains: 1},
		compare.Finding{Node: 1, Tag: tag, Property: prop, Delta: d}
}

func failing(cs ...func() (compare.Cause, compare.Finding)) *compare.Report {
	r := &compare.Report{Verdict: compare.Fail}
	for i, f := range cs {
		c, fi := f()
		c.Node, fi.Node = i+1, i+1
		c.Items[0].Node = i + 1
		r.Causes = append(r.Causes, c)
		r.Findings = append(r.Findings, fi)
	}
	return r
}

func of(kind compare.CauseKind, tag, prop string, d float64) func() (compare.Cause, compare.Finding) {
	return func() (compare.Cause, compare.Finding) { return cause(kind, tag, prop, d) }
}

// A text width wrong either way is one entry with two variants; ranking is by the
// cases a fix makes pass: an entry that covers more cases but never alone (each
// of its cases also has another failure) ranks after the one whose fix passes cases.
func TestEntriesFoldSignsAndRankByCasesFixed(t *testing.T) {
	b := newBucketer(compare.Options{})
	wider, narrower := of(compare.CauseText, "SPAN", "bounding.w", 2), of(compare.CauseText, "SPAN", "bounding.w", -2)
	margin := of(compare.CauseLayout, "DIV", "offset.y", 4)
	b.add(sc("1", 10, failing(wider), ""))
	b.add(sc("2", 10, failing(narrower), ""))
	b.add(sc("3", 10, failing(margin, wider), ""))
	b.add(sc("4", 10, failing(margin, narrower), ""))
	b.add(sc("5", 10, failing(margin, wider), ""))
	b.add(sc("6", 10, failing(margin), ""))
	r := b.ranked(false)
	require.Len(t, r, 2)
	assert.Equal(t, "text SPAN bounding.w", r[0].Signature.Label(), "one entry whatever the sign")
	assert.Len(t, r[0].Variants, 2)
	assert.Equal(t, 2, r[0].Fixes, "cases 1 and 2 pass with it alone")
	assert.Equal(t, "layout DIV offset.y +", r[1].Signature.Label())
	assert.Equal(t, 4, r[1].Fixes, "then cases 3-6")
	assert.Contains(t, r[0].Trigger, "width wrong, either way")
}

// Two defects that share all their cases rank above a one-case entry, though
// neither fix alone makes a case pass: the greedy counts each case 1/its unfixed
// entries before it counts passes (a pass-first greedy put the one case first).
func TestSharedDefectsRankAboveALoneCase(t *testing.T) {
	b := newBucketer(compare.Options{})
	margin, tall := of(compare.CauseStyle, "P", "style.margin-top", 0), of(compare.CauseLayout, "P", "bounding.h", 3)
	for i := range 6 {
		b.add(sc(strconv.Itoa(i), 10, failing(margin, tall), ""))
	}
	b.add(sc("lone", 10, failing(of(compare.CauseLayout, "DIV", "bounding.w", 2)), ""))
	r := b.ranked(false)
	require.Len(t, r, 3)
	assert.Equal(t, 0, r[0].Fixes, "the first of the two passes nothing alone")
	assert.Equal(t, 6, r[1].Fixes, "the second passes all six")
	assert.Equal(t, "layout DIV bounding.w +", r[2].Signature.Label())
	assert.Equal(t, 1, r[2].Fixes)
}

// A size first seen in style.width keeps its sign.
func TestStyleWidthKeepsItsSign(t *testing.T) {
	r := &compare.Report{Verdict: compare.Fail,
		StyleFindings: []compare.StyleFinding{{Node: 1, Tag: "TD", Property: "style.width", Want: "100px", Got: "96px"}},
		Causes: []compare.Cause{{Node: 1, Tag: "TD", Kind: compare.CauseLayout, Engines: []string{"candidate"},
			Items: []compare.ItemRef{{Node: 1, Property: "style.width"}}, Explains: 1}}}
	assert.Equal(t, "layout TD bounding.w -", causeSignature(r, r.Causes[0]).Label())
}

func TestCandidateOnlyOverflow(t *testing.T) {
	d := func(over bool) *dump.Dump { return &dump.Dump{Overflowed: over} }
	engines := map[string]*dump.Dump{"chromium": d(false), "firefox": d(false), "webkit": d(false)}
	assert.True(t, candidateOnlyOverflow(engines, d(true)))
	assert.False(t, candidateOnlyOverflow(engines, d(false)))
	engines["webkit"] = d(true)
	assert.False(t, candidateOnlyOverflow(engines, d(true)), "an engine overflows too: discarded")
}

func TestToReduceTakesCrashesBeyondN(t *testing.T) {
	e := []*Bucket{{Severity: "failure"}, {Severity: "failure"}, {Severity: "crash"}}
	assert.Equal(t, []*Bucket{e[2], e[0]}, toReduce(e, 1))
	assert.Equal(t, []*Bucket{e[2]}, toReduce(e, 0))
	assert.Len(t, toReduce(e, -1), 3)
}

func TestSameValue(t *testing.T) {
	assert.True(t, sameValue("18", "18.01", 0.02))
	assert.False(t, sameValue("18", "19", 0.02))
	assert.True(t, sameValue("16px", "16px", 0))
	assert.False(t, sameValue("block", "inline", 0))
}

func TestCorpusRefusesURLCasesAndSkipsScripted(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":"a","html":"<p>"}`+"\n"+`{"id":"s","html":"<p>","script":"1"}`+"\n"+`{"id":2,"op":"reflect","html":"x"}`+"\n"), 0o644))
	cs, skipped, err := readCorpus([]string{f})
	require.NoError(t, err)
	assert.Equal(t, 2, skipped)
	assert.Equal(t, []tcase{{id: "a", raw: json.RawMessage(`"a"`), html: "<p>"}}, cs)

	require.NoError(t, os.WriteFile(f, []byte(`{"id":"u","url":"/x.html"}`+"\n"), 0o644))
	_, _, err = readCorpus([]string{f})
	require.ErrorContains(t, err, "a url case: triage needs inline html")

	require.NoError(t, os.WriteFile(f, []byte(`{"id":"a","html":"<p>"}`+"\n"+`{"id":"a","html":"<b>"}`+"\n"), 0o644))
	_, _, err = readCorpus([]string{f})
	require.ErrorContains(t, err, `id "a" already at c.ndjson:1`)

	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitBadInput, run([]string{"--out", dir, f}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--candidate-cmd is required")
}

func TestCandidateEnvPrintsExports(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"candidate-env"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "export FONTCONFIG_FILE='")
	assert.Contains(t, stdout.String(), "export TZ='UTC'")
	stdout.Reset()
	require.Equal(t, 3, run([]string{"candidate-env", "sh", "-c", `printf %s "$LC_ALL"; exit 3`}, &stdout, &stderr))
	assert.Equal(t, "en_US.UTF-8", stdout.String())
}

// An oracle with no engine answers no case: that is no score, not a pass. (A unit
// test of triage: the oracle is a stand-in that answers ping and every case with
// no engine's answer.)
func TestNoVoteIsNotAPass(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":"a","html":"<p>"}`+"\n"), 0o644))
	noEngine := fakeOracle(t, dir, "no-engine-oracle", `    if r.get("op") == "shutdown":
        print(json.dumps({"id": r["id"], "ok": True}), flush=True)
        break
    print(json.dumps({"id": r["id"], "dumps": {}}), flush=True)
`)
	var stdout, stderr bytes.Buffer
	code := run([]string{"--candidate-cmd", "cat", "--out", filepath.Join(dir, "out"), "--oracle", noEngine, "--reduce=0", f}, &stdout, &stderr)
	assert.Equal(t, exitBadInput, code, "%s", stderr.String())
	assert.Contains(t, stderr.String(), "gave no case a three-engine vote")
	assert.Contains(t, stdout.String(), "cases 1: 1 no-vote")

	// An "oracle" that exits at once (/bin/true) is said to have exited, before any
	// case is sent.
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"--candidate-cmd", "cat", "--out", filepath.Join(dir, "out2"), "--oracle", "/bin/true", "--reduce=0", f}, &stdout, &stderr)
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, stderr.String(), "the oracle: oracle exited (exit status 0)")
}

// A crash or a hang of the candidate is a failure on a case the engines could not
// vote on (an engine failed): before, such a case was no-vote and the crash was
// counted nowhere. Its other errors still need the vote. A unit test of judge.
func TestACrashNeedsNoVote(t *testing.T) {
	noVote := &client.Response{Dumps: map[string]*dump.Dump{}, Errors: map[string]string{"webkit": "page crashed"}}
	for kind, want := range map[string]string{"exit": "candidate-error", "timeout": "candidate-error", "dump": "no-vote", "output": "no-vote"} {
		r := &scored{resp: noVote, candErr: &candidate.Error{Kind: kind, Msg: "x"}}
		(&triage{}).judge(r)
		assert.Equal(t, want, r.verdict, kind)
		if want == "candidate-error" {
			assert.Equal(t, 1, r.failures, kind)
			assert.Equal(t, kind, r.errKind)
		}
	}
	r := &scored{oracle: errors.New("no answer within --case-timeout 1s"), resp: noVote, candErr: &candidate.Error{Kind: "exit", Msg: "x"}}
	(&triage{}).judge(r)
	assert.Equal(t, "no-vote", r.verdict, "the oracle never answered: the case is not judged")
}

func TestHasDoctype(t *testing.T) {
	assert.True(t, hasDoctype("<!DOCTYPE html><p>"))
	assert.True(t, hasDoctype("\n <!-- c --> <!doctype html>"))
	assert.False(t, hasDoctype("<p>no doctype</p>"))
	assert.False(t, hasDoctype("<!-- unterminated"))
}

// Tags of one display type fold into one entry; the evidence of reduction then
// splits a tag the swap did not confirm and merges entries whose reduced cases
// are the same page.
func TestRefineSplitsAndMerges(t *testing.T) {
	b := newBucketer(compare.Options{})
	p, div := of(compare.CauseLayout, "P", "bounding.h", 3), of(compare.CauseLayout, "DIV", "bounding.h", 3)
	pw := of(compare.CauseLayout, "P", "bounding.h", -2)
	b.add(sc("1", 10, failing(p), ""))
	b.add(sc("2", 10, failing(p), ""))
	b.add(sc("3", 10, failing(div), ""))
	b.add(sc("4", 10, failing(pw), ""))
	r := b.ranked(false)
	require.Len(t, r, 2, "P and DIV heights are one entry before any evidence (no display known: one type)")
	assert.Equal(t, []string{"P", "DIV"}, r[0].Signature.Tags)
	r[0].Reduced = &Reduced{HTML: "<p>x</p>", Reproduced: true}
	r[1].Reduced = &Reduced{HTML: "<p>x</p>\n", Reproduced: true}
	r[0].split = []*Variant{r[0].Variants[1]} // DIV did not fail in the swapped case
	r = b.refine(r, false)
	require.Len(t, r, 2, "%v", r)
	assert.Equal(t, "layout P bounding.h", r[0].Signature.Label(), "its variants differ in sign")
	assert.Equal(t, []string{"layout P bounding.h -"}, r[0].Merged, "the same reduced page")
	assert.Len(t, r[0].Variants, 2)
	assert.Equal(t, "layout DIV bounding.h +", r[1].Signature.Label())

	// Another kind on the same page (a wrong margin where the height is wrong
	// too) stays an entry of its own.
	b.add(sc("5", 10, failing(of(compare.CauseStyle, "P", "style.margin-top", 0)), ""))
	r = b.ranked(false)
	for _, e := range r {
		e.Reduced = &Reduced{HTML: "<p>x</p>", Reproduced: true}
	}
	assert.Len(t, b.refine(r, false), len(r)-1, "only the two P heights fold")
	assert.Equal(t, "<div class=a>x</div><pre>", swapTag("<P class=a>x</p><pre>", "p", "DIV"), "P swapped, PRE kept")
}

// An entry shown only through another's defect folds into it: a TH padding
// defect (its reduced table fails nothing else) shows as the TD's width in some
// of its cases, whose reduced case keeps the TH padding failure. Two defects on
// one box, each reduced case holding the other's failure, stay two entries.
func TestRefineFoldsAConsequenceIntoItsCause(t *testing.T) {
	b := newBucketer(compare.Options{})
	th, td := of(compare.CauseStyle, "TH", "style.padding-top", 0), of(compare.CauseText, "TD", "bounding.w", -4)
	margin, tall := of(compare.CauseStyle, "P", "style.margin-top", 0), of(compare.CauseLayout, "P", "bounding.h", 3)
	b.add(sc("1", 10, failing(th, td), ""))
	b.add(sc("2", 10, failing(th, td), ""))
	b.add(sc("3", 10, failing(th), ""))
	b.add(sc("4", 10, failing(margin, tall), ""))
	b.add(sc("5", 10, failing(margin, tall), ""))
	r := b.ranked(false)
	require.Len(t, r, 4)
	label := map[string]*Bucket{}
	for _, e := range r {
		label[e.Signature.Label()] = e
	}
	require.Contains(t, label, "style TH padding")
	require.Contains(t, label, "text TD bounding.w -")
	label["style TH padding"].Reduced = &Reduced{HTML: "<table><th></th></table>", Reproduced: true}
	label["text TD bounding.w -"].Reduced = &Reduced{HTML: "<table><th></th><td>x</td></table>", Reproduced: true,
		OtherFailures: []string{"style TH padding"}}
	label["style P margin"].Reduced = &Reduced{HTML: "<p>x</p>", Reproduced: true, OtherFailures: []string{"layout P bounding.h +"}}
	label["layout P bounding.h +"].Reduced = &Reduced{HTML: "<p>y</p>", Reproduced: true, OtherFailures: []string{"style P margin"}}
	r = b.refine(r, false)
	require.Len(t, r, 3, "%v", r)
	assert.Equal(t, "style TH padding", r[0].Signature.Label())
	assert.Equal(t, []string{"text TD bounding.w -"}, r[0].Merged)
	assert.Len(t, r[0].Variants, 2)
	assert.Equal(t, []string{"1", "2", "3"}, r[0].Cases)
}

func TestWithoutAuthorCSS(t *testing.T) {
	assert.Equal(t, `<style></style><p>x</p><div id=a>y</div>`,
		withoutAuthorCSS(`<style>p{color:red}</style><p style="margin:1px">x</p><div id=a style='x'>y</div>`))
	assert.Equal(t, "<STYLE type=text/css></STYLE>", withoutAuthorCSS("<STYLE type=text/css><![CDATA[ p{} ]]></STYLE>"))
}

// Entries whose reduced cases the candidate lays out as the engines do without
// their author CSS are one stylesheet-parsing entry.
func TestRefineFoldsStylesheetParsing(t *testing.T) {
	b := newBucketer(compare.Options{})
	b.add(sc("1", 10, failing(of(compare.CauseLayout, "P", "bounding.h", 3)), ""))
	b.add(sc("2", 10, failing(of(compare.CauseLayout, "SPAN", "bounding.w", -5)), ""))
	b.add(sc("3", 10, failing(of(compare.CauseLayout, "B", "offset.y", 2)), ""))
	r := b.ranked(false)
	require.Len(t, r, 3)
	r[0].stylesheet, r[2].stylesheet = true, true
	r = b.refine(r, false)
	require.Len(t, r, 2)
	assert.Len(t, r[0].Variants, 2)
	assert.Contains(t, r[0].Trigger, "stylesheet parsing")
	assert.Len(t, r[0].Merged, 1)
}

// A candidate that gives Firefox's value where Firefox is outvoted has Firefox
// among its agreeing engines; a value of its own has none. A unit test of the
// bucketer over three real engines' dumps (testdata/compare/oracle-paragraphs.ndjson,
// written by bin/oracle), the candidate being Firefox's dump, then edited.
func TestAgreeingEngines(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/compare/oracle-paragraphs.ndjson")
	require.NoError(t, err)
	var resp client.Response
	require.NoError(t, json.Unmarshal(raw, &resp))
	cand := func(edit func(*dump.Dump)) *dump.Dump {
		b, err := json.Marshal(resp.Dumps["firefox"])
		require.NoError(t, err)
		var d dump.Dump
		require.NoError(t, json.Unmarshal(b, &d))
		d.Engine = "candidate"
		edit(&d)
		return &d
	}
	opts := compare.Options{Tolerance: dump.DefaultTolerance}
	score := func(d *dump.Dump) *scored {
		rep, err := compare.GeometryWith(resp.Dumps, d, opts)
		require.NoError(t, err)
		return &scored{c: tcase{id: "p", html: "x"}, resp: &resp, cand: d, report: rep}
	}
	b := newBucketer(opts)
	b.add(score(cand(func(*dump.Dump) {}))) // Firefox's own SPAN height, where Firefox is outvoted
	r := b.ranked(false)
	require.Len(t, r, 1, "%+v", r)
	assert.Equal(t, "SPAN", r[0].Signature.Tag)
	assert.Equal(t, []string{"firefox"}, r[0].AgreeingEngines)

	b = newBucketer(opts)
	b.add(score(cand(func(d *dump.Dump) {
		for i := range d.Nodes {
			if d.Nodes[i].Tag == "SPAN" {
				d.Nodes[i].Bounding.H += 5
				for j := range d.Nodes[i].Rects {
					d.Nodes[i].Rects[j].H += 5
				}
			}
		}
	})))
	r = b.ranked(false)
	require.Len(t, r, 1, "%+v", r)
	assert.Equal(t, []string{}, r[0].AgreeingEngines, "the candidate alone")

	// Ranked alone first (triage's default), an entry of the candidate's own
	// comes before one a real engine shares, though the shared one has more cases.
	taller := func(tag string) func(*dump.Dump) {
		return func(d *dump.Dump) {
			for i := range d.Nodes {
				if d.Nodes[i].Tag == tag {
					d.Nodes[i].Bounding.H += 5
					for j := range d.Nodes[i].Rects {
						d.Nodes[i].Rects[j].H += 5
					}
				}
			}
		}
	}
	b = newBucketer(opts)
	for _, id := range []string{"p1", "p2", "p3"} {
		s := score(cand(func(*dump.Dump) {}))
		s.c.id = id
		b.add(s)
	}
	s := score(cand(taller("P")))
	s.c.id = "own"
	b.add(s)
	label := func(r []*Bucket) []string {
		var out []string
		for _, e := range r {
			out = append(out, e.Signature.Label())
		}
		return out
	}
	byCover := b.ranked(false)
	require.GreaterOrEqual(t, len(byCover), 2, "%v", label(byCover))
	assert.Equal(t, []string{"firefox"}, byCover[0].AgreeingEngines, "by cover alone, the shared entry's four cases come first: %v", label(byCover))
	alone := b.ranked(true)
	assert.Equal(t, []string{}, alone[0].AgreeingEngines, "alone first: %v", label(alone))
	assert.Equal(t, "P", alone[0].Signature.Tag)
	assert.Equal(t, []string{"firefox"}, alone[len(alone)-1].AgreeingEngines)
}

// A timeout entry's variants get three times the 95th percentile of the run's
// answers (at least 2 s), never the time of a case that hung or one that waited
// beside a hang, and never as much as the candidate's own timeout.
func TestHangBound(t *testing.T) {
	byID := map[string]*scored{
		"a": {cand: &dump.Dump{}, candT: 2 * time.Second},
		"b": {cand: &dump.Dump{}, candT: time.Second},
		"h": {candErr: errors.New("candidate timeout"), candT: 30 * time.Second},
	}
	assert.Equal(t, 6*time.Second, hangBound(byID, 30*time.Second), "under 20 answers, the slowest")
	assert.Equal(t, time.Duration(0), hangBound(byID, 6*time.Second), "not below the candidate's timeout: none")
	byID["a"].candT = 100 * time.Millisecond
	assert.Equal(t, 3*time.Second, hangBound(byID, 30*time.Second))
	byID["b"].candT = 100 * time.Millisecond
	assert.Equal(t, 2*time.Second, hangBound(byID, 30*time.Second), "at least 2 s")
	for i := range 40 {
		byID[strconv.Itoa(i)] = &scored{cand: &dump.Dump{}, candT: 2 * time.Second}
	}
	byID["beside"] = &scored{cand: &dump.Dump{}, candT: 32 * time.Second} // waited for the hang's timeout, then ran alone
	assert.Equal(t, 6*time.Second, hangBound(byID, 30*time.Second), "one case beside a hang does not set it")
	assert.Equal(t, time.Duration(0), hangBound(map[string]*scored{"r": {cand: &dump.Dump{}}}, 30*time.Second), "no answer timed (a resumed run)")
}
