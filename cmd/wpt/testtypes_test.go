package main

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
	"github.com/layout-oracle/oracle/trace"
)

func TestEmptyTraceIsFlagged(t *testing.T) {
	// The harness completed OK with no subtest: the held-out .any.js tests sent as a
	// script after load gave exactly this, reported as OK before.
	st, m, subs := harnessResult(&trace.Trace{Records: []trace.Record{valueRecord(t, 0, "(harness)", "OK")}})
	assert.Equal(t, "ERROR", st)
	require.NotNil(t, m)
	assert.Contains(t, *m, "empty trace")
	assert.Equal(t, []wptSubtest{}, subs)

	st, m, _ = harnessResult(&trace.Trace{Records: []trace.Record{valueRecord(t, 0, "(harness)", "TIMEOUT")}})
	assert.Equal(t, "TIMEOUT", st)
	assert.Contains(t, *m, "empty trace")

	st, m, _ = harnessResult(&trace.Trace{TimedOut: true})
	assert.Equal(t, "TIMEOUT", st)
	assert.Contains(t, *m, "empty trace")
}

func TestPlanSpecialListsScriptTestsAndSkips(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) []byte {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return []byte(body)
	}
	type got struct{ URL, Skip string }
	plan := func(rel, body string) ([]got, bool) {
		ts, ok := planSpecial(nil, root, rel, write(rel, body))
		var out []got
		for _, t := range ts {
			out = append(out, got{t.URL, t.Skip})
		}
		return out, ok
	}

	g, ok := plan("a/x.any.js", "test(() => {});\n")
	assert.True(t, ok)
	assert.Equal(t, []got{{"/a/x.any.html", ""}, {"/a/x.any.worker.html", ""}}, g)

	g, _ = plan("a/w.any.js", "// META: global=worker,jsshell\n// META: variant=?1\n// META: variant=?2\n")
	require.Len(t, g, 8)
	assert.Equal(t, got{"/a/w.any.js?1", skipGlobal("jsshell")}, g[0])
	assert.Equal(t, "/a/w.any.serviceworker.html?1", g[2].URL)
	assert.Contains(t, g[2].Skip, "HTTPS")
	assert.Equal(t, got{"/a/w.any.sharedworker.html?2", ""}, g[5])
	assert.Equal(t, []got{{"/a/w.any.worker.html?1", ""}, {"/a/w.any.worker.html?2", ""}}, g[6:])

	g, _ = plan("a/v.window.js", "")
	assert.Equal(t, []got{{"/a/v.window.html", ""}}, g)
	g, _ = plan("a/k.worker.js", "")
	assert.Equal(t, []got{{"/a/k.worker.html", ""}}, g)
	g, _ = plan("a/h.https.any.js", "// META: global=window\n")
	assert.Equal(t, "/a/h.https.any.html", g[0].URL)
	assert.Contains(t, g[0].Skip, "HTTPS")

	th := `<script src="/resources/testharness.js"></script>`
	for rel, want := range map[string]string{
		"b/s.sub.html":  ".sub. template substitution",
		"b/td.html":     "testdriver.js",
		"b/host.html":   "get-host-info.sub.js",
		"b/py.html":     "resources/echo.py",
		"b/pipe.html":   "pipe=",
		"b/tmpl.html":   "{{domains",
		"b/hdr.html":    "/b/hdr.html.headers",
		"c/in-dir.html": "/c/__dir__.headers",
		"b/asis.html":   "x.asis",
		"b/rt-sub.html": ".sub.",
	} {
		body := th
		switch rel {
		case "b/td.html":
			body += `<script src="/resources/testdriver.js"></script>`
		case "b/host.html":
			body += `<script src="/common/get-host-info.sub.js"></script>`
		case "b/py.html":
			body += `<script>fetch("resources/echo.py?x=1")</script>`
		case "b/pipe.html":
			body += `<img src="a.png?pipe=trickle(d1)">`
		case "b/tmpl.html":
			body += `<iframe src="http://{{domains[www]}}:{{ports[http][0]}}/"></iframe>`
		case "b/hdr.html":
			write("b/hdr.html.headers", "X-A: 1\n")
		case "c/in-dir.html":
			write("c/__dir__.headers", "X-A: 1\n")
		case "b/asis.html":
			body += `<iframe src="x.asis"></iframe>`
		case "b/rt-sub.html":
			body = `<link rel=match href="r.sub.html">`
		}
		g, ok := plan(rel, body)
		require.True(t, ok, rel)
		require.Len(t, g, 1, rel)
		assert.Contains(t, g[0].Skip, want, rel)
	}
	// <meta name=variant>: one test per variant, as the manifest lists them.
	g, ok = plan("e/v.html", th+`<meta name="variant" content="?1-10"><META content='?11-20' name=variant><meta name=variant content="">`)
	assert.True(t, ok)
	assert.Equal(t, []got{{"/e/v.html?1-10", ""}, {"/e/v.html?11-20", ""}, {"/e/v.html", ""}}, g)
	g, _ = plan("e/v.sub.html", th+`<meta name="variant" content="?a"><meta name="variant" content="?b">`)
	require.Len(t, g, 2)
	assert.Equal(t, "/e/v.sub.html?b", g[1].URL)
	assert.Contains(t, g[1].Skip, ".sub.")

	// Tests that need nothing the docroot lacks are planned as before; JS that only
	// looks like a handler is not one.
	for rel, body := range map[string]string{
		"d/plain.html": th + `<script>test(() => assert_equals(p.py, 1))</script>`,
		"d/ref.html":   `<link rel=match href="ref-ref.html">`,
		"d/none.txt":   "not a test",
	} {
		_, ok := plan(rel, body)
		assert.False(t, ok, rel)
	}
}

func TestEngineResultsReportSkips(t *testing.T) {
	tests := []plannedTest{{URL: "/a.sub.html", Kind: kindTestharness, Skip: "needs .sub."}}
	res := engineResults("chromium", tests, map[string]answer{}, 0, false)
	require.Len(t, res, 1)
	assert.Equal(t, "SKIP", res[0].Status)
	assert.Equal(t, "needs .sub.", *res[0].Message)
	assert.Equal(t, []wptSubtest{}, res[0].Subtests)
}

// TestRunScriptTests runs real WPT script tests (testdata/wpt/dom/events: an .any.js
// in its window and worker wrappers, a .worker.js, a .sub.window.js) and the
// oracle-types files (a worker-only test in dedicated and shared workers) in the
// three engines.
func TestRunScriptTests(t *testing.T) {
	testutil.NeedsBrowsers(t)
	bin := filepath.Join(t.TempDir(), "oracle")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/layout-oracle/oracle/cmd/oracle").CombinedOutput()
	require.NoError(t, err, "%s", out)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--root", "../../testdata/wpt", "--out", dir, "--oracle", bin,
		"dom", "oracle-types", "--", "--pages=1", "--log-level=warn"}, nil, &stdout, &stderr)
	log, _ := os.ReadFile(filepath.Join(dir, "oracle.log"))
	require.Equal(t, 0, code, "stderr: %s\noracle log: %s", stderr.String(), log)

	type res struct {
		Status   string
		Subtests int
	}
	want := map[string]res{
		"/dom/events/Event-constructors.any.html":                    {"OK", 13},
		"/dom/events/Event-constructors.any.worker.html":             {"OK", 13},
		"/dom/events/event-global.worker.html":                       {"OK", 1},
		"/dom/events/EventListener-addEventListener.sub.window.html": {"SKIP", 0},
		"/oracle-types/harness-error.html":                           {"ERROR", 1},
		"/oracle-types/headers.any.html":                             {"SKIP", 0},
		"/oracle-types/no-subtest.html":                              {"TIMEOUT", 0},
		"/oracle-types/testdriver-click.html":                        {"SKIP", 0},
		"/oracle-types/variants.html?x":                              {"OK", 1},
		"/oracle-types/variants.html?y":                              {"OK", 1},
		"/oracle-types/worker-only.any.serviceworker.html?a":         {"SKIP", 0},
		"/oracle-types/worker-only.any.serviceworker.html?b":         {"SKIP", 0},
		"/oracle-types/worker-only.any.sharedworker.html?a":          {"OK", 1},
		"/oracle-types/worker-only.any.sharedworker.html?b":          {"OK", 1},
		"/oracle-types/worker-only.any.worker.html?a":                {"OK", 1},
		"/oracle-types/worker-only.any.worker.html?b":                {"OK", 1},
	}
	for _, engine := range []string{"chromium", "firefox", "webkit"} {
		b, err := os.ReadFile(filepath.Join(dir, "wptreport-"+engine+".json"))
		require.NoError(t, err)
		requireWptreportSchema(t, b)
		var rep wptReport
		require.NoError(t, json.Unmarshal(b, &rep))
		got := map[string]res{}
		for _, r := range rep.Results {
			got[r.Test] = res{r.Status, len(r.Subtests)}
			switch {
			case r.Status == "ERROR":
				// The harness's own message, in this engine's words (the ErrorEvent's
				// message: Chromium's "Uncaught Error: ...", Firefox's and WebKit's
				// "Error: ...").
				require.NotNil(t, r.Message, r.Test)
				assert.Contains(t, *r.Message, "Error: boom outside any test", "%s %s", engine, r.Test)
				assert.Equal(t, "PASS", r.Subtests[0].Status, "%s %s", engine, r.Test)
				assert.Nil(t, r.Subtests[0].Message, "%s %s: a PASS has message null", engine, r.Test)
			case r.Status == "SKIP" || r.Status == "TIMEOUT":
				require.NotNil(t, r.Message, r.Test)
				if r.Status == "TIMEOUT" {
					assert.Contains(t, *r.Message, "empty trace", r.Test)
				}
			default:
				for _, s := range r.Subtests {
					assert.Equal(t, "PASS", s.Status, "%s %s: %s", engine, r.Test, s.Name)
				}
				if strings.HasPrefix(r.Test, "/oracle-types/variants.html") {
					assert.Equal(t, "variant "+strings.TrimPrefix(r.Test, "/oracle-types/variants.html"), r.Subtests[0].Name)
				}
			}
		}
		assert.Equal(t, want, got, engine)
	}
}
