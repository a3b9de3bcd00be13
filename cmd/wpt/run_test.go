package main

// wpt run against the real engines: the oracle built from this tree, testdata/wpt as
// the root (a testharness test, reftests of our own with their reference, and a WPT
// reftest whose reference is not in testdata).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/testutil"
)

func TestRunWritesWptreports(t *testing.T) {
	testutil.NeedsBrowsers(t)
	bin := filepath.Join(t.TempDir(), "oracle")
	build := exec.Command("go", "build", "-o", bin, "github.com/layout-oracle/oracle/cmd/oracle")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	const rev = "0123456789abcdef0123456789abcdef01234567"
	code := run([]string{"run", "--root", "../../testdata/wpt", "--out", dir, "--oracle", bin, "--revision", rev,
		"oracle-tests", "css/CSS2/css1", "--", "--pages=1", "--log-level=warn"}, nil, &stdout, &stderr)
	log, _ := os.ReadFile(filepath.Join(dir, "oracle.log"))
	require.Equal(t, 0, code, "stderr: %s\noracle log: %s", stderr.String(), log)

	want := map[string]string{
		"/css/CSS2/css1/c414-flt-fit-001.xht":      "ERROR", // its reference is not in testdata
		"/oracle-tests/reftest-fail.html":          "FAIL",
		"/oracle-tests/reftest-match.html":         "PASS",
		"/oracle-tests/reftest-mismatch.html":      "PASS",
		"/oracle-tests/reftest-pixels-match.html":  "PASS", // box trees differ, pixels do not
		"/oracle-tests/testharness-pass-fail.html": "OK",
	}
	for _, engine := range []string{"chromium", "firefox", "webkit"} {
		file := filepath.Join(dir, "wptreport-"+engine+".json")
		assert.Contains(t, stdout.String(), file+": 6 tests")
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		require.True(t, bytes.HasSuffix(b, []byte("}\n")) && bytes.Count(b, []byte("\n")) == 1, "one line, as wptreport.py writes")
		requireWptreportSchema(t, b)
		requireWptFyiAccepts(t, b)
		var rep map[string]any
		require.NoError(t, json.Unmarshal(b, &rep))
		info := rep["run_info"].(map[string]any)
		assert.Equal(t, map[string]string{"chromium": "chromium", "firefox": "firefox", "webkit": "webkitgtk"}[engine], info["product"])
		assert.NotEmpty(t, info["browser_version"])
		assert.Equal(t, "linux", info["os"])
		assert.Equal(t, engine != "webkit", info["headless"])
		assert.Equal(t, false, info["verify"])
		assert.Equal(t, 64.0, info["bits"])
		assert.Equal(t, rev, info["revision"])
		start, end := rep["time_start"].(float64), rep["time_end"].(float64)
		assert.Greater(t, start, 1.7e12)
		assert.GreaterOrEqual(t, end, start)

		got := map[string]string{}
		for _, r := range rep["results"].([]any) {
			r := r.(map[string]any)
			test, status := r["test"].(string), r["status"].(string)
			got[test] = status
			assert.Contains(t, r, "message", test)
			assert.NotContains(t, r, "expected", test)
			if strings.HasPrefix(test, "/css/") { // not run: no reference
				assert.Equal(t, 0.0, r["duration"], test)
			} else {
				assert.Greater(t, r["duration"].(float64), 0.0, test)
			}
			subs := r["subtests"].([]any)
			if strings.HasSuffix(test, "testharness-pass-fail.html") {
				assert.Nil(t, r["message"])
				// The failing subtest's assertion text, from this engine's own trace;
				// null on the PASS, as wptrunner writes it.
				assert.Equal(t, []any{
					map[string]any{"name": "box is 50px wide", "status": "PASS", "message": nil},
					map[string]any{"name": "box is 51px wide", "status": "FAIL", "message": "assert_equals: expected 51 but got 50"},
				}, subs, engine)
				continue
			}
			assert.Empty(t, subs, test)
			m, _ := r["message"].(string)
			if strings.HasPrefix(test, "/oracle-tests/") {
				if status == "PASS" {
					assert.Nil(t, r["message"], "a PASS has message null: %s", test)
					assert.NotContains(t, r, "screenshots", test)
					continue
				}
				assert.Contains(t, m, "pixel verdict", test)
				shots := r["screenshots"].(map[string]any)
				assert.Len(t, shots, 2, test)
				assert.Regexp(t, `^sha1:[0-9a-f]{40}$`, shots[test], test)
			} else {
				assert.Contains(t, m, "/css/CSS2/css1/c414-flt-fit-001-ref.xht: not found under the root")
			}
		}
		assert.Equal(t, want, got, engine)
	}

	// On a pipe, a line per request as it is answered (no progress bar).
	for test := range want {
		if !strings.HasPrefix(test, "/css/") { // not sent: no reference
			assert.Regexp(t, `wpt run: \d+/\d+ `+regexp.QuoteMeta(test)+`: chromium \S+ \d+ ms, firefox \S+ \d+ ms, webkit \S+ \d+ ms\n`, stderr.String())
		}
	}
	assert.NotContains(t, stderr.String(), "run_info.revision is missing")

	// One engine's report as the candidate: the three agree on these, so nothing is
	// candidate-only or split.
	cand := filepath.Join(t.TempDir(), "cand.json")
	b, err := os.ReadFile(filepath.Join(dir, "wptreport-chromium.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cand, b, 0o644))
	stdout.Reset()
	require.Equal(t, 0, run([]string{"compare", "--candidate", cand, "--json", dir}, nil, &stdout, &stderr), stderr.String())
	verdicts := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var v voteLine
		require.NoError(t, json.Unmarshal([]byte(l), &v))
		verdicts[v.Verdict]++
	}
	assert.Equal(t, map[string]int{"agree": 5, "shared": 3}, verdicts)
	checkMine(t, dir, cand)
}

// Usage errors of wpt run, refused before any oracle starts: a flag after the
// patterns (Go's flag package would take it for a pattern), and a pattern that
// selects no test file (a typo would otherwise run the rest silently).
func TestRunRefusesFlagsAfterPatternsAndPatternsThatMatchNothing(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run([]string{"run", "--root", "../../testdata/wpt", "oracle-tests", "--out", "x"}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--out after the patterns")
	stderr.Reset()
	assert.Equal(t, 2, run([]string{"run", "--root", "../../testdata/wpt", "oracle-tests", "oracle-tsets"}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "matches oracle-tsets")
	assert.NotContains(t, stderr.String(), "oracle-tests,")
	assert.Empty(t, stdout.String())
	// No revision is said at the start, before the patterns are even matched:
	// testdata/wpt is no git work tree of its own.
	assert.Regexp(t, `^wpt run: \S+ is not the top of a git work tree and no --revision was given`, stderr.String())

	stderr.Reset()
	missing := filepath.Join(t.TempDir(), "no-such-wpt")
	assert.Equal(t, 2, run([]string{"run", "--root", missing, "css"}, nil, &stdout, &stderr))
	assert.Equal(t, "wpt run: --root "+missing+": not a directory (a web-platform-tests checkout)\n", stderr.String())
}

// --oracle-flag F (repeatable) passes a flag to the oracle, as in every command
// that starts one; "-- FLAGS" after the patterns, the spelling until this release,
// still works and says it is deprecated. The runs stop at a pattern that matches
// nothing, before any oracle starts.
func TestRunOracleFlagSpellings(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run([]string{"run", "--root", "../../testdata/wpt", "--oracle-flag=--pages=1", "oracle-tsets"}, nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "matches oracle-tsets")
	assert.NotContains(t, stderr.String(), "deprecated")

	stderr.Reset()
	assert.Equal(t, 2, run([]string{"run", "--root", "../../testdata/wpt", "oracle-tsets", "--", "--pages=1"}, nil, &stdout, &stderr))
	assert.True(t, strings.HasPrefix(stderr.String(), "wpt run: -- FLAGS is deprecated, use --oracle-flag F, repeated\n"), stderr.String())
	assert.Contains(t, stderr.String(), "matches oracle-tsets")

	stderr.Reset()
	own := []string{"--pages=1"}
	assert.Equal(t, []string{"--pages=1", "--verify", "3"}, withDashed(own, []string{"--verify", "3"}, &stderr), "each --oracle-flag, then the dashed flags")
	assert.Equal(t, []string{"--pages=1"}, own, "the --oracle-flag list is left as it was")
	assert.Equal(t, 1, strings.Count(stderr.String(), "deprecated"))
	stderr.Reset()
	assert.Equal(t, own, withDashed(own, nil, &stderr))
	assert.Empty(t, stderr.String())
}

// runRequests keeps at most an engine's pages of requests in flight to it, one
// request per engine per test, and gives each engine its own duration (a unit test
// of the sending: the oracle is a fake over pipes that answers after a pause).
func TestRunRequestsBoundsEachEngineByItsPages(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	t.Cleanup(func() { respW.Close(); reqR.Close() })
	c := client.Attach(respR, reqW, client.Options{})
	var mu sync.Mutex
	now, most := map[string]int{}, map[string]int{}
	go func() {
		br := bufio.NewReader(reqR)
		var wmu sync.Mutex
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var r struct {
				ID      string   `json:"id"`
				Engines []string `json:"engines"`
			}
			if err := json.Unmarshal(line, &r); err != nil || len(r.Engines) != 1 {
				t.Errorf("fake: %q: %v", line, err)
				return
			}
			e := r.Engines[0]
			mu.Lock()
			now[e]++
			most[e] = max(most[e], now[e])
			mu.Unlock()
			go func() {
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				now[e]--
				mu.Unlock()
				id, _ := json.Marshal(r.ID)
				wmu.Lock()
				fmt.Fprintf(respW, `{"id":%s,"traces":{%q:{"engine":%q,"records":[]}}}`+"\n", id, e, e)
				wmu.Unlock()
			}()
		}
	}()
	var reqs []client.Request
	for i := range 12 {
		reqs = append(reqs, traceRequest(fmt.Sprintf("/t%d.html", i)))
	}
	engines := enginePages(&client.Ping{Engines: []string{"chromium", "firefox"}, Pages: map[string]int{"chromium": 1, "firefox": 3}})
	answers := runRequests(context.Background(), c, reqs, engines, 8, nil, nil)
	require.Len(t, answers, 12)
	for _, a := range answers {
		assert.Len(t, a.Resp.Traces, 2)
		assert.Greater(t, a.Durations["chromium"], 10*time.Millisecond)
		assert.Greater(t, a.Durations["firefox"], 10*time.Millisecond)
	}
	assert.Equal(t, 1, most["chromium"], "chromium has one page")
	assert.LessOrEqual(t, most["firefox"], 3)
	assert.Greater(t, most["firefox"], 1, "firefox's three pages are used")
}
