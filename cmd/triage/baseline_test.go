package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
)

// The tests in this file are unit tests of triage's own code: they rescore
// hand-written answers (--from: the three engines' dumps of
// testdata/compare/oracle-one.ndjson, and a candidate that is their dump with
// planted differences), so no engine runs. baseline_browser_test.go is the same
// story against the real engines.

// fromDir writes an earlier run's answers for the one case "only": the engines'
// fixture, and the fixture's dump with each planted defect applied (taller: the
// second DIV 5px taller; wider: the first DIV 7px wider).
func fromDir(t *testing.T, defects ...string) string {
	t.Helper()
	fixtures := "../../testdata/compare/"
	oracleLine, err := os.ReadFile(fixtures + "oracle-one.ndjson")
	require.NoError(t, err)
	b, err := os.ReadFile(fixtures + "bare.json")
	require.NoError(t, err)
	var d dump.Dump
	require.NoError(t, json.Unmarshal(b, &d))
	for _, name := range defects {
		switch name {
		case "taller":
			d.Nodes[3].Bounding.H += 5
			d.Nodes[3].Rects[0].H += 5
		case "wider":
			d.Nodes[2].Bounding.W += 7
			d.Nodes[2].Rects[0].W += 7
		default:
			t.Fatalf("no defect %q", name)
		}
	}
	rec, err := json.Marshal(map[string]any{"id": "only", "dump": d})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "oracle.ndjson"), oracleLine, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "candidate.ndjson"), append(rec, '\n'), 0o644))
	return dir
}

type runOut struct {
	code           int
	stdout, stderr string
	buckets        []Bucket
	sum            summary
}

func triageFrom(t *testing.T, from, out, html string, extra ...string) runOut {
	t.Helper()
	line, err := json.Marshal(map[string]string{"id": "only", "html": html})
	require.NoError(t, err)
	corpus := writeCorpus(t, t.TempDir(), string(line)+"\n")
	args := append([]string{"--candidate-cmd", "true", "--candidate-env", "host", "--oracle", "/nonexistent/oracle",
		"--reduce", "0", "--from", from, "--out", out}, extra...)
	var stdout, stderr bytes.Buffer
	r := runOut{code: run(append(args, corpus), &stdout, &stderr), stdout: stdout.String(), stderr: stderr.String()}
	if b, err := os.ReadFile(filepath.Join(out, "buckets.json")); err == nil {
		require.NoError(t, json.Unmarshal(b, &r.buckets), "%s", b)
	}
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err == nil {
		require.NoError(t, json.Unmarshal(b, &r.sum))
	}
	return r
}

// Across builds: {taller, wider}, then {wider} and a new one... with one case
// there are only two defects to plant, so: {taller}, then {taller, wider} against
// it (wider new, taller still, exit 1), then {wider} against the first ({taller}
// fixed, wider new), then {taller} against the second (taller still, wider fixed,
// exit 0). Entries match by their signatures, not their ranks.
func TestBaselineStatusesByIdentity(t *testing.T) {
	first := filepath.Join(t.TempDir(), "first")
	r := triageFrom(t, fromDir(t, "taller"), first, "<div></div>")
	require.Equal(t, exitFail, r.code, r.stderr)
	require.Len(t, r.buckets, 1)
	assert.Empty(t, r.buckets[0].Status, "no baseline, no status")

	second := filepath.Join(t.TempDir(), "second")
	r = triageFrom(t, fromDir(t, "taller", "wider"), second, "<div></div>", "--baseline", first)
	require.Equal(t, exitFail, r.code, "an entry is new: %s", r.stderr)
	status := map[string]string{}
	for _, b := range r.buckets {
		status[strings.Join(b.Signature.Props, ",")] = b.Status
	}
	assert.Equal(t, map[string]string{"bounding.h": "still", "bounding.w": "new"}, status)
	require.NotNil(t, r.sum.Baseline)
	assert.Equal(t, baselineCounts{Dir: first, New: 1, Still: 1}, *r.sum.Baseline)

	r = triageFrom(t, fromDir(t, "wider"), filepath.Join(t.TempDir(), "third"), "<div></div>", "--baseline", first)
	require.Equal(t, exitFail, r.code, r.stderr)
	require.Len(t, r.buckets, 2)
	assert.Equal(t, "new", r.buckets[0].Status)
	assert.Equal(t, []string{"bounding.w"}, r.buckets[0].Signature.Props)
	assert.Equal(t, "fixed", r.buckets[1].Status, "the baseline's entry that no longer fails, listed after")
	assert.Equal(t, []string{"bounding.h"}, r.buckets[1].Signature.Props)
	assert.Equal(t, 1, r.buckets[1].BaselineRank)
	assert.Empty(t, r.buckets[1].Rerun, "a fixed entry has no folder here")
	assert.Contains(t, r.stderr, "no oracle runs on the corpus", "--from: nothing to recheck with")

	r = triageFrom(t, fromDir(t, "taller"), filepath.Join(t.TempDir(), "fourth"), "<div></div>", "--baseline", second)
	assert.Equal(t, exitOK, r.code, "nothing new, though taller still fails: %s", r.stderr)
	assert.Equal(t, baselineCounts{Dir: second, Still: 1, Fixed: 1}, *r.sum.Baseline)
	index, err := os.ReadFile(filepath.Join(r.sum.Out, "index.html"))
	require.NoError(t, err)
	assert.Contains(t, string(index), "Fixed since the baseline")

	// The baseline's cases are rechecked first, an entry not reduced by the
	// representative its entry.json holds: here through an oracle that never
	// answers (a fake), so the recheck cannot judge, and the run has no vote.
	dir := t.TempDir()
	corpus := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(corpus, []byte(`{"id":"only","html":"<div></div>"}`+"\n"), 0o644))
	var stdout, stderr bytes.Buffer
	code := run([]string{"--candidate-cmd", "true", "--candidate-env", "host", "--oracle", silentOracle(t, dir), "--case-timeout=4s",
		"--reduce=0", "--baseline", first, "--out", filepath.Join(dir, "out"), corpus}, &stdout, &stderr)
	assert.Equal(t, exitBadInput, code, "no vote: %s", &stderr)
	assert.Contains(t, stderr.String(), "rechecking its entries' 1 cases (reduced, else representative)")
	assert.Contains(t, stderr.String(), "baseline entry #1 layout DIV bounding.h +: cannot judge in this build (the oracle gave no answer)")

	// A baseline that is not an earlier run is a usage error, named.
	for _, tc := range []struct{ name, buckets string }{{"missing", ""}, {"not JSON", "{"}, {"no variants", `[{"signature":{"kind":"layout"}}]`}} {
		dir := t.TempDir()
		if tc.buckets != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "buckets.json"), []byte(tc.buckets), 0o644))
		}
		r := triageFrom(t, fromDir(t, "taller"), filepath.Join(t.TempDir(), "x"), "<div></div>", "--baseline", dir)
		assert.Equal(t, exitBadInput, r.code, tc.name)
		assert.Contains(t, r.stderr, "--baseline "+dir, tc.name)
	}
}

// Each entry's folder: buckets.json names report.md and rerun.sh, and a hostile
// case id and html neither leave --out nor script report.md: every value in it is
// escaped, the html sits in a code fence nothing in it closes.
func TestEntryFilesEscapeHostileValues(t *testing.T) {
	hostileHTML := "<div></div>\n```\n<script>alert(1)</script>\n````"
	out := filepath.Join(t.TempDir(), "it's $(echo out)")
	r := triageFrom(t, fromDir(t, "taller"), out, hostileHTML)
	require.Equal(t, exitFail, r.code, r.stderr)
	require.Len(t, r.buckets, 1)
	assert.Equal(t, "entries/1/report.md", r.buckets[0].Report)
	assert.Equal(t, "entries/1/rerun.sh", r.buckets[0].Rerun)
	md, err := os.ReadFile(filepath.Join(out, "entries", "1", "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "`````html\n"+hostileHTML+"\n`````\n", "a fence longer than any backtick run in the case")
	outside := strings.Replace(string(md), "`````html\n"+hostileHTML+"\n`````\n", "", 1)
	assert.NotContains(t, outside, "<script", "no raw tag outside the fence")
	assert.Contains(t, string(md), "| **bounding.h** |", "the values table, the failed item in bold")
	st, err := os.Stat(filepath.Join(out, "entries", "1", "rerun.sh"))
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&0o100, "rerun.sh is executable")
	var ef entryFile
	b, err := os.ReadFile(filepath.Join(out, "entries", "1", "entry.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ef))
	assert.Equal(t, hostileHTML, ef.HTML, "not reduced: the representative")
	assert.Equal(t, "only", ef.Case)
	assert.Equal(t, candidateSpec{Mode: "cmd", Command: "true", Environment: "host", Timeout: "30s"}, ef.Candidate)
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	assert.NotContains(t, string(index), "<script>alert")
	i, j := strings.Index(string(index), "<th>largest delta</th>"), strings.Index(string(index), `<h2 id="b1">`)
	require.Positive(t, i)
	assert.Less(t, i, j, "the overview table comes first")
	assert.Contains(t, string(index), "<code>sh entries/1/rerun.sh</code>")
	assert.Contains(t, string(index), "&#43;5.000 px (bounding.h)", "the largest delta (html/template escapes the +)")

	for _, s := range []string{"a|b", "<x>", "`c`", "*d*\n# e", "[l](javascript:x)"} {
		esc := mdText(s)
		assert.NotContains(t, esc, "\n", s)
		for _, c := range "|<`*[" {
			assert.Equal(t, strings.Count(esc, string(c)), strings.Count(esc, `\`+string(c)), "%q: every %c escaped", s, c)
		}
	}
}

// rerun.sh passes every path as one word, whatever it holds, and its argument
// as the candidate; with none, it runs from the run's directory. A fake triage
// (a script printing its arguments and directory) stands in for the binary.
func TestRerunScriptQuotesEverything(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's $(echo no) `x`")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "entries", "3"), 0o755))
	fake := filepath.Join(dir, "tri'age")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\npwd\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\nexit 1\n"), 0o755))
	oracle := filepath.Join(dir, "or acle;rm")
	work := filepath.Join(dir, "work $HOME")
	require.NoError(t, os.Mkdir(work, 0o755))
	script := filepath.Join(dir, "entries", "3", "rerun.sh")
	require.NoError(t, os.WriteFile(script, []byte(rerunScript(fake, oracle, work, 3)), 0o755))
	out, err := exec.Command("sh", script).Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the fake's exit status comes back")
	assert.Equal(t, 1, ee.ExitCode())
	entry := filepath.Join(dir, "entries", "3")
	assert.Equal(t, fmt.Sprintf("%s\n[rerun]\n[--oracle]\n[%s]\n[--]\n[%s]\n", work, oracle, entry), string(out))
	out, _ = exec.Command("sh", script, "my engine --flag 'x'").Output()
	assert.Contains(t, string(out), fmt.Sprintf("[%s]\n[my engine --flag 'x']\n", entry))
	assert.NotContains(t, string(out), work+"\n", "a given candidate runs from the caller's directory")
}

// rerunVerdict: 1 while a signature shows, 0 when the engines voted and it does
// not, 2 when it cannot say.
func TestRerunVerdict(t *testing.T) {
	sig := Signature{Kind: "layout", Tag: "DIV", Props: []string{"bounding.h"}, Sign: "+"}
	crash := Signature{Kind: "error", Error: "exit"}
	voted := &client.Response{}
	cases := []struct {
		name string
		p    *probe
		sigs []Signature
		code int
	}{
		{"no answer", &probe{}, []Signature{sig}, exitBadInput},
		{"no vote", &probe{resp: voted, verdict: "untrustworthy"}, []Signature{sig}, exitBadInput},
		{"another crash", &probe{resp: voted, errKind: "exit"}, []Signature{sig}, exitBadInput},
		{"its crash", &probe{resp: voted, errKind: "exit"}, []Signature{crash}, exitFail},
		{"overflow", &probe{resp: voted, overflow: true}, []Signature{sig}, exitBadInput},
		{"passes", &probe{resp: voted, report: &compare.Report{Verdict: compare.Pass}, verdict: "pass"}, []Signature{sig}, exitOK},
	}
	for _, c := range cases {
		code, why := rerunVerdict(c.p, c.sigs)
		assert.Equal(t, c.code, code, "%s: %s", c.name, why)
	}
}

// --shard I/N: N shards of a corpus hold every case once, the same on every call.
func TestShardsSplitTheCorpus(t *testing.T) {
	var cases []tcase
	for i := range 50 {
		cases = append(cases, tcase{id: fmt.Sprint(i), raw: json.RawMessage(fmt.Sprintf("%q", fmt.Sprint("case-", i)))})
	}
	seen := map[string]int{}
	for i := 1; i <= 3; i++ {
		part := shard{i, 3}.of(cases)
		assert.NotEmpty(t, part)
		assert.Equal(t, part, shard{i, 3}.of(cases))
		for _, c := range part {
			seen[c.id]++
		}
	}
	assert.Len(t, seen, 50)
	for id, n := range seen {
		assert.Equal(t, 1, n, id)
	}
	for _, bad := range []string{"0/3", "4/3", "1", "a/b", "1/0", "-1/2"} {
		_, err := parseShard(bad)
		assert.Error(t, err, bad)
	}
}

// --resume: the cases the journal holds are not run again (the candidate, which
// logs each run, runs for the other case only), and the run's files hold both. An
// oracle that never answers (a fake) leaves that other case with no vote; the
// journaled one is scored from its answers.
func TestResumeRunsOnlyWhatTheJournalLacks(t *testing.T) {
	dir := t.TempDir()
	from := fromDir(t, "taller")
	silent := silentOracle(t, dir)
	out := filepath.Join(dir, "out")
	require.NoError(t, os.MkdirAll(out, 0o755))
	oracleLine, err := os.ReadFile(filepath.Join(from, "oracle.ndjson"))
	require.NoError(t, err)
	candLine, err := os.ReadFile(filepath.Join(from, "candidate.ndjson"))
	require.NoError(t, err)
	j, err := json.Marshal(journalLine{Oracle: bytes.TrimSpace(oracleLine), Candidate: bytes.TrimSpace(candLine)})
	require.NoError(t, err)
	// The journal: the first case, then a line cut short by the interruption.
	require.NoError(t, os.WriteFile(filepath.Join(out, journalName), append(append(j, '\n'), []byte(`{"oracle":{"id":"b","dum`)...), 0o644))
	corpus := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(corpus, []byte(`{"id":"only","html":"<div></div>"}`+"\n"+`{"id":"b","html":"<b>"}`+"\n"), 0o644))
	ran := filepath.Join(dir, "ran")
	var stdout, stderr bytes.Buffer
	code := run([]string{"--candidate-cmd", "cat >> " + ran + "; echo >> " + ran, "--candidate-env", "host", "--out", out, "--oracle", silent,
		"--case-timeout=4s", "--reduce=0", "--resume", corpus}, &stdout, &stderr)
	t.Logf("stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	assert.Equal(t, exitFail, code, "the journaled case fails as it did")
	b, err := os.ReadFile(ran)
	require.NoError(t, err)
	assert.Equal(t, "<b>\n", string(b), "the candidate ran for the other case only")
	assert.Contains(t, stderr.String(), "--resume: skipped 1 unreadable lines")
	assert.Contains(t, stderr.String(), "--resume: 1 of 2 cases answered by the interrupted run")
	assert.Contains(t, stdout.String(), "cases 2: 1 fail, 1 no-vote")
	o, err := os.ReadFile(filepath.Join(out, "oracle.ndjson"))
	require.NoError(t, err)
	assert.Equal(t, string(bytes.TrimSpace(oracleLine))+"\n"+`{"id":"b","error":"triage: no answer within --case-timeout 4s"}`+"\n", string(o),
		"the journaled answer, byte for byte, then triage's error for the other case")
	jb, err := os.ReadFile(filepath.Join(out, journalName))
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(jb, []byte(`"oracle":`)), "the other case had no answer: not journaled, so a next --resume runs it again")
	assert.True(t, bytes.HasSuffix(jb, []byte("\n")), "a line cut short is ended before the journal goes on")
}
