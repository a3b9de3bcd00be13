package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGateOrderIsAPermutationWithHostileCasesSpread(t *testing.T) {
	reqs, err := gateRequests(1, 50, []string{"../../testdata/cases.ndjson"})
	require.NoError(t, err)
	a, b := gateOrder(reqs, 1), gateOrder(reqs, 2)
	require.Len(t, a, len(reqs))
	seen := map[string]bool{}
	for _, r := range a {
		seen[r.id] = true
	}
	assert.Len(t, seen, len(reqs), "every request once")
	assert.NotEqual(t, a, b, "two seeds, two orders")
	assert.False(t, isHostile(a[0].id), "a hostile case is followed and preceded by ordinary ones")
	for i := 1; i < len(a); i++ {
		assert.False(t, isHostile(a[i].id) && isHostile(a[i-1].id), "no two hostile cases in a row (%d)", i)
	}
}

// compareGate on hand-written answers: a unit test of the counting.
func TestCompareGateCountsEngineAnswersAndSkipsHostileOnes(t *testing.T) {
	want := map[string]json.RawMessage{
		"a":          json.RawMessage(`{"id":"a","dumps":{"chromium":{"n":1},"firefox":{"n":1}},"errors":{"webkit":"boom"}}`),
		"b":          json.RawMessage(`{"id":"b","states":{"chromium":{"s":1}}}`),
		"hostile:00": json.RawMessage(`{"id":"hostile:00","dumps":{"chromium":{"n":1}}}`),
	}
	got := map[string]json.RawMessage{
		"a":          json.RawMessage(`{"id":"a","dumps":{"chromium":{"n":1},"firefox":{"n":2}},"errors":{"webkit":"boom"}}`),
		"b":          json.RawMessage(`{"id":"b","errors":{"chromium":"x"}}`),
		"hostile:00": json.RawMessage(`{"id":"hostile:00","dumps":{"chromium":{"n":9}}}`),
	}
	res := gateResult{Compared: map[string]int{}, Different: map[string]int{}, Unstable: map[string]int{}}
	compareGate(want, got, &res, "t")
	// The fresh path, asked again, repeats b's chromium answer but not a's firefox one.
	res.settle(map[string][]map[string]string{
		"a": {{"firefox": `{"n":1}`}, {"firefox": `{"n":3}`}},
		"b": {{"chromium": `{"s":1}`}, {"chromium": `{"s":1}`}},
	})
	assert.Equal(t, map[string]int{"chromium": 2, "firefox": 1, "webkit": 1}, res.Compared)
	assert.Equal(t, map[string]int{"chromium": 1}, res.Different)
	assert.Equal(t, map[string]int{"firefox": 1}, res.Unstable)
	assert.Len(t, res.Examples, 2)
}

// The gate itself, against the real engines: the bundled cases, the small WPT tree
// by url and inlined, generated cases and every hostile case, answered with a new
// document per case and with the inert reuse in two orders, must be identical.
func TestGateInertReuseAnswersAsANewDocument(t *testing.T) {
	testutil.NeedsBrowsers(t)
	var out, errb bytes.Buffer
	rc := run([]string{"--gate", "--gate-cases", "40", "--log-dir", t.TempDir(),
		"--gate-corpus", "../../testdata/cases.ndjson,../../testdata/gate/wpt-small.ndjson",
		"--oracle-args", "--docroot ../../testdata/wpt"}, &out, &errb)
	t.Log(out.String())
	require.Equal(t, 0, rc, "gate failed:\n%s\n%s", out.String(), errb.String())
	m := regexp.MustCompile(`(?m)^all +(\d+) +(\d+) +\d+$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the table's total line")
	compared, _ := strconv.Atoi(m[1])
	assert.Greater(t, compared, 3*2*50, "three engines, two orders, every request but the hostile ones")
	assert.Equal(t, "0", m[2])
}

// The differential fuzzer, briefly, against the real engines: innocent cases after
// generated hostile markup (nearly all of it inert to the classifier) on one page
// per engine answer as a new document does (`make fuzz-inert` runs 2,000 pairs).
func TestFuzzInertInnocentCasesAnswerAsANewDocument(t *testing.T) {
	testutil.NeedsBrowsers(t)
	var out, errb bytes.Buffer
	rc := run([]string{"--fuzz-inert", "24", "--seed", "7", "--log-dir", t.TempDir()}, &out, &errb)
	t.Log(out.String())
	require.Equal(t, 0, rc, "fuzz-inert failed:\n%s\n%s", out.String(), errb.String())
	m := regexp.MustCompile(`(\d+) hostile cases inert to the classifier`).FindStringSubmatch(out.String())
	require.NotNil(t, m)
	n, _ := strconv.Atoi(m[1])
	assert.Greater(t, n, 12, "most hostile cases are written into kept windows")
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		assert.Regexp(t, `(?m)^`+e+` +24 +0 +\d+$`, out.String())
	}
}

// TestMain makes the test binary a stand-in for the oracle when the gate spawns it
// with BENCH_FAKE_ORACLE=1 (fakeOracle).
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_FAKE_ORACLE") == "1" {
		fakeOracle()
	}
	os.Exit(m.Run())
}

// fakeOracle is a stand-in for the oracle binary (unit tests of the bench's own
// code: no engine runs): it answers ping, gives every other request one fixed
// chromium error, and after its last answer exits with status 3.
func fakeOracle() {
	lines := bufio.NewScanner(os.Stdin)
	lines.Buffer(nil, 64<<20)
	for lines.Scan() {
		var r struct {
			ID json.RawMessage `json:"id"`
			Op string          `json:"op"`
		}
		_ = json.Unmarshal(lines.Bytes(), &r)
		switch r.Op {
		case "ping":
			fmt.Printf(`{"id":%s,"ok":true,"states":{"chromium":{"state":"ready","restarts":0,"pages":1}}}`+"\n", r.ID)
		case "shutdown":
			fmt.Printf(`{"id":%s,"ok":true}`+"\n", r.ID)
		default:
			fmt.Printf(`{"id":%s,"errors":{"chromium":"fake"}}`+"\n", r.ID)
		}
	}
	os.Exit(3)
}

// An oracle that exits badly after its last answer does not cost the gate its
// comparison (it had failed the run with "oracle exited 3" although every answer
// was in): the gate warns and compares.
func TestGateComparesAnswersOfAnOracleThatExitsBadlyAfterThem(t *testing.T) {
	t.Setenv("BENCH_FAKE_ORACLE", "1") // the spawned oracles inherit it
	fake := os.Args[0]
	var out, errb bytes.Buffer
	rc := run([]string{"--gate", "--gate-cases", "5", "--log-dir", t.TempDir(), "--oracle", fake,
		"--gate-fresh-oracle", fake, "--gate-corpus", "../../testdata/cases.ndjson"}, &out, &errb)
	require.Equal(t, 0, rc, "gate failed:\n%s\n%s", out.String(), errb.String())
	assert.Contains(t, errb.String(), "warning: the fresh oracle, after its last answer: oracle exited 3")
	m := regexp.MustCompile(`(?m)^all +(\d+) +(\d+) +\d+$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the table's total line:\n%s", out.String())
	assert.NotEqual(t, "0", m[1], "answers compared")
	assert.Equal(t, "0", m[2], "answers different")
}
