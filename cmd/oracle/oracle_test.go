package main

// End-to-end tests of the oracle binary against the real three engines: no mocks.
// One oracle process serves every test in this file (browsers stay open, as in use).

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var engines = []string{"chromium", "firefox", "webkit"}

type sharedOracle struct {
	once sync.Once
	c    *client
}

var shared sharedOracle

func (s *sharedOracle) get(t *testing.T) *client {
	testutil.NeedsBrowsers(t) // before once: a skip inside it would leave c nil for good
	s.once.Do(func() {
		// A host locale and time zone the pinned environment must not let through
		// (TestLocaleAndScreenAreTheSameEverywhere).
		s.c = spawnOracle(t, oracleBin, []string{"TZ=America/New_York", "LANG=C.UTF-8", "LANGUAGE=de_DE", "LC_ALL="}, "--log-level=warn")
		s.c.waitStarted(t)
	})
	return s.c
}

func (s *sharedOracle) close() {
	if s.c != nil {
		s.c.close()
	}
}

// testCases are the bundled demo cases, by id.
func testCases(t *testing.T) map[string]map[string]any {
	f, err := os.Open("../../testdata/cases.ndjson")
	require.NoError(t, err)
	defer f.Close()
	cases := map[string]map[string]any{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		cases[m["id"].(string)] = m
	}
	return cases
}

// dumpOf runs a bundled case and returns each engine's dump, requiring all three.
func dumpOf(t *testing.T, caseID string) map[string]dumpJSON {
	t.Helper()
	req := testCases(t)[caseID]
	require.NotNil(t, req, "no bundled case %q", caseID)
	resp := shared.get(t).send(t, req)
	require.Nil(t, resp["errors"], "case %s: engine errors", caseID)
	raw, _ := json.Marshal(resp["dumps"])
	var dumps map[string]dumpJSON
	require.NoError(t, json.Unmarshal(raw, &dumps))
	require.Len(t, dumps, 3)
	return dumps
}

type rect struct{ X, Y, W, H float64 }

type dumpJSON struct {
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Viewport      struct{ Width, Height float64 }
	Overflowed    bool `json:"overflowed"`
	Nodes         []struct {
		Index, Parent, Depth int
		Tag                  string
		Bounding             rect
		Rects                []rect
		Style                map[string]string
	} `json:"nodes"`
}

// node finds the n-th (0-based) node with tag.
func (d dumpJSON) node(t *testing.T, tag string, n int) (int, rect, []rect) {
	t.Helper()
	for i, nd := range d.Nodes {
		if nd.Tag == tag {
			if n == 0 {
				return i, nd.Bounding, nd.Rects
			}
			n--
		}
	}
	t.Fatalf("%s: no %s #%d", d.Engine, tag, n)
	return 0, rect{}, nil
}

const tol = 1.0 / 60

func assertRect(t *testing.T, engine string, want, got rect) {
	t.Helper()
	for _, c := range []struct {
		name       string
		want, got_ float64
	}{{"x", want.X, got.X}, {"y", want.Y, got.Y}, {"w", want.W, got.W}, {"h", want.H, got.H}} {
		assert.InDelta(t, c.want, c.got_, tol, "%s: %s", engine, c.name)
	}
}

func TestPingNamesExactEngineBuilds(t *testing.T) {
	resp := shared.get(t).send(t, map[string]any{"op": "ping"})
	assert.Equal(t, true, resp["ok"])
	assert.Equal(t, "default", resp["profile"])
	assert.ElementsMatch(t, []any{"chromium", "firefox", "webkit"}, resp["engines"])
	versions := resp["versions"].(map[string]any)
	// The versions come from the drivers; check each against the installed build.
	for engine, cmd := range map[string][]string{
		"chromium": {"chromium", "--version"},
		"firefox":  {"firefox-esr", "--version"},
		"webkit":   {"dpkg-query", "-W", "-f=${Version}", "libwebkit2gtk-4.1-0"},
	} {
		v, _ := versions[engine].(string)
		require.NotEmpty(t, v, engine)
		out, err := exec.Command(cmd[0], cmd[1:]...).Output()
		require.NoError(t, err)
		assert.Contains(t, string(out), v, "%s: ping version %q is not the installed build (%s)", engine, v, out)
	}
}

func TestFixedBlocksHaveKnownGeometry(t *testing.T) {
	for engine, d := range dumpOf(t, "fixed-blocks") {
		assert.Equal(t, engine, d.Engine)
		assert.NotEmpty(t, d.EngineVersion)
		assert.Equal(t, 800.0, d.Viewport.Width)
		assert.Equal(t, 600.0, d.Viewport.Height)
		assert.False(t, d.Overflowed, engine)
		var tags []string
		for i, n := range d.Nodes {
			assert.Equal(t, i, n.Index)
			tags = append(tags, n.Tag)
		}
		assert.Equal(t, []string{"HTML", "HEAD", "STYLE", "BODY", "DIV", "DIV"}, tags, engine)
		assert.Equal(t, -1, d.Nodes[0].Parent)
		assert.Equal(t, 3, d.Nodes[4].Parent, "DIV's parent is BODY")
		assert.Equal(t, 2, d.Nodes[4].Depth)
		_, first, _ := d.node(t, "DIV", 0)
		_, second, _ := d.node(t, "DIV", 1)
		assertRect(t, engine, rect{0, 0, 100, 50}, first)
		assertRect(t, engine, rect{10, 50, 200, 30}, second)
		style := d.Nodes[4].Style
		assert.Len(t, style, 27, "the whole style subset on every node")
		assert.Equal(t, "block", style["display"])
		assert.Equal(t, "100px", style["width"])
		assert.Equal(t, "10px", d.Nodes[5].Style["margin-left"])
	}
}

func TestBoxModel(t *testing.T) {
	for engine, d := range dumpOf(t, "box-model") {
		_, outer, _ := d.node(t, "DIV", 0)
		_, inner, _ := d.node(t, "DIV", 1)
		// content-box 100x40, padding 5/10, border 2, margin-top 20, margin-left 30.
		assertRect(t, engine, rect{30, 20, 124, 54}, outer)
		assertRect(t, engine, rect{42, 27, 50, 10}, inner)
		assert.Equal(t, "2px", d.Nodes[4].Style["border-top-width"], engine)
	}
}

func TestDisplayNoneHasNoBoxes(t *testing.T) {
	for engine, d := range dumpOf(t, "display-none") {
		for _, tag := range []string{"DIV", "SPAN"} {
			_, b, rects := d.node(t, tag, 0)
			assert.NotNil(t, rects, "%s %s: rects is an empty array, not null", engine, tag)
			assert.Empty(t, rects, "%s %s", engine, tag)
			assert.Equal(t, rect{}, b, "%s %s: bounding zeroed", engine, tag)
		}
		_, p, rects := d.node(t, "P", 0)
		assert.Len(t, rects, 1)
		assertRect(t, engine, rect{0, 0, 800, 20}, p)
	}
}

func TestInlineSplitOverTwoLinesHasTwoFragments(t *testing.T) {
	for engine, d := range dumpOf(t, "inline-two-lines") {
		_, b, rects := d.node(t, "SPAN", 0)
		require.Len(t, rects, 2, engine)
		assert.Greater(t, rects[1].Y, rects[0].Y, "%s: second fragment on a later line", engine)
		assert.InDelta(t, 20, rects[0].H, 4, engine)
		assert.InDelta(t, rects[0].Y, b.Y, tol, "%s: bounding starts at the first fragment", engine)
	}
}

func TestOverflowedCaseIsFlagged(t *testing.T) {
	for engine, d := range dumpOf(t, "overflowed") {
		assert.True(t, d.Overflowed, engine)
	}
	for engine, d := range dumpOf(t, "fixed-blocks") {
		assert.False(t, d.Overflowed, engine)
	}
}

func TestScriptMutatesBeforeTheWalk(t *testing.T) {
	for engine, d := range dumpOf(t, "script-mutation") {
		i, b, _ := d.node(t, "B", 0)
		_, a, _ := d.node(t, "DIV", 0)
		assert.Equal(t, i-1, d.Nodes[i].Parent, "%s: B is the DIV's child", engine)
		assertRect(t, engine, rect{a.X, a.Y, 40, 7}, b)
	}
}

func TestThrowingScriptIsAnEngineError(t *testing.T) {
	c := shared.get(t)
	resp := c.send(t, testCases(t)["script-throws"])
	assert.Empty(t, resp["dumps"])
	errs := resp["errors"].(map[string]any)
	for _, e := range engines {
		assert.Contains(t, errs[e], "script threw: TypeError", e)
	}
	// And the engines still serve the next case.
	assert.Len(t, dumpOf(t, "fixed-blocks"), 3)
}

func TestSubpixelHeightsWithinTolerance(t *testing.T) {
	for engine, d := range dumpOf(t, "subpixel") {
		_, a, _ := d.node(t, "DIV", 0)
		_, b, _ := d.node(t, "DIV", 1)
		assert.InDelta(t, 33.3, a.H, tol, engine)
		assert.InDelta(t, 10.5, b.W, tol, engine)
		assert.InDelta(t, 1.25, b.H, tol, engine)
		assert.NotEqual(t, math.Round(a.H), a.H, "%s: full precision, not rounded", engine)
	}
}

func TestEnginesSubsetAndUnknownEngine(t *testing.T) {
	c := shared.get(t)
	resp := c.send(t, map[string]any{"html": "<p>", "engines": []string{"webkit"}})
	dumps := resp["dumps"].(map[string]any)
	assert.Len(t, dumps, 1)
	assert.Contains(t, dumps, "webkit")
	resp = c.send(t, map[string]any{"id": "bad-engine", "html": "<p>", "engines": []string{"servo"}})
	assert.Contains(t, resp["error"], `unknown engine "servo"`)
}

func TestMalformedLinesAreEachAnsweredAndServingGoesOn(t *testing.T) {
	c := shared.get(t)
	for _, tc := range []struct{ line, id, want string }{
		{`this is not json`, `null`, "request must be a JSON object"},
		{`{"id":"m1","html":`, `null`, "invalid JSON"},
		{`{"html":"<p>"}`, `null`, `request has no "id"`},
		{`{"id":"m2","op":"fly"}`, `"m2"`, `unknown op "fly"`},
		{`{"id":"m3","html":42}`, `"m3"`, `field "html" must be a string`},
		{`{"id":"m4","html":"<p>","script":["x"]}`, `"m4"`, `field "script" must be a string`},
		{`{"id":5,"html":"<p>","engines":[1]}`, `5`, `field "engines" must be an array of strings`},
	} {
		resp := c.sendRaw(t, tc.line, tc.id)
		assert.Contains(t, resp["error"], tc.want, tc.line)
	}
	resp := c.send(t, map[string]any{"op": "ping"})
	assert.Equal(t, true, resp["ok"], "still serving after malformed lines")
}

// TestShutdownAndEOFLeaveNoBrowserBehind runs its own single-engine oracles, so it can
// end them.
func TestShutdownAndEOFLeaveNoBrowserBehind(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	for _, how := range []string{"shutdown", "eof"} {
		t.Run(how, func(t *testing.T) {
			c := startOracle(t, "--engines=chromium,webkit", "--log-level=warn")
			resp := c.send(t, map[string]any{"html": "<p>", "engines": []string{"chromium", "firefox"}})
			assert.Equal(t, map[string]any{"firefox": "engine not launched"}, resp["errors"])
			kids := descendants(c.pid())
			require.NotEmpty(t, kids, "the browsers run below the oracle")
			if how == "shutdown" {
				resp := c.send(t, map[string]any{"op": "shutdown"})
				assert.Equal(t, true, resp["ok"])
			}
			assert.Equal(t, 0, c.exitCode(t, 30*time.Second))
			deadline := time.Now().Add(5 * time.Second)
			for _, pid := range kids {
				for alive(pid) && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
				}
				assert.False(t, alive(pid), "process %d outlived the oracle", pid)
			}
			assert.NotContains(t, c.stderr.String(), `"level":"error"`)
		})
	}
}

// TestKilledDriversLeaveNoBrowserBehind: the oracle and its Playwright drivers die by
// SIGKILL at once (the OOM killer, a kill of the oracle's process group, or a kill
// during a relaunch), so neither the oracle's shutdown nor the driver's exit handler
// runs. The browsers, in process groups of their own, must still end: Firefox, on a
// debugging port rather than a pipe, lived on before the wrapper's --pdeathsig.
func TestKilledDriversLeaveNoBrowserBehind(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	c := startOracle(t, "--engines=chromium,firefox", "--pages=1", "--self-check=false", "--log-level=warn")
	resp := c.send(t, map[string]any{"html": "<p>"})
	require.Len(t, resp["dumps"], 2, "%v", resp["errors"])
	var drivers, browsers []int
	for _, pid := range children(c.pid()) {
		if kids := children(pid); len(kids) > 0 {
			drivers, browsers = append(drivers, pid), append(browsers, kids...)
		}
	}
	require.NotEmpty(t, browsers, "the drivers' children: the browsers")
	for _, pid := range append([]int{c.pid()}, drivers...) {
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, pid := range browsers {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		assert.False(t, alive(pid), "browser %d outlived its killed driver", pid)
	}
}

func TestEveryBundledCaseIsAnsweredOnce(t *testing.T) {
	c := shared.get(t)
	for id, req := range testCases(t) {
		resp := c.send(t, req)
		assert.Equal(t, id, resp["id"])
		_, geometry := resp["dumps"]
		_, reflection := resp["states"]
		assert.True(t, geometry || reflection, "%s: answered with a result, not a request error: %v", id, resp["error"])
	}
}
