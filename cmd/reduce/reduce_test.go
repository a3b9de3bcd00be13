package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	internalcand "github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/reduce"
	"github.com/layout-oracle/oracle/vote"
)

// smallCase is a constructed page the engines disagree on: Firefox's <h1> is
// taller than Chromium's and WebKit's (default font metrics), measured on these
// machines; the rest is there to be cut.
const smallCase = `{"id":"small","html":"<!doctype html><html><head><style>body{margin:8px;font:16px serif} .box{border:1px solid;padding:4px} .x, .y{color:red}</style></head><body><div class=box id=a><h1 title=t>Heading</h1><p>Some text that wraps <b>bold</b> here.</p><form><input type=text value=hello><select><option>one</option><option>two</option></select></form><ul><li>one</li><li>two</li></ul></div></body></html>"}`

// The end-to-end test against the real engines: bin/reduce on smallCase writes
// a smaller request with the same id that reproduced, and an oracle of the
// test's own shows the reduced request's vote with the original's first cause
// (same engines, kind and tag).
func TestReduceEndToEnd(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	for _, c := range []string{"reduce", "oracle"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, c), "../"+c).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	cmd := exec.Command(filepath.Join(dir, "reduce"), "--timeout=8m")
	cmd.Stdin = strings.NewReader(smallCase + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("stderr:\n%s", stderr.String())
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 1, "one NDJSON line on stdout")
	var got struct {
		ID         string `json:"id"`
		HTML       string `json:"html"`
		Script     string `json:"script"`
		Reproduced *bool  `json:"reproduced"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &got))
	var orig struct{ HTML string }
	require.NoError(t, json.Unmarshal([]byte(smallCase), &orig))
	assert.Equal(t, "small", got.ID)
	require.NotNil(t, got.Reproduced)
	assert.True(t, *got.Reproduced)
	assert.Less(t, len(got.HTML), len(orig.HTML)/2, "reduced: %q", got.HTML)
	assert.Contains(t, stderr.String(), "reproduced in a fresh oracle: true")

	// Our own check, in an oracle of ours: the same first cause before and after.
	o, err := startOracle(filepath.Join(dir, "oracle"), []string{"--store=off"}, os.Stderr)
	require.NoError(t, err)
	defer o.Close()
	ctx := context.Background()
	require.NoError(t, o.Ready(ctx))
	causes := func(v reduce.Variant) []compare.Cause {
		dumps, errs, err := o.Geometry(ctx, v)
		require.NoError(t, err)
		out := outcomes(dumps, errs, dump.DefaultTolerance)
		require.NotNil(t, out, "errors %v", errs)
		return out.Causes
	}
	before := causes(reduce.Variant{HTML: orig.HTML})
	after := causes(reduce.Variant{HTML: got.HTML, Script: got.Script})
	require.NotEmpty(t, before)
	require.NotEmpty(t, after, "the reduced case must still disagree")
	want := before[0]
	assert.True(t, slices.ContainsFunc(after, func(c compare.Cause) bool {
		return c.Tag == want.Tag && c.Kind == want.Kind && slices.Equal(c.Engines, want.Engines)
	}), "want a cause like %s among %v", want.Label(), after)
}

// --candidate against the real engines: the candidate is Chromium's own dump (an
// oracle of the test's, one engine, behind a local HTTP server that curl reaches)
// with every P 7px wider, an engine with one bug. bin/reduce cuts a page around a P
// down to what still shows that bug, against the three engines' vote, and the
// result reproduced with the candidate in a fresh oracle.
func TestReduceKeepsWhatTheCandidateFails(t *testing.T) {
	testutil.NeedsBrowsers(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	dir := t.TempDir()
	for _, c := range []string{"reduce", "oracle"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, c), "../"+c).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	o, err := startOracle(filepath.Join(dir, "oracle"), []string{"--store=off", "--engines=chromium", "--pages=1"}, io.Discard)
	require.NoError(t, err)
	defer o.Close()
	require.NoError(t, o.Ready(context.Background()))
	var asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		html, _ := io.ReadAll(r.Body)
		dumps, errs, err := o.Geometry(r.Context(), reduce.Variant{HTML: string(html)})
		d := dumps["chromium"]
		if err != nil || d == nil {
			http.Error(w, fmt.Sprint(err, errs), http.StatusInternalServerError)
			return
		}
		for i := range d.Nodes {
			if d.Nodes[i].Tag == "P" {
				d.Nodes[i].Bounding.W += 7
				for j := range d.Nodes[i].Rects {
					d.Nodes[i].Rects[j].W += 7
				}
			}
		}
		json.NewEncoder(w).Encode(d)
	}))
	defer srv.Close()

	page := `{"id":"cand","html":"<style>div{margin:3px} .n{color:blue}</style><div class=n><span>a</span><div><p title=x>some <i>text</i></p></div><ul><li>x<li>y</ul></div><table><tr><td>c</td></tr></table>"}`
	cmd := exec.Command(filepath.Join(dir, "reduce"), "--timeout=8m", "--candidate", "curl -sf --data-binary @- "+srv.URL)
	cmd.Stdin = strings.NewReader(page + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("stderr:\n%s", stderr.String())
	require.NoError(t, err)
	var got struct {
		ID         string `json:"id"`
		HTML       string `json:"html"`
		Reproduced *bool  `json:"reproduced"`
	}
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got))
	assert.Equal(t, "cand", got.ID)
	require.NotNil(t, got.Reproduced)
	assert.True(t, *got.Reproduced)
	assert.Regexp(t, `keeping candidate layout at HTML>BODY>[A-Z>]*P \(bounding\.w\)`, stderr.String())
	assert.Contains(t, strings.ToLower(got.HTML), "<p", "the box the candidate gets wrong stays")
	assert.Less(t, len(got.HTML), len(page)/4, "reduced: %q", got.HTML)
	assert.Greater(t, asked.Load(), int64(2), "the candidate was asked about the variants")
}

// The rest are pure tests of the command's parts (no browser).

func TestParseKeep(t *testing.T) {
	k, err := parseKeep("outlier=firefox:bounding.h")
	require.NoError(t, err)
	assert.Equal(t, keep{mode: "outlier", engine: "firefox", item: "bounding.h"}, k)
	_, err = parseKeep("outlier=")
	assert.Error(t, err)
	_, err = parseKeep("everything")
	assert.Error(t, err)
	_, err = parseKeep("outlier=bogus")
	assert.ErrorContains(t, err, `engine "bogus" is not one of chromium, firefox, webkit`)
}

// Flag values triage refuses are refused here too, at once and as bad input (2),
// before an oracle starts. Before, --tolerance NaN started one, then reported the
// original as having no three-engine vote (exit 1, "not reproduced").
func TestBadFlagValuesAreBadInput(t *testing.T) {
	for _, args := range [][]string{{"--tolerance", "NaN"}, {"--tolerance", "-1"}, {"--tolerance", "+Inf"},
		{"--candidate-timeout", "-1s"}, {"--timeout", "0s"}, {"--parallel", "0"}, {"--keep", "outlier=bogus"}} {
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := run(append(args, "--oracle", "/nonexistent/oracle"), strings.NewReader(`{"id":1,"html":"<p>"}`+"\n"), &stdout, &stderr)
		assert.Equal(t, exitBadInput, code, "%v: %s", args, stderr.String())
		assert.Contains(t, stderr.String(), strings.TrimPrefix(args[0], "--"), "%v names the flag", args)
		assert.Less(t, time.Since(start), 5*time.Second, "%v: refused before any oracle", args)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"--oracle", "/nonexistent/oracle"}, strings.NewReader(`{"id":1,"html":"<p>"}`+"\n"+`{"id":2,"html":"<b>"}`+"\n"), &stdout, &stderr)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stderr.String(), "more than one request", "a second case is not dropped silently")
}

func TestKeepHolds(t *testing.T) {
	o := &compare.Outcomes{
		Nodes: []compare.NodeOutcome{{Node: 3, Tag: "P", Items: []compare.NodeItem{
			{Property: "bounding.h", Vote: vote.Majority, Outlier: "firefox"}}}},
		Causes: []compare.Cause{{Node: 3, Tag: "P", Kind: compare.CauseLayout, Engines: []string{"firefox"},
			Items: []compare.ItemRef{{Node: 3, Property: "bounding.h"}}}},
	}
	auto := keep{mode: "auto"}
	require.NoError(t, auto.resolve(o))
	assert.True(t, auto.holds(o))
	other := *o
	other.Causes = []compare.Cause{{Node: 3, Tag: "DIV", Kind: compare.CauseLayout, Engines: []string{"firefox"},
		Items: []compare.ItemRef{{Node: 3, Property: "bounding.h"}}}}
	assert.False(t, auto.holds(&other), "another tag is another cause")
	other.Causes = []compare.Cause{{Node: 3, Tag: "P", Kind: compare.CauseLayout, Engines: []string{"webkit"},
		Items: []compare.ItemRef{{Node: 3, Property: "bounding.h"}}}}
	assert.False(t, auto.holds(&other), "other engines are another cause")
	assert.False(t, auto.holds(nil), "no vote (an engine failed) is not interesting")

	assert.True(t, keep{mode: "outlier", engine: "firefox"}.holds(o))
	assert.True(t, keep{mode: "outlier", engine: "firefox", item: "bounding.h"}.holds(o))
	assert.False(t, keep{mode: "outlier", engine: "firefox", item: "bounding.w"}.holds(o))
	assert.False(t, keep{mode: "outlier", engine: "webkit"}.holds(o))
	assert.False(t, keep{mode: "split"}.holds(o))

	agree := &compare.Outcomes{}
	assert.Error(t, (&keep{mode: "auto"}).resolve(agree), "nothing to keep when the engines agree")
}

func TestRequestRoundTrip(t *testing.T) {
	req, v, err := readRequest(strings.NewReader(`{"id":7,"html":"<p>x","script":"a()","engines":["webkit"],"note":"n"}`))
	require.NoError(t, err)
	assert.Equal(t, reduce.Variant{HTML: "<p>x", Script: "a()"}, v)
	out, err := req.with(reduce.Variant{HTML: "<p>"}, true)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":7,"html":"<p>","note":"n","reproduced":true}`, string(out))
	for _, bad := range []string{"", "nope", `{"id":"p","op":"ping"}`, `{"id":"x"}`} {
		_, _, err := readRequest(strings.NewReader(bad))
		assert.Error(t, err, bad)
	}
}

// A candidate reads a case's HTML only, so a request with a script is refused
// before any oracle starts.
// --candidate-cmd CMD is the spelling; --candidate CMD, the spelling until this
// release, still works and says on stderr that it is deprecated.
func TestCandidateRefusesAScriptedRequest(t *testing.T) {
	for _, spelling := range []string{"--candidate-cmd", "--candidate"} {
		var stdout, stderr bytes.Buffer
		code := run([]string{spelling, "cat"}, strings.NewReader(`{"id":1,"html":"<p>","script":"1"}`+"\n"), &stdout, &stderr)
		assert.Equal(t, exitBadInput, code, spelling)
		assert.Contains(t, stderr.String(), "--candidate-cmd: the request has a script", spelling)
		deprecation := "reduce: --candidate CMD is deprecated, use --candidate-cmd CMD\n"
		if spelling == "--candidate" {
			assert.True(t, strings.HasPrefix(stderr.String(), deprecation), stderr.String())
		} else {
			assert.NotContains(t, stderr.String(), "deprecated")
		}
		assert.Empty(t, stdout.String())
	}
}

// --out FILE is made before the reduction starts: a path that cannot be written
// is a usage error at once, not after minutes of oracle calls (no oracle starts).
func TestOutFileIsCheckedBeforeReducing(t *testing.T) {
	var stdout, stderr bytes.Buffer
	bad := filepath.Join(t.TempDir(), "no-such-dir", "r.ndjson")
	code := run([]string{"--out", bad}, strings.NewReader(`{"id":1,"html":"<p>"}`+"\n"), &stdout, &stderr)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, stderr.String(), "reduce: --out: ")
	assert.Empty(t, stdout.String())
}

// reduce --bench runs a reduce per case with the flags it was given, each under
// its name now: a deprecated spelling is not passed on to repeat its line per case.
func TestBenchPassesFlagsUnderTheirNewNames(t *testing.T) {
	fs := flag.NewFlagSet("reduce", flag.ContinueOnError)
	fs.String("candidate-cmd", "", "")
	cli.Alias(fs, "candidate", "candidate-cmd")
	fs.String("bench", "", "")
	fs.String("out", "", "")
	cli.Alias(fs, "bench-out", "out")
	fs.Bool("json", false, "")
	fs.Duration("timeout", 0, "")
	var oflags cli.List
	fs.Var(&oflags, "oracle-flag", "")
	fs.SetOutput(io.Discard)
	// --bench-out (--out) and --json are the bench's own: each case's reduce writes
	// its request to the bench's pipe and its statistics as JSON anyway.
	require.NoError(t, fs.Parse([]string{"--bench", "f", "--bench-out", "r.ndjson", "--json", "--candidate", "cat", "--timeout=3m", "--oracle-flag=--pages=1", "--oracle-flag", "--deadline=1m"}))
	assert.Equal(t, []string{"--candidate-cmd=cat", "--timeout=3m0s", "--oracle-flag=--pages=1", "--oracle-flag=--deadline=1m"}, benchPass(fs, oflags))
}

// --candidate-timeout bounds a candidate with children. A child
// that keeps stdout open after the command exits held the read for its whole life
// (8 s here), and a timed-out command's children kept the pipe after sh was
// killed. Real processes, no engine.
func TestCandidateTimeoutBoundsItsChildren(t *testing.T) {
	// A dump of the contract: the first of the bundled passing candidate records.
	rec, err := os.ReadFile(filepath.Join("..", "..", "testdata", "compare", "candidate-pass.ndjson"))
	require.NoError(t, err)
	var first struct {
		Dump json.RawMessage `json:"dump"`
	}
	require.NoError(t, json.Unmarshal(bytes.SplitN(rec, []byte("\n"), 2)[0], &first))
	d := filepath.Join(t.TempDir(), "dump.json")
	require.NoError(t, os.WriteFile(d, first.Dump, 0o600))

	c := &candidate{c: &internalcand.Command{Cmd: "sleep 8 & cat " + d, Timeout: time.Second}}
	start := time.Now()
	got, err := c.dump(context.Background(), reduce.Variant{HTML: "<p>"})
	require.NoError(t, err, "the dump was written and the command exited 0")
	assert.Equal(t, "HTML", got.Nodes[0].Tag)
	assert.Less(t, time.Since(start), 4*time.Second, "a background child holding stdout must not hold the read")

	c = &candidate{c: &internalcand.Command{Cmd: "(sleep 8; cat " + d + ") & wait", Timeout: time.Second}}
	start = time.Now()
	_, err = c.dump(context.Background(), reduce.Variant{HTML: "<p>"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no answer within 1s")
	assert.Less(t, time.Since(start), 4*time.Second, "the timeout must kill the whole process group")
}

// Against the real engines: a --candidate-cmd whose every run forks a setsid
// child that sleeps leaves none behind once reduce exits (checked by pid).
// Before, each run left one: a process group kill misses a setsid child.
func TestReduceLeavesNoCandidateProcess(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir := t.TempDir()
	for _, c := range []string{"reduce", "oracle"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, c), "../"+c).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	pids := filepath.Join(dir, "pids")
	cand := `setsid sh -c 'cut -d" " -f4 /proc/self/stat >> ` + pids + `; exec sleep 120' & cat >/dev/null; echo '{}'`
	page := `{"id":"c","html":"<!doctype html><div><p style=\"height:10px\">x</p><b>y</b></div>"}`
	cmd := exec.Command(filepath.Join(dir, "reduce"), "--timeout=3m", "--oracle-flag=--store=off", "--oracle-flag=--pages=1", "--candidate-cmd", cand)
	cmd.Stdin = strings.NewReader(page + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("exit %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	b, err := os.ReadFile(pids)
	require.NoError(t, err, "the candidate ran")
	var left []string
	for _, pid := range strings.Fields(string(b)) {
		if st, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(st), ") Z") {
			left = append(left, pid)
		}
	}
	assert.NotEmpty(t, strings.Fields(string(b)))
	assert.Empty(t, left, "candidate children outlived reduce")
}
