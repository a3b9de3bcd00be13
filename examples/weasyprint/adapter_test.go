// Package weasyprint holds the worked adapter of a real independent engine
// (README.md here); its tests run the adapter on the bundled cases.
package weasyprint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/candidate"
	"github.com/layout-oracle/oracle/internal/testutil"
)

// python is Debian's, which has the weasyprint package (scripts/setup.sh).
const python = "/usr/bin/python3"

func needWeasyPrint(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import weasyprint").Run(); err != nil {
		t.Skipf("%s cannot import weasyprint (scripts/setup.sh installs the Debian package): %v", python, err)
	}
}

type bundledCase struct {
	ID     string  `json:"id"`
	HTML   *string `json:"html"`
	Script string  `json:"script"`
	Op     string  `json:"op"`
}

// bundled is testdata/cases.ndjson's inline geometry cases, the ones a candidate scores.
func bundled(t *testing.T) []bundledCase {
	f, err := os.Open("../../testdata/cases.ndjson")
	require.NoError(t, err)
	defer f.Close()
	var out []bundledCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c bundledCase
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		if c.HTML != nil && c.Script == "" && c.Op == "" {
			out = append(out, c)
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

// elementTags is the tag of every element of doc in document order, as the DOM
// names them: what a dump's nodes must list.
func elementTags(t *testing.T, doc string) []string {
	root, err := html.Parse(strings.NewReader(doc))
	require.NoError(t, err)
	var tags []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			tags = append(tags, strings.ToUpper(n.Data))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return tags
}

// The adapter's output meets the dump contract (docs/dump-format.md) on every
// bundled case, run the way triage runs it (internal/candidate, pinned environment).
func TestAdapterMeetsTheContract(t *testing.T) {
	needWeasyPrint(t)
	env, err := candidate.Pinned()
	require.NoError(t, err)
	adapter, err := filepath.Abs("adapter.py")
	require.NoError(t, err)
	cmd := candidate.Command{Cmd: python + " " + adapter, Timeout: time.Minute, Env: env}
	subset := []string{"display", "position", "box-sizing", "direction", "writing-mode", "float", "clear",
		"width", "height", "min-width", "max-width", "min-height", "max-height",
		"margin-top", "margin-right", "margin-bottom", "margin-left",
		"padding-top", "padding-right", "padding-bottom", "padding-left",
		"border-top-width", "border-right-width", "border-bottom-width", "border-left-width",
		"overflow-x", "overflow-y"}
	for _, c := range bundled(t) {
		t.Run(c.ID, func(t *testing.T) {
			d, err := cmd.Dump(context.Background(), *c.HTML)
			require.NoError(t, err) // Dump decodes and runs dump.Validate
			assert.Equal(t, "weasyprint", d.Engine)
			assert.NotEmpty(t, d.EngineVersion)
			assert.Equal(t, dump.Viewport, d.Viewport, "the page is the oracle's viewport")
			var tags []string
			for i, n := range d.Nodes {
				tags = append(tags, n.Tag)
				assert.Equal(t, i, n.Index)
				for _, p := range subset {
					assert.Contains(t, n.Style, p, "node %d (%s)", i, n.Tag)
				}
				if len(n.Rects) == 0 {
					assert.Equal(t, dump.Rect{}, n.Bounding, "no box: a zeroed bounding (node %d %s)", i, n.Tag)
					continue
				}
				x0, y0, x1, y1 := n.Rects[0].X, n.Rects[0].Y, n.Rects[0].X+n.Rects[0].W, n.Rects[0].Y+n.Rects[0].H
				for _, r := range n.Rects[1:] {
					x0, y0, x1, y1 = min(x0, r.X), min(y0, r.Y), max(x1, r.X+r.W), max(y1, r.Y+r.H)
				}
				assert.InDelta(t, x0, n.Bounding.X, 1e-9)
				assert.InDelta(t, y0, n.Bounding.Y, 1e-9)
				assert.InDelta(t, x1-x0, n.Bounding.W, 1e-9, "bounding is the rects' union (node %d %s)", i, n.Tag)
				assert.InDelta(t, y1-y0, n.Bounding.H, 1e-9)
			}
			assert.Equal(t, elementTags(t, *c.HTML), tags, "every element, in document order")
			assert.Equal(t, "HTML", d.Nodes[0].Tag)
			assert.Equal(t, 800.0, d.Nodes[0].Bounding.W, "the root spans the viewport")
			assert.Equal(t, c.ID == "overflowed", d.Overflowed)
		})
	}
}

// The adapter's answers are scored: bin/triage runs it on the bundled cases
// against the real engines, every case gets a vote and a verdict (none is a
// candidate error), and bin/compare reads the files triage wrote.
func TestAdapterIsScored(t *testing.T) {
	testutil.NeedsBrowsers(t)
	needWeasyPrint(t)
	dir := t.TempDir()
	for _, c := range []string{"triage", "oracle", "compare"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, c), "../../cmd/"+c).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	adapter, err := filepath.Abs("adapter.py")
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(filepath.Join(dir, "triage"), "--candidate-cmd", python+" "+adapter, "--out", out,
		"--oracle", filepath.Join(dir, "oracle"), "--oracle-flag=--store=off", "--reduce=0", "--parallel=2",
		"../../testdata/cases.ndjson")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	var ee *exec.ExitError
	if err != nil {
		require.ErrorAs(t, err, &ee)
		require.Equal(t, 1, ee.ExitCode(), "1: the candidate fails something the engines agree on")
	}
	var sum struct {
		Cases    int            `json:"cases"`
		Verdicts map[string]int `json:"verdicts"`
		Causes   int            `json:"causes"`
		Buckets  int            `json:"buckets"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	assert.Equal(t, len(bundled(t)), sum.Cases)
	assert.Zero(t, sum.Verdicts["candidate-error"], "the adapter answered every case")
	assert.Zero(t, sum.Verdicts["no-vote"])
	assert.Equal(t, sum.Cases, sum.Verdicts["pass"]+sum.Verdicts["fail"]+sum.Verdicts["discarded"])
	assert.Equal(t, 1, sum.Verdicts["discarded"], "the overflowed case")
	var buckets []json.RawMessage
	b, err = os.ReadFile(filepath.Join(out, "buckets.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &buckets))
	assert.Len(t, buckets, sum.Buckets)

	cmp := exec.Command(filepath.Join(dir, "compare"), "--json", "--oracle", filepath.Join(out, "oracle.ndjson"),
		"--candidate", filepath.Join(out, "candidate.ndjson"))
	got, err := cmp.Output()
	if err != nil {
		require.ErrorAs(t, err, &ee)
		require.Equal(t, 1, ee.ExitCode(), "compare: %s", got)
	}
	lines := bytes.Split(bytes.TrimSpace(got), []byte("\n"))
	assert.Len(t, lines, sum.Cases+1, "a line per case and the totals")
}

// adapter --server (with one worker, and with two) answers every bundled case with
// the dump the one-shot adapter writes for it, from one server process, run the way
// triage runs it (internal/candidate, pinned environment).
func TestServerModeMatchesOneShot(t *testing.T) {
	for _, server := range []string{" --server", " --server --workers 2"} {
		t.Run(strings.TrimSpace(server), func(t *testing.T) { serverMatchesOneShot(t, server) })
	}
}

func serverMatchesOneShot(t *testing.T, server string) {
	env, adapter := pinnedAdapter(t)
	one := candidate.Command{Cmd: python + " " + adapter, Timeout: time.Minute, Env: env}
	srv := &candidate.Server{Cmd: python + " " + adapter + server, Timeout: time.Minute, Env: env}
	defer srv.Close()
	for _, c := range bundled(t) {
		want, err := one.Dump(context.Background(), *c.HTML)
		require.NoError(t, err, c.ID)
		got, err := srv.Dump(context.Background(), *c.HTML)
		require.NoError(t, err, c.ID)
		assert.Equal(t, want, got, c.ID)
	}
	assert.Equal(t, 1, srv.Starts(), "one process answered every case")
}

// The real adapter as a server that kills itself on a marker case (a stand-in for
// an engine that crashes on one input): with four cases in flight, the marker
// case is a candidate error naming the signal, and every other case is answered
// with WeasyPrint's dump.
func TestServerCrashCostsOneCase(t *testing.T) {
	serverCrashCostsOneCase(t, 1)
}

// The same with two workers: the marker kills its worker, the server ends
// (exit status 70), and again only the marker case is charged, with an exit.
func TestServerWithWorkersCrashCostsOneCase(t *testing.T) {
	serverCrashCostsOneCase(t, 2)
}

func serverCrashCostsOneCase(t *testing.T, workers int) {
	env, adapter := pinnedAdapter(t)
	wrapper := filepath.Join(t.TempDir(), "crashing.py")
	require.NoError(t, os.WriteFile(wrapper, []byte(`import os, signal, sys
sys.path.insert(0, `+"\""+filepath.Dir(adapter)+"\""+`)
import adapter
real = adapter.dump_case
def dump_case(html):
    if "CRASH-MARKER" in html:
        os.kill(os.getpid(), signal.SIGSEGV)
    return real(html)
adapter.dump_case = dump_case
adapter.serve(`+strconv.Itoa(workers)+`)
`), 0o600))
	srv := &candidate.Server{Cmd: python + " " + wrapper, Timeout: time.Minute, Env: env}
	defer srv.Close()
	htmls := make([]string, 10)
	for i := range htmls {
		htmls[i] = fmt.Sprintf("<!doctype html><div style='width:%dpx'>case %d</div>", 100+i, i)
	}
	htmls[3] += "<!-- CRASH-MARKER -->"
	errs := make([]error, len(htmls))
	dumps := make([]*dump.Dump, len(htmls))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, h := range htmls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			dumps[i], errs[i] = srv.Dump(context.Background(), h)
		})
	}
	wg.Wait()
	for i := range htmls {
		if i == 3 {
			require.Error(t, errs[i])
			if workers == 1 {
				assert.Contains(t, errs[i].Error(), "signal: segmentation fault")
			} else {
				assert.Contains(t, errs[i].Error(), "exit status 70")
			}
			assert.Equal(t, "exit", candidate.KindOf(errs[i].Error()))
			continue
		}
		require.NoError(t, errs[i], "case %d", i)
		assert.Equal(t, "weasyprint", dumps[i].Engine)
		assert.Equal(t, float64(100+i), dumps[i].Nodes[3].Bounding.W, "case %d's own dump", i)
	}
}

// pinnedAdapter skips the test without WeasyPrint, and gives the pinned
// environment and the adapter's path, as triage runs it.
func pinnedAdapter(t *testing.T) ([]string, string) {
	t.Helper()
	needWeasyPrint(t)
	env, err := candidate.Pinned()
	require.NoError(t, err)
	adapter, err := filepath.Abs("adapter.py")
	require.NoError(t, err)
	return env, adapter
}

// SVG content meets the contract too: its tags are upper case, as tagName's
// upper case is in every namespace (FOREIGNOBJECT), so the dump passes the
// schema's check. Before, the adapter wrote SVG's tags as they were ("svg").
func TestAdapterSVGTagsMeetTheContract(t *testing.T) {
	env, adapter := pinnedAdapter(t)
	cmd := candidate.Command{Cmd: python + " " + adapter, Timeout: time.Minute, Env: env}
	d, err := cmd.Dump(context.Background(), `<svg width="50" height="20"><rect width="10" height="10"/><foreignObject width="5" height="5"></foreignObject></svg>`)
	require.NoError(t, err) // decoded against the schema, then dump.Validate
	var tags []string
	for _, n := range d.Nodes {
		tags = append(tags, n.Tag)
	}
	assert.Equal(t, []string{"HTML", "HEAD", "BODY", "SVG", "RECT", "FOREIGNOBJECT"}, tags)
}
