package main

// The ground-truth store (--store, docs/store.md) against the real engines: a rerun
// is answered from the store byte for byte, without a browser; a changed request or
// a new engine build misses; a killed writer leaves a working store; two oracles
// share one store file; a broken store file means live answers.

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	oracleclient "github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storeCases are one of each kind of answer, plus one that fails (never stored).
var storeCases = []string{
	`{"id":"g","html":"<!doctype html><div style='width:120px;height:40px'>x</div>","script":"document.body.appendChild(document.createElement('p')).textContent='added'"}`,
	`{"id":"r","op":"reflect","html":"<input id=a>","script":"document.getElementById('a').setAttribute('value','5')","probes":[{"selector":"#a","attr":"value"}]}`,
	`{"id":"t","op":"trace","html":"<p>x</p>","script":"trace.value('origin', location.origin); trace.value('n', document.querySelectorAll('p').length); trace.done()"}`,
	`{"id":"bad","html":"<p>","script":"throw new TypeError('no')"}`,
}

// runBatch pipes lines through one oracle run and returns every answer's raw line by
// id, and its stderr. The self-check is off so every "case served" in the log (debug
// level) is a case a browser served.
func runBatch(t *testing.T, env []string, args []string, lines []string) (map[string]string, string) {
	t.Helper()
	args = append([]string{"--pages=1", "--self-check=false", "--log-level=debug"}, args...)
	c := spawnOracle(t, oracleBin, env, args...)
	defer c.close() // on a failure: EOF, then a kill
	calls := map[string]*oracleclient.Call{}
	for _, l := range lines {
		call := c.startLine(t, []byte(l), nil)
		calls[call.Request.ID] = call
	}
	out := map[string]string{}
	for id, call := range calls {
		out[id] = string(c.answerLine(t, call, 3*time.Minute, id))
	}
	require.Equal(t, 0, c.exitCode(t, time.Minute), "stderr:\n%s", c.stderr.String())
	return out, c.stderr.String()
}

var storedSuffix = regexp.MustCompile(`,"stored":\[[^\]]*\]\}$`)

// splitStored is an answer line without its additive "stored" field, and that field.
func splitStored(t *testing.T, line string) (string, []string) {
	t.Helper()
	var m struct{ Stored []string }
	require.NoError(t, json.Unmarshal([]byte(line), &m))
	return storedSuffix.ReplaceAllString(line, "}"), m.Stored
}

func engineCases(log string) int { return strings.Count(log, `"message":"case served"`) }

var all3 = []string{"chromium", "firefox", "webkit"}

// Two oracle runs on one store, each of which costs a launch of two browsers: the
// first answers everything live (and stores a chromium-only case for the partial
// hit), the second sends the same cases again beside changed ones and the partial
// case for all engines. Each hit or miss is a property of the stored key, not of
// which run sends it, so one rerun checks them all; the exact count of engine cases
// in the second run's log still fails if any stored answer reaches a browser.
// Chromium and WebKit: the partial hit and a stored trace's one origin need two
// engines, not Firefox's launch; TestWarmRerunIsAnsweredBeforeAnyBrowserIsUp serves
// all three engines' stored answers byte for byte.
func TestRerunIsAnsweredFromTheStoreByteForByte(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	path := filepath.Join(t.TempDir(), "store.sqlite")
	args := []string{"--store", path, "--engines=chromium,webkit"}
	both := []string{"chromium", "webkit"}
	// A partial hit runs only the missing engines. The case has a script, so it is not
	// inert: its pages are reset after it, which is what engineCases counts (an inert
	// case keeps its page unreset, docs/untrusted.md).
	partial := `{"id":"p1","html":"<b>partial</b>","script":"document.title='p'","engines":["chromium"]}`
	live, log1 := runBatch(t, nil, args, append(storeCases[:len(storeCases):len(storeCases)], partial))
	require.Len(t, live, len(storeCases)+1)
	for id, line := range live {
		_, stored := splitStored(t, line)
		assert.Empty(t, stored, "%s: first run is live", id)
	}
	assert.Contains(t, live["bad"], "script threw")
	assert.Equal(t, 2*len(storeCases)+1, engineCases(log1), "the first run used the browsers")

	// A changed request field misses; the same request under another id hits.
	changed := []string{
		`{"id":"g2","html":"<!doctype html><div style='width:121px;height:40px'>x</div>","script":"document.body.appendChild(document.createElement('p')).textContent='added'"}`,
		`{"id":"r2","op":"reflect","html":"<input id=a>","script":"document.getElementById('a').setAttribute('value','5')","probes":[{"selector":"#a","attr":"value","idl":"defaultValue"}]}`,
		`{"id":"g3","script":"document.body.appendChild(document.createElement('p')).textContent='added'","html":"<!doctype html><div style='width:120px;height:40px'>x</div>"}`,
		`{"id":"p2","html":"<b>partial</b>","script":"document.title='p'"}`,
	}
	again, log2 := runBatch(t, nil, args, append(storeCases[:len(storeCases):len(storeCases)], changed...))
	for _, id := range []string{"g", "r", "t"} {
		body, stored := splitStored(t, again[id])
		assert.Equal(t, live[id], body, "%s: the stored answer is the live one, byte for byte", id)
		assert.Equal(t, both, stored, id)
	}
	// The failed case was not stored: it is answered live, and the same.
	body, stored := splitStored(t, again["bad"])
	assert.Empty(t, stored)
	assert.Equal(t, live["bad"], body)
	assert.Equal(t, 2+2*2+1, engineCases(log2),
		"only the failed case, the two changed ones, and p2's webkit reached a browser")

	// A trace served from the store keeps one origin across its engines.
	var tr struct {
		Traces map[string]struct {
			Origin  string `json:"origin"`
			Records []struct {
				Label string `json:"label"`
				Value any    `json:"value"`
			} `json:"records"`
		} `json:"traces"`
	}
	require.NoError(t, json.Unmarshal([]byte(again["t"]), &tr))
	origin := tr.Traces["chromium"].Origin
	for e, x := range tr.Traces {
		assert.Equal(t, origin, x.Origin, e)
		assert.Equal(t, origin, x.Records[0].Value, e)
	}

	for _, id := range []string{"g2", "r2"} {
		_, stored := splitStored(t, again[id])
		assert.Empty(t, stored, "%s: a changed field is another case", id)
	}
	body, stored = splitStored(t, again["g3"])
	assert.Equal(t, both, stored, "another id and key order is the same case")
	assert.Equal(t, strings.Replace(live["g"], `"id":"g"`, `"id":"g3"`, 1), body)

	_, stored = splitStored(t, again["p2"])
	assert.Equal(t, []string{"chromium"}, stored)
	assert.Contains(t, again["p2"], `"webkit":{"engine":"webkit"`)
}

// rewriteVersions makes every stored answer claim an older engine build, key and all,
// as if it had been measured before the browsers were upgraded.
func rewriteVersions(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT format, walk, environment, profile, engine, engine_version, route, op, case_hash, rowid FROM answers`)
	require.NoError(t, err)
	type re struct {
		m     store.Meta
		rowid int64
	}
	var all []re
	for rows.Next() {
		var r re
		m := &r.m
		require.NoError(t, rows.Scan(&m.Format, &m.Walk, &m.Environment, &m.Profile, &m.Engine, &m.EngineVersion, &m.Route, &m.Op, &m.Case, &r.rowid))
		all = append(all, r)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	for _, r := range all {
		r.m.EngineVersion += "-previous-build"
		k := store.KeyOf(r.m)
		_, err := db.Exec(`UPDATE answers SET engine_version = ?, key = ? WHERE rowid = ?`, r.m.EngineVersion, k[:], r.rowid)
		require.NoError(t, err)
	}
	return len(all)
}

// Chromium only: the build is part of every engine's key alike (store.KeyOf).
func TestANewEngineBuildMisses(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	path := filepath.Join(t.TempDir(), "store.sqlite")
	args := []string{"--store", path, "--engines=chromium"}
	cases := storeCases[:2]
	live, _ := runBatch(t, nil, args, cases)
	warm, _ := runBatch(t, nil, args, cases)
	_, stored := splitStored(t, warm["g"])
	require.Equal(t, []string{"chromium"}, stored, "stored before the rewrite")

	require.Equal(t, 2, rewriteVersions(t, path))
	after, log := runBatch(t, nil, args, cases)
	for _, id := range []string{"g", "r"} {
		body, stored := splitStored(t, after[id])
		assert.Empty(t, stored, "%s: an answer of another build is never served", id)
		assert.Equal(t, live[id], body, id)
	}
	assert.Equal(t, 2, engineCases(log))
}

// A kill -9 while the writer is inside its transaction (held open by the test hook)
// loses that batch only: the next run finds the committed answers, byte for byte,
// answers the lost one live, and the file passes SQLite's integrity check.
func TestAKilledWriterLeavesAWorkingStore(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md); its hook is in Options.Env, not t.Setenv
	path := filepath.Join(t.TempDir(), "store.sqlite")
	args := []string{"--store", path, "--engines=chromium"}
	first, _ := runBatch(t, nil, args, storeCases[:2])

	c := startOracleEnv(t, []string{"ORACLE_STORE_TEST_HOLD_WRITE=60s"}, "--store", path, "--engines=chromium", "--pages=1", "--self-check=false")
	held := c.send(t, map[string]any{"id": "held", "html": "<i>lost in the kill</i>"})
	require.NotNil(t, held["dumps"])
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(c.stderr.String(), "store write in progress") {
		require.True(t, time.Now().Before(deadline), "the writer never began: %s", c.stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, syscall.Kill(-c.pid(), syscall.SIGKILL))
	<-c.oc.Exited()

	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	var check string
	require.NoError(t, db.QueryRow(`PRAGMA integrity_check`).Scan(&check))
	db.Close()
	assert.Equal(t, "ok", check)

	again, _ := runBatch(t, nil, args, append(storeCases[:2:2], `{"id":"held","html":"<i>lost in the kill</i>"}`))
	for _, id := range []string{"g", "r"} {
		body, stored := splitStored(t, again[id])
		assert.Equal(t, []string{"chromium"}, stored, id)
		assert.Equal(t, first[id], body, id)
	}
	_, stored := splitStored(t, again["held"])
	assert.Empty(t, stored, "the batch being written when the process died was not committed")
	assert.Contains(t, again["held"], `"dumps":{"chromium"`)
}

// startOracleEnv is startOracle with extra environment variables.
func startOracleEnv(t *testing.T, env []string, args ...string) *client {
	t.Helper()
	c := spawnOracle(t, oracleBin, env, args...)
	c.waitStarted(t)
	t.Cleanup(c.close)
	return c
}

// Two oracle processes on one store file: each serves what the other stored.
func TestTwoOraclesShareOneStore(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	path := filepath.Join(t.TempDir(), "store.sqlite")
	a := startOracleEnv(t, nil, "--store", path, "--engines=chromium", "--pages=1", "--self-check=false")
	b := startOracleEnv(t, nil, "--store", path, "--engines=chromium", "--pages=1", "--self-check=false")
	caseA := map[string]any{"html": "<p>written by a</p>"}
	caseB := map[string]any{"html": "<p>written by b</p>"}
	ra := a.send(t, map[string]any{"id": "a1", "html": caseA["html"]})
	rb := b.send(t, map[string]any{"id": "b1", "html": caseB["html"]})
	require.NotNil(t, ra["dumps"])
	require.NotNil(t, rb["dumps"])
	waitWrites(t, a, 1)
	waitWrites(t, b, 1)
	fromA := b.send(t, map[string]any{"id": "b2", "html": caseA["html"]})
	fromB := a.send(t, map[string]any{"id": "a2", "html": caseB["html"]})
	assert.Equal(t, []any{"chromium"}, fromA["stored"])
	assert.Equal(t, []any{"chromium"}, fromB["stored"])
	assert.Equal(t, ra["dumps"], fromA["dumps"])
	assert.Equal(t, rb["dumps"], fromB["dumps"])
}

// waitWrites polls ping until the oracle's store has committed n answers.
func waitWrites(t *testing.T, c *client, n float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := c.send(t, map[string]any{"op": "ping"})
		st, _ := p["store"].(map[string]any)
		require.NotNil(t, st, "ping reports the store")
		if w, _ := st["writes"].(float64); w >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "store writes still %v after 30s", st["writes"])
		time.Sleep(50 * time.Millisecond)
	}
}

// A store file that is not a database is logged, and every answer is live; the
// file is left alone.
func TestBrokenStoreFileMeansLiveAnswers(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	path := filepath.Join(t.TempDir(), "store.sqlite")
	junk := bytes.Repeat([]byte("this is not a database\n"), 1000)
	require.NoError(t, os.WriteFile(path, junk, 0o644))
	out, log := runBatch(t, nil, []string{"--store", path, "--engines=chromium"}, storeCases[:1])
	_, stored := splitStored(t, out["g"])
	assert.Empty(t, stored)
	assert.Contains(t, out["g"], `"dumps":{"chromium"`)
	assert.Contains(t, log, "store cannot be opened; serving without it")
	got, _ := os.ReadFile(path)
	assert.Equal(t, junk, got)
}

// Tests start oracles with the store off unless they name one (TestMain sets
// ORACLE_STORE=off): nothing in the user's cache can answer a test. The ground-truth
// oracle names none, and logs at info, where "store off" is.
func TestStoreIsOffInTestsUnlessNamed(t *testing.T) {
	c := gtOracle(t)
	p := c.send(t, map[string]any{"op": "ping"})
	assert.NotContains(t, p, "store")
	assert.Contains(t, c.stderr.String(), "store off")
}

// storeCmd runs `oracle store args...` and returns its stdout.
func storeCmd(t *testing.T, args ...string) string {
	t.Helper()
	testutil.NeedsBrowsers(t) // no binary is built under -short
	cmd := exec.Command(oracleBin, append([]string{"store"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
	return stdout.String()
}

// stats, export and prune on a store one run filled: export writes the responses the
// oracle gave, byte for byte, which compare reads; prune empties it.
func TestStoreCommandsSeeExportAndPruneTheStore(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	path := filepath.Join(t.TempDir(), "store.sqlite")
	live, _ := runBatch(t, nil, []string{"--store", path, "--engines=chromium"}, storeCases)

	var stats store.Summary
	require.NoError(t, json.Unmarshal([]byte(storeCmd(t, "stats", "--store", path)), &stats))
	assert.Equal(t, int64(3), stats.Entries, "geometry, reflect and trace; not the failed case")
	require.Len(t, stats.ByBuild, 1)
	for build, n := range stats.ByBuild {
		assert.Regexp(t, `^chromium \d+\.`, build)
		assert.Equal(t, int64(3), n)
	}

	exported := storeCmd(t, "export", "--store", path)
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(exported), "\n") {
		var m struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		lines[m.ID] = l
	}
	require.Len(t, lines, 3)
	for _, id := range []string{"g", "r", "t"} {
		assert.Equal(t, live[id], lines[id], "%s: export is the oracle's own answer", id)
	}

	compareBin := filepath.Join(t.TempDir(), "compare")
	build := exec.Command("go", "build", "-o", compareBin, "../compare")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	file := filepath.Join(t.TempDir(), "export.ndjson")
	require.NoError(t, os.WriteFile(file, []byte(exported), 0o644))
	out, err := exec.Command(compareBin, "--oracle", file).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "3 cases: 3 no-candidate; exit 0", "the trace is a case too")

	assert.JSONEq(t, `{"deleted":3,"entries":0}`, storeCmd(t, "prune", "--store", path))
	require.NoError(t, json.Unmarshal([]byte(storeCmd(t, "stats", "--store", path)), &stats))
	assert.Zero(t, stats.Entries)
}

// Pure: --engine-memory's values.
func TestParseEngineMemory(t *testing.T) {
	n, err := parseEngineMemory("0")
	require.NoError(t, err)
	assert.Zero(t, n)
	n, err = parseEngineMemory("600M")
	require.NoError(t, err)
	assert.EqualValues(t, 600<<20, n)
	n, err = parseEngineMemory("auto")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, int64(1<<30))
	assert.LessOrEqual(t, n, max(memTotal()/4, 1<<30))
	_, err = parseEngineMemory("lots")
	assert.Error(t, err)
}
