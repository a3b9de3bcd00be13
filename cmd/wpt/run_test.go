package main

// wpt run against the real engines: the oracle built from this tree, testdata/wpt as
// the root (a testharness test, reftests of our own with their reference, and a WPT
// reftest whose reference is not in testdata).

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	code := run([]string{"run", "--root", "../../testdata/wpt", "--out", dir, "--oracle", bin,
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
		var rep map[string]any
		require.NoError(t, json.Unmarshal(b, &rep))
		info := rep["run_info"].(map[string]any)
		assert.Equal(t, engine, info["product"])
		assert.NotEmpty(t, info["browser_version"])
		assert.Equal(t, "linux", info["os"])
		assert.Equal(t, engine != "webkit", info["headless"])
		assert.Equal(t, false, info["verify"])
		assert.Equal(t, 64.0, info["bits"])
		assert.NotContains(t, info, "revision", "testdata/wpt is inside this repository, not a WPT checkout")
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
				assert.Equal(t, []any{
					map[string]any{"name": "box is 50px wide", "status": "PASS", "message": nil},
					map[string]any{"name": "box is 51px wide", "status": "FAIL", "message": nil},
				}, subs, engine)
				continue
			}
			assert.Empty(t, subs, test)
			m, _ := r["message"].(string)
			if strings.HasPrefix(test, "/oracle-tests/") {
				assert.Contains(t, m, "pixel verdict", test)
				if strings.HasSuffix(test, "reftest-pixels-match.html") {
					assert.Contains(t, m, "0 pixels differ", test)
					assert.Contains(t, m, "fuzzy allows maxDifference=0-1;totalPixels=0-2", test)
					assert.Contains(t, m, "geometry: layouts differ", test)
				}
			} else {
				assert.Contains(t, m, "/css/CSS2/css1/c414-flt-fit-001-ref.xht: not found under the root")
			}
		}
		assert.Equal(t, want, got, engine)
	}

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
