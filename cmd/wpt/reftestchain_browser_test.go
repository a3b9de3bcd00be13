package main

// WPT's own reftests of reftest semantics (testdata/wpt/infrastructure/reftest, with
// the verdicts WPT's infrastructure/metadata expects) run through wpt run in the
// three engines: today's rules, and the chains of --ref-chains.

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
)

// buildOracle builds the oracle of this tree for a test.
func buildOracle(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "oracle")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/layout-oracle/oracle/cmd/oracle").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// runStatuses runs wpt run with args and returns each engine's status per test.
func runStatuses(t *testing.T, bin string, args ...string) (string, map[string]map[string]string) {
	t.Helper()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args = append([]string{"run", "--root", "../../testdata/wpt", "--out", dir, "--oracle", bin}, args...)
	code := run(append(args, "--", "--pages=1", "--log-level=warn"), nil, &stdout, &stderr)
	log, _ := os.ReadFile(filepath.Join(dir, "oracle.log"))
	require.Equal(t, 0, code, "stderr: %s\noracle log: %s", stderr.String(), log)
	got := map[string]map[string]string{}
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		rep, err := readReport(filepath.Join(dir, "wptreport-"+e+".json"))
		require.NoError(t, err)
		got[e] = map[string]string{}
		for _, r := range rep.Results {
			got[e][r.Test] = r.Status
			if r.Status == statusError {
				t.Logf("%s %s: %s", e, r.Test, *r.Message)
			}
		}
	}
	return dir, got
}

func TestRunFollowsWPTsReftestRules(t *testing.T) {
	testutil.NeedsBrowsers(t)
	bin := buildOracle(t)
	const p = "/infrastructure/reftest/"
	// infrastructure/metadata/infrastructure/reftest/*.ini says FAIL; every other test PASS.
	want := map[string]string{
		p + "green-ref.html":     "PASS", // named as a reference, links one: a reftest
		p + "reftest_match.html": "PASS", p + "reftest_match_fail.html": "FAIL",
		p + "reftest_mismatch.html": "PASS", p + "reftest_mismatch_fail.html": "FAIL",
		p + "reftest_multiple_match-0.html": "PASS", p + "reftest_multiple_match-1.html": "PASS",
		p + "reftest_multiple_mismatch-0.html": "FAIL", p + "reftest_multiple_mismatch-1.html": "FAIL",
		p + "reftest_match_and_mismatch-0.html": "FAIL", p + "reftest_match_and_mismatch-1.html": "FAIL",
		p + "reftest_match_and_mismatch-2.html": "PASS", p + "reftest_match_and_mismatch-3.html": "PASS",
		p + "reftest_match_and_mismatch-4.html": "FAIL", p + "reftest_match_and_mismatch-5.html": "FAIL",
		p + "reftest_match_and_mismatch-6.html": "FAIL", p + "reftest_match_and_mismatch-7.html": "FAIL",
		// legacy/: the old chains, which today's rules do not follow.
		p + "legacy/reftest_and_fail.html": "PASS", p + "legacy/reftest_and_fail_0-ref.html": "FAIL",
		p + "legacy/reftest_and_mismatch.html": "PASS", p + "legacy/reftest_and_mismatch_0.html": "PASS",
		p + "legacy/reftest_cycle.html": "PASS", p + "legacy/reftest_cycle_0-ref.html": "PASS",
		p + "legacy/reftest_cycle_1-ref.html": "PASS",
		p + "legacy/reftest_cycle_fail.html":  "PASS", p + "legacy/reftest_cycle_fail_0-ref.html": "FAIL",
	}
	_, got := runStatuses(t, bin, "infrastructure/reftest")
	for e, g := range got {
		assert.Equal(t, want, g, e)
	}

	// --ref-chains: a reference's references are followed (AND along the chain), a
	// cycle ends.
	chained := map[string]string{
		p + "legacy/reftest_and_fail.html":       "FAIL", // green == green-ref, which must == red
		p + "legacy/reftest_and_fail_0-ref.html": "FAIL",
		p + "legacy/reftest_and_mismatch.html":   "PASS", p + "legacy/reftest_and_mismatch_0.html": "PASS",
		p + "legacy/reftest_cycle.html": "PASS", p + "legacy/reftest_cycle_0-ref.html": "PASS",
		p + "legacy/reftest_cycle_1-ref.html":      "PASS",
		p + "legacy/reftest_cycle_fail.html":       "FAIL", // its reference must != it
		p + "legacy/reftest_cycle_fail_0-ref.html": "FAIL",
	}
	_, got = runStatuses(t, bin, "--ref-chains", "infrastructure/reftest/legacy")
	for e, g := range got {
		assert.Equal(t, chained, g, e)
	}
}

// The reftest view shows a test that fails in Firefox alone (reftest-split-firefox.html
// narrows its box there): every engine's test and reference screenshots, the
// differing pixels, and Firefox's test against each passing engine's.
func TestRunWritesTheReftestView(t *testing.T) {
	testutil.NeedsBrowsers(t)
	bin := buildOracle(t)
	dir, got := runStatuses(t, bin, "oracle-split/reftest-split-firefox.html", "oracle-tests/reftest-match.html")
	const split = "/oracle-split/reftest-split-firefox.html"
	assert.Equal(t, "FAIL", got["firefox"][split])
	assert.Equal(t, "PASS", got["chromium"][split])
	assert.Equal(t, "PASS", got["webkit"][split])

	page, err := os.ReadFile(filepath.Join(dir, "reftests", "index.html"))
	require.NoError(t, err)
	html := string(page)
	assert.Contains(t, html, "Reftests the engines split on: 1")
	assert.Contains(t, html, split)
	assert.NotContains(t, html, "reftest-match.html", "all three pass it")
	for _, f := range []string{"0001-chromium-test.png", "0001-firefox-test.png", "0001-webkit-test.png",
		"0001-firefox-ref.png", "0001-firefox-diff.png", "0001-chromium-diff.png", "0001-firefox-vs-chromium.png", "0001-firefox-vs-webkit.png"} {
		assert.Contains(t, html, `src="img/`+f+`"`, f)
		_, err := os.Stat(filepath.Join(dir, "reftests", "img", f))
		assert.NoError(t, err, f)
	}
	// The box is 10x20 px narrower in Firefox: 200 CSS px at the screenshot's scale,
	// drawn red in the diff.
	assert.Contains(t, html, "/oracle-split/reftest-split-firefox.html == /oracle-tests/reftest-ref.html: 200 pixels differ")
	assert.Contains(t, html, "/oracle-split/reftest-split-firefox.html == /oracle-tests/reftest-ref.html: 0 pixels differ")
	assert.Contains(t, html, "firefox (FAIL) against chromium (PASS): 200 pixels of the test differ")
	f, err := os.Open(filepath.Join(dir, "reftests", "img", "0001-firefox-diff.png"))
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	red := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r == 0xffff && g == 0 && bl == 0 {
				red++
			}
		}
	}
	assert.Equal(t, 200, red)

	// compare's summary links the view; Firefox as the candidate fails the split
	// reftest the other two pass: exit 1.
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, run([]string{"compare", "--candidate", filepath.Join(dir, "wptreport-firefox.json"), dir}, nil, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "the engines' reftest view: "+filepath.Join(dir, "reftests", "index.html"))
}
