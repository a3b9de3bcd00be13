package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle"
)

// The ids 1 and "1" are two cases, and each is written back as the corpus wrote
// it. Before, the second was refused as a duplicate and 1 was sent and written as
// "1". No engine.
func TestCorpusKeepsNumericAndStringIDsApart(t *testing.T) {
	f := filepath.Join(t.TempDir(), "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":1,"html":"<p>"}`+"\n"+`{"id":"1","html":"<b>"}`+"\n"+`{"id":"x","html":"<i>"}`+"\n"), 0o644))
	cs, _, err := readCorpus([]string{f})
	require.NoError(t, err)
	require.Len(t, cs, 3)
	assert.Equal(t, []string{"1", `"1"`, "x"}, []string{cs[0].id, cs[1].id, cs[2].id}, "display names stay unique")
	assert.Equal(t, []string{"1", `"1"`, `"x"`}, []string{string(cs[0].raw), string(cs[1].raw), string(cs[2].raw)})
	line, err := caseLine(cs[0])
	require.NoError(t, err)
	assert.Equal(t, `{"id":1,"html":"\u003cp\u003e"}`, string(line))
	var b bytes.Buffer
	writeCandidateLine(&b, &scored{c: cs[0], candErr: &testError{"x"}})
	assert.Equal(t, `{"error":"x","id":1}`+"\n", b.String())

	require.NoError(t, os.WriteFile(f, []byte(`{"id":[1],"html":"<p>"}`+"\n"), 0o644))
	_, _, err = readCorpus([]string{f})
	assert.ErrorContains(t, err, "must be a string or a number")
}

type testError struct{ s string }

func (e *testError) Error() string { return e.s }

func TestOracleMaxLineIsReadFromItsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, client.DefaultMaxLine},
		{[]string{"--store=off", "--max-line=500"}, 500},
		{[]string{"-max-line", "700", "--pages=1"}, 700},
		{[]string{"--max-line=500", "--max-line=0"}, client.DefaultMaxLine},
		{[]string{"--max-lines=5"}, client.DefaultMaxLine},
	} {
		got, err := oracleMaxLine(tc.args)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, got, "%v", tc.args)
	}
	_, err := oracleMaxLine([]string{"--max-line=lots"})
	assert.Error(t, err)
	assert.Equal(t, oracle.DefaultMaxLine, client.DefaultMaxLine, "the client's copy of the oracle's default")
}

// A summary that cannot be JSON is an error; before, summary.json was written
// empty. No engine.
func TestWriteSummaryRefusesANonFiniteMeasure(t *testing.T) {
	dir, err := outdir.Open(t.TempDir())
	require.NoError(t, err)
	defer dir.Close()
	path := dir.Join("summary.json")
	err = writeSummary(dir, &summary{Verdicts: map[string]int{}, CasesPerSecond: math.Inf(1)})
	assert.ErrorContains(t, err, "summary.json")
	assert.NoFileExists(t, path)
}

// A reduced case's page that cannot be written fails index.html's writing; before,
// the error was dropped and the bucket simply had no page. No engine: a fake
// confirming answer.
func TestWriteIndexReportsAPageItCannotWrite(t *testing.T) {
	out := t.TempDir()
	// The page's path is taken by a directory.
	require.NoError(t, os.MkdirAll(filepath.Join(out, "reduced", "cases", "000001.html", "x"), 0o755))
	b := &Bucket{Signature: EntrySignature{Kind: "error", Error: "timeout"}, Cases: []string{"a"}, Representative: "a",
		Reduced: &Reduced{HTML: "<p>", Bytes: 3, BytesBefore: 10}}
	b.confirm = &probe{resp: &client.Response{Dumps: map[string]*dump.Dump{}}, report: &compare.Report{Verdict: compare.Fail}}
	dir, err := outdir.Open(out)
	require.NoError(t, err)
	defer dir.Close()
	err = writeIndex(config{out: out, dir: dir, tol: 0.5}, []*Bucket{b}, nil, nil, &summary{Verdicts: map[string]int{}})
	assert.ErrorContains(t, err, "entry 1's reduced case")
}

// fakeOracle writes a fake oracle, a Python script, into dir as name: it answers
// ping with no engine, and runs onCase (Python, indented four spaces, with line the
// request line as read and r its object) for every other line.
func fakeOracle(t *testing.T, dir, name, onCase string) string {
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(`#!/usr/bin/env python3
import json, re, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("op") == "ping":
        print(json.dumps({"id": r["id"], "ok": True, "protocol": 1, "engines": []}), flush=True)
        continue
`+onCase), 0o755))
	return path
}

// silentOracle writes a fake oracle into dir that answers ping, then reads every
// line and answers none.
func silentOracle(t *testing.T, dir string) string {
	return fakeOracle(t, dir, "silent-oracle", "")
}

// Ids are unique as JSON values, as a reader in Python or JavaScript compares them:
// 1, 1.0 and 1e0 are one id, as are "a" and "\u0061", and a duplicate is refused.
// Before, each spelling was a case of its own; and 1e400, a number too large for a
// float64, was refused as no number. No engine.
func TestIDsAreUniqueAsJSONValues(t *testing.T) {
	for _, same := range [][2]string{{`1`, `1.0`}, {`1`, `1e0`}, {`100`, `1E+2`}, {`0`, `-0`}, {`0.5`, `5e-1`},
		{`"a"`, `"\u0061"`}, {`1e400`, `10e399`}} {
		assert.Equal(t, idValue(json.RawMessage(same[0])), idValue(json.RawMessage(same[1])), "%s and %s", same[0], same[1])
	}
	for _, other := range [][2]string{{`1`, `"1"`}, {`12345678901234567890`, `12345678901234567891`}, {`1`, `-1`},
		{`1e400`, `1e401`}, {`0.1`, `1`}} {
		assert.NotEqual(t, idValue(json.RawMessage(other[0])), idValue(json.RawMessage(other[1])), "%s and %s", other[0], other[1])
	}
	f := filepath.Join(t.TempDir(), "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":1,"html":"<p>"}`+"\n"+`{"id":1.0,"html":"<b>"}`+"\n"), 0o644))
	_, _, err := readCorpus([]string{f})
	assert.ErrorContains(t, err, "id 1.0 already at")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":1e400,"html":"<p>"}`+"\n"), 0o644))
	cs, _, err := readCorpus([]string{f})
	require.NoError(t, err)
	assert.Equal(t, "1e400", string(cs[0].raw))
}

// An oracle that never answers a case (a fake: it answers ping, then reads every
// line and answers none) cannot hold triage: each case has a deadline, past which
// it has no vote. Before, triage waited forever. One that answers not even ping
// is Spawn's error within the same deadline. The deadline (5 s) leaves the fake,
// a Python script, time to start on a loaded machine: it also bounds the wait
// for its ping, and at 1 s it missed that at a load average of 28.
func TestACaseTheOracleNeverAnswersEndsAtItsDeadline(t *testing.T) {
	dir := t.TempDir()
	silent := silentOracle(t, dir)
	mute := filepath.Join(dir, "mute-oracle")
	require.NoError(t, os.WriteFile(mute, []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755))
	f := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":"a","html":"<p>"}`+"\n"+`{"id":2,"html":"<b>"}`+"\n"), 0o644))
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run([]string{"--candidate-cmd", "cat", "--out", filepath.Join(dir, "out"), "--oracle", silent,
		"--case-timeout=5s", "--reduce=0", f}, &stdout, &stderr)
	assert.Equal(t, exitBadInput, code, "%s", stderr.String())
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Contains(t, stdout.String(), "cases 2: 2 no-vote", stderr.String())
	// Each says so, on stderr and in oracle.ndjson, under its id.
	assert.Contains(t, stderr.String(), "triage: case a: no answer within --case-timeout 5s")
	assert.Contains(t, stderr.String(), "triage: case 2: no answer within --case-timeout 5s")
	answers, err := os.ReadFile(filepath.Join(dir, "out", "oracle.ndjson"))
	require.NoError(t, err)
	assert.Contains(t, string(answers), `{"id":"a","error":"triage: no answer within --case-timeout 5s"}`)
	assert.Contains(t, string(answers), `{"id":2,"error":"triage: no answer within --case-timeout 5s"}`)

	stdout.Reset()
	stderr.Reset()
	start = time.Now()
	code = run([]string{"--candidate-cmd", "cat", "--out", filepath.Join(dir, "out2"), "--oracle", mute,
		"--case-timeout=5s", "--reduce=0", f}, &stdout, &stderr)
	assert.NotEqual(t, exitOK, code)
	assert.Less(t, time.Since(start), 30*time.Second)
	assert.Contains(t, stderr.String(), "the oracle: ")
}

// Against the real engines, a corpus with a case over the oracle's --max-line:
// given as an --oracle-flag, triage refuses the case before sending it; set where
// triage cannot see it (a wrapper), the oracle refuses the line and the client
// hands the refusal to the case. Either way the run ends, the case has no vote,
// the others are scored, and ids 1 and "1" come back as written, to a --from
// rescoring too. Before, the first never ended.
func TestTriageOfACaseOverMaxLine(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	oracleBin := buildOracle(t, dir)
	wrapper := filepath.Join(dir, "oracle-small-lines")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+oracleBin+" --max-line=2000 \"$@\"\n"), 0o755))
	long := "<!doctype html><p>" + strings.Repeat("x", 3000)
	lines := []string{`{"id":1,"html":"<!doctype html><p style=\"height:10px\"></p>"}`,
		`{"id":"1","html":"<!doctype html><div style=\"height:20px\"></div>"}`,
		`{"id":"long","html":"` + long + `"}`}
	corpus := writeCorpus(t, dir, strings.Join(lines, "\n")+"\n")
	for _, tc := range []struct{ name, oracle, flag, why string }{
		{"flag", oracleBin, "--oracle-flag=--max-line=2000", "over the oracle's --max-line of 2000"},
		{"unseen", wrapper, "--oracle-flag=--log-level=error", "request line exceeds the maximum of 2000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			args := []string{"--oracle", tc.oracle, "--oracle-flag=--store=off", "--oracle-flag=--pages=1", tc.flag,
				"--reduce=0", "--case-timeout=3m", "--candidate-cmd", "cat >/dev/null; echo '{}'", "--out", out, corpus}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			done := make(chan int, 1)
			go func() { done <- run(args, &stdout, &stderr) }()
			select {
			case code := <-done:
				t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
				assert.Equal(t, exitFail, code, "the candidate's {} is no dump: a candidate error on each voted case")
			case <-ctx.Done():
				t.Fatal("triage did not end")
			}
			assert.Contains(t, stdout.String(), "cases 3: 2 candidate-error, 1 no-vote")
			oracleOut, err := os.ReadFile(filepath.Join(out, "oracle.ndjson"))
			require.NoError(t, err)
			got := strings.Split(strings.TrimSpace(string(oracleOut)), "\n")
			require.Len(t, got, 3, "%s", oracleOut)
			assert.True(t, strings.HasPrefix(got[0], `{"id":1,`), got[0])
			assert.True(t, strings.HasPrefix(got[1], `{"id":"1",`), got[1])
			var refused client.Response
			require.NoError(t, json.Unmarshal([]byte(got[2]), &refused))
			assert.Contains(t, refused.Error, tc.why)
			cand, err := os.ReadFile(filepath.Join(out, "candidate.ndjson"))
			require.NoError(t, err)
			assert.Contains(t, string(cand), `"id":1}`)
			assert.Contains(t, string(cand), `"id":"1"}`)

			// Scored again from the files: the ids find their answers.
			stdout.Reset()
			stderr.Reset()
			code := run([]string{"--oracle", tc.oracle, "--from", out, "--reduce=0", "--candidate-cmd", "true", "--out", out + "-again", corpus}, &stdout, &stderr)
			assert.Equal(t, exitFail, code, "%s", stderr.String())
			assert.Contains(t, stdout.String(), "cases 3: 2 candidate-error, 1 no-vote")
		})
	}
}

// leftPIDs is the pids listed in file (one a line) whose process is still there
// and not a zombie.
func leftPIDs(t *testing.T, file string) (all, left []string) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, pid := range strings.Fields(string(b)) {
		all = append(all, pid)
		if st, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(st), ") Z") {
			left = append(left, pid+": "+string(st))
		}
	}
	return all, left
}

// SetsidCandidate is a candidate whose every run leaves a child in a session of
// its own, sleeping, its pid appended to pids; it answers {} (no dump).
func setsidCandidate(pids string) string {
	return `setsid sh -c 'cut -d" " -f4 /proc/self/stat >> ` + pids + `; exec sleep 120' & cat >/dev/null; echo '{}'`
}

// Against the real engines: a candidate whose runs each fork a setsid child that
// sleeps leaves none behind, after scoring and after reducing its bucket (checked
// by pid). Before, every run left one (a process group kill misses them).
func TestTriageLeavesNoCandidateProcess(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	oracleBin := buildOracle(t, dir)
	corpus := writeCorpus(t, dir, `{"id":"a","html":"<!doctype html><div><p style=\"height:10px\">x</p><b>y</b></div>"}`+"\n")
	pids := filepath.Join(dir, "pids")
	var stdout, stderr bytes.Buffer
	code := run([]string{"--oracle", oracleBin, "--oracle-flag=--store=off", "--oracle-flag=--pages=1", "--reduce=1",
		"--reduce-timeout=1m", "--candidate-cmd", setsidCandidate(pids), "--out", filepath.Join(dir, "out"), corpus}, &stdout, &stderr)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout.String(), "cases 1: 1 candidate-error")
	assert.Contains(t, stderr.String(), "triage: entry 1/1 candidate error: dump")
	all, left := leftPIDs(t, pids)
	assert.Greater(t, len(all), 2, "the candidate ran for the case, the reduction and the confirmation")
	assert.Empty(t, left, "candidate children outlived triage")
}

// hangingServer is a --candidate-server that writes each case's HTML it reads,
// JSON-quoted, a line each, to log, hangs on any case holding HANG, and answers
// every other case with an error.
func hangingServer(t *testing.T, dir, log string) string {
	t.Helper()
	script := filepath.Join(dir, "hang.py")
	require.NoError(t, os.WriteFile(script, []byte(`import json, sys, time
log = open(sys.argv[1], "a")
for line in sys.stdin:
    req = json.loads(line)
    log.write(json.dumps(req["html"]) + "\n")
    log.flush()
    if "HANG" in req["html"]:
        time.sleep(3600)
    sys.stdout.write(json.dumps({"id": req["id"], "error": "no dump"}) + "\n")
    sys.stdout.flush()
`), 0o644))
	return "python3 " + script + " " + log
}

// Against the real engines: a timeout entry is reduced one variant at a time and
// a hanging variant is kept on one run, so a server candidate reads each hanging
// variant once for its test and once more if it is the reduced case, for the
// confirmation. Before, variants went four at a time: a hang among them ended the
// process they shared, each was then run again alone, a kept one was run once more,
// and a hanging variant was read four times, each read a whole --candidate-timeout.
func TestATimeoutIsReducedOneVariantAtATime(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	oracleBin := buildOracle(t, dir)
	corpus := writeCorpus(t, dir, `{"id":"h","html":"<!doctype html><div><p>a</p><p>HANG</p><b>b</b><i>c</i><span>d</span></div>"}`+"\n")
	log := filepath.Join(dir, "reads")
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := run([]string{"--oracle", oracleBin, "--oracle-flag=--store=off", "--oracle-flag=--pages=1", "--reduce=0",
		"--candidate-timeout=2s", "--reduce-timeout=3m", "--candidate-server", hangingServer(t, dir, log),
		"--out", out, corpus}, &stdout, &stderr)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Equal(t, exitFail, code)
	assert.Contains(t, stdout.String(), "cases 1: 1 candidate-error")

	raw, err := os.ReadFile(filepath.Join(out, "buckets.json"))
	require.NoError(t, err)
	var entries []struct {
		Severity string `json:"severity"`
		Reduced  *struct {
			HTML       string `json:"html"`
			Bytes      int    `json:"bytes"`
			Before     int    `json:"bytes_before"`
			Reproduced bool   `json:"reproduced"`
		} `json:"reduced"`
	}
	require.NoError(t, json.Unmarshal(raw, &entries))
	require.Len(t, entries, 1)
	assert.Equal(t, "crash", entries[0].Severity)
	require.NotNil(t, entries[0].Reduced)
	assert.True(t, entries[0].Reduced.Reproduced, "the reduced case still hangs")
	assert.Less(t, entries[0].Reduced.Bytes, entries[0].Reduced.Before)
	assert.Contains(t, entries[0].Reduced.HTML, "HANG")

	reads, err := os.ReadFile(log)
	require.NoError(t, err)
	hung := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(reads)), "\n") {
		var html string
		require.NoError(t, json.Unmarshal([]byte(line), &html))
		if strings.Contains(html, "HANG") {
			hung[html]++
		}
	}
	require.NotEmpty(t, hung)
	for html, n := range hung {
		assert.LessOrEqual(t, n, 2, "a hanging variant was read %d times: %q", n, html)
	}
}

// A case whose id holds <, > or & is sent with its id as the corpus wrote it, so
// the answer, which echoes it as sent, is the case's. Before, the id went out as
// json.Marshal writes it (\u0026), the answer matched no case, and the case ended
// at --case-timeout with no vote: a candidate's crash on it was never counted.
// The fake oracle echoes the id's text as it came.
func TestAnIDWithMarkupGetsItsAnswer(t *testing.T) {
	dir := t.TempDir()
	echo := fakeOracle(t, dir, "echo-oracle", `    raw = re.match(r'\{"id":(.*?),"html":', line).group(1)
    print('{"id":' + raw + ',"dumps":{},"errors":{"chromium":"echoed"}}', flush=True)
`)
	f := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":"AT&T <1>","html":"<p>"}`+"\n"), 0o644))
	var stdout, stderr bytes.Buffer
	run([]string{"--candidate-cmd", "cat", "--out", filepath.Join(dir, "out"), "--oracle", echo,
		"--case-timeout=20s", "--reduce=0", f}, &stdout, &stderr)
	assert.NotContains(t, stderr.String(), "no answer within", "the answer found its case")
	answers, err := os.ReadFile(filepath.Join(dir, "out", "oracle.ndjson"))
	require.NoError(t, err)
	assert.Contains(t, string(answers), `"errors":{"chromium":"echoed"}`, "the oracle's answer, under the case")
}
