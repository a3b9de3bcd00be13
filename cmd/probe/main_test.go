package main

// cmd/probe against the real three engines: no mocks. What the tests pin is what was
// observed on the development host (Chromium 156.0.8078.114, Firefox ESR 153.8.0,
// WebKitGTK 2.50.6; docs/probes.md): a change here is a change in an engine, or in
// the harness, and either deserves a look.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/probes"
	"github.com/layout-oracle/oracle/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runJSON runs the command with --json and decodes its lines.
func runJSON(t *testing.T, args ...string) (int, map[string]probes.Result, Summary, string) {
	t.Helper()
	testutil.NeedsBrowsers(t)
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"--json"}, args...), &stdout, &stderr)
	results := map[string]probes.Result{}
	var sum Summary
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.Contains(line, []byte(`"summary":true`)) {
			require.NoError(t, json.Unmarshal(line, &sum), "summary line")
			continue
		}
		var r probes.Result
		require.NoError(t, json.Unmarshal(line, &r), "probe line %s", line)
		results[r.Probe] = r
	}
	require.True(t, sum.Summary, "no summary line; stderr:\n%s", stderr.String())
	return code, results, sum, stderr.String()
}

func allOK(t *testing.T, r probes.Result) {
	t.Helper()
	assert.False(t, r.Failed, "%s failed: %v", r.Probe, r.Engines)
	for _, e := range browser.AllEngines {
		assert.Equal(t, probes.StatusOK, r.Engines[e].Status, "%s on %s: %s", r.Probe, e, r.Engines[e].Error)
		assert.NotEmpty(t, r.Engines[e].Version, "%s on %s: no version", r.Probe, e)
	}
}

func TestProbesDefaultProfile(t *testing.T) {
	code, res, sum, stderr := runJSON(t)
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	assert.True(t, sum.OK)
	assert.Equal(t, "default", sum.Profile)
	assert.Equal(t, len(probes.Names()), sum.Probes)
	assert.Empty(t, sum.Failed)
	assert.Len(t, sum.Versions, 3)

	// Every engine pair agrees: event order, microtask order, URL's shape, the box
	// model, reflection, and the rendered oscillator within DefaultBufferTolerance.
	for _, name := range []string{"audio-offline-oscillator", "event-bubble-order", "microtask-order",
		"url-idl-shape", "box-model", "input-value-reflection"} {
		r, ok := res[name]
		require.True(t, ok, "no result for %s", name)
		allOK(t, r)
		assert.Equal(t, vote.Unanimous, r.Vote.Kind, "%s: %+v notes %v", name, r.Vote, r.Notes)
		require.Len(t, r.Pairs, 3, name)
		for _, p := range r.Pairs {
			assert.True(t, p.Agree, "%s: %s vs %s: %s", name, p.A, p.B, p.Detail)
		}
	}

	// The canvas: the pixel-aligned rect agrees exactly everywhere; the anti-aliased
	// circle's edge is Firefox's own (62 levels off at most, observed), while
	// Chromium and WebKit agree byte for byte. A difference, not a failure.
	canvas := res["canvas-getimagedata"]
	allOK(t, canvas)
	assert.Equal(t, vote.Result{Kind: vote.Majority, Majority: []string{"chromium", "webkit"}, Outlier: "firefox"}, canvas.Vote)
	for _, p := range canvas.Pairs {
		assert.Equal(t, p.A != "firefox" && p.B != "firefox", p.Agree, "%s vs %s: %s", p.A, p.B, p.Detail)
		if !p.Agree {
			assert.Contains(t, p.Detail, "antialiased-circle")
			assert.NotContains(t, p.Detail, "aligned-rect")
		}
	}
	assert.Contains(t, strings.Join(canvas.Notes, "\n"), "chromium-webkit 0,")

	// The camera needs the media profile: skipped with the reason, not failed.
	cam := res["fake-camera-track-settings"]
	assert.False(t, cam.Failed)
	assert.Contains(t, cam.Skipped, "--profile=media")
	for _, e := range browser.AllEngines {
		assert.Equal(t, probes.StatusSkipped, cam.Engines[e].Status)
	}
	// So do the emulation probes.
	for _, c := range probes.EmulationChecks {
		assert.Contains(t, res[c.Name].Skipped, "--profile=emulation", c.Name)
	}
	assert.Equal(t, 1+len(probes.EmulationChecks), sum.Skipped)
	assert.Equal(t, map[string]int{"unanimous": 6, "majority": 2}, sum.Vote)

	// The pinned environment: every engine gives the pinned answers (else it would
	// fail), and the only records that differ are the documented platform
	// differences, both WebKitGTK's.
	env := res["environment"]
	allOK(t, env)
	assert.Equal(t, vote.Result{Kind: vote.Majority, Majority: []string{"chromium", "firefox"}, Outlier: "webkit"}, env.Vote)
	var differing []string
	for _, n := range env.Notes {
		if strings.HasPrefix(n, "record ") {
			differing = append(differing, n[:strings.Index(n, ":")])
		}
	}
	assert.Equal(t, []string{"record 25 (media display-mode)", "record 28 (media inverted-colors)"}, differing, "%v", env.Notes)

	// The table a person reads: the same results, one row per probe.
	var table bytes.Buffer
	var ordered []probes.Result
	for _, name := range probes.Names() {
		ordered = append(ordered, res[name])
	}
	printTable(&table, ordered, browser.AllEngines, oracle.PingResponse{Versions: sum.Versions, Routes: sum.Routes}, sum)
	lines := strings.Split(table.String(), "\n")
	header := strings.Join(strings.Fields(lines[5]), " ")
	assert.Equal(t, "probe chromium firefox webkit pairwise agreement vote outlier", header, table.String())
	row := func(name string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return strings.Join(f, " ")
			}
		}
		return ""
	}
	assert.Equal(t, "canvas-getimagedata ok ok ok C≠F C=W F≠W majority firefox", row("canvas-getimagedata"))
	assert.Equal(t, "microtask-order ok ok ok C=F C=W F=W unanimous -", row("microtask-order"))
	assert.Equal(t, "fake-camera-track-settings skipped skipped skipped - skipped -", row("fake-camera-track-settings"))
	assert.Contains(t, table.String(), "ok: every supported probe ran in every engine")
}

// Under --profile=emulation the emulation probes run in every engine and pass their
// checks: the fixed values wherever a trace lists the emulation (Chromium all three,
// Firefox the position), and every engine ends its trace in time.
func TestProbeEmulationProfile(t *testing.T) {
	var names []string
	for _, c := range probes.EmulationChecks {
		names = append(names, c.Name)
	}
	code, res, sum, stderr := runJSON(t, "--profile=emulation", "--only="+strings.Join(names, ","))
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	assert.Equal(t, "emulation", sum.Profile)
	assert.Equal(t, len(names), sum.Probes)
	for _, n := range names {
		allOK(t, res[n])
		// Chromium emulates more than Firefox (the position only) and WebKitGTK
		// (nothing): no one is outvoted on hardware it did not emulate.
		assert.Empty(t, res[n].Vote.Outlier, "%s: notes %v", n, res[n].Notes)
		assert.Contains(t, strings.Join(res[n].Notes, "\n"), "webkit not comparable: it emulated [none]", n)
	}
}

func TestProbeFakeCameraUnderMedia(t *testing.T) {
	code, res, sum, stderr := runJSON(t, "--profile=media", "--only=fake-camera-track-settings")
	require.Equal(t, 0, code, "stderr:\n%s", stderr)
	assert.Equal(t, 1, sum.Probes)
	cam := res["fake-camera-track-settings"]
	allOK(t, cam)
	// Each engine's fake track reports its own key set (Chromium 11 keys, Firefox 7,
	// WebKit 9): no two agree, so the probe is Split -- a platform difference the
	// probe exists to surface, not a harness failure.
	assert.Equal(t, vote.Split, cam.Vote.Kind, "notes %v", cam.Notes)
	for _, p := range cam.Pairs {
		assert.False(t, p.Agree, "%s vs %s", p.A, p.B)
	}
	notes := strings.Join(cam.Notes, "\n")
	assert.Contains(t, notes, "record 1 (settings-keys): split")
	assert.Contains(t, notes, "record 3 (frameRate): majority, outlier chromium")
}

func TestProbeFailureNamesTheProbe(t *testing.T) {
	// A real broken route, no test hook: Chromium behind a dead proxy that loopback
	// is not exempt from. setContent pages still work (geometry, reflection), trace
	// pages, served from the oracle's localhost origin, cannot load.
	wrapper := deadProxyChromium(t)
	code, res, sum, stderr := runJSON(t, "--engines=chromium,firefox", "--chromium-path="+wrapper,
		"--only=microtask-order,box-model")
	assert.Equal(t, 1, code, "stderr:\n%s", stderr)
	assert.False(t, sum.OK)
	assert.Equal(t, []string{"microtask-order"}, sum.Failed)
	assert.Contains(t, stderr, "probe: FAILED microtask-order (chromium: ")
	assert.Contains(t, stderr, "ERR_PROXY_CONNECTION_FAILED")

	mt := res["microtask-order"]
	assert.Equal(t, probes.StatusError, mt.Engines["chromium"].Status)
	assert.Equal(t, probes.StatusOK, mt.Engines["firefox"].Status)
	assert.Equal(t, vote.Single, mt.Vote.Kind)
	_, hasWebKit := mt.Engines["webkit"]
	assert.False(t, hasWebKit, "webkit was not asked for")

	box := res["box-model"]
	assert.False(t, box.Failed)
	assert.Equal(t, vote.Agree, box.Vote.Kind)
}

func TestEnvironmentProbeFailsNamingTheProperty(t *testing.T) {
	// Chromium without the oracle's fontconfig file: its monospace is Debian's
	// DejaVu Sans Mono. The probe fails that engine, naming what differs.
	p := filepath.Join(testutil.BrowserDir(t), "chromium-unpinned-fonts")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nunset FONTCONFIG_FILE\nexec "+browser.SystemChromium+" \"$@\"\n"), 0o755))
	code, res, sum, stderr := runJSON(t, "--engines=chromium,firefox", "--chromium-path="+p, "--only=environment")
	assert.Equal(t, 1, code, "stderr:\n%s", stderr)
	assert.Equal(t, []string{"environment"}, sum.Failed)
	assert.Contains(t, stderr, "probe: FAILED environment (chromium: environment: ")
	assert.Contains(t, stderr, "font monospace is DejaVu Sans Mono, want Liberation Mono")
	env := res["environment"]
	assert.Equal(t, probes.StatusError, env.Engines["chromium"].Status)
	assert.Equal(t, probes.StatusOK, env.Engines["firefox"].Status)
	assert.Equal(t, vote.Disagree, env.Vote.Kind)
}

func TestProbeBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--only=nope"}, {"--profile=nope"}, {"extra"}, {"--log-level=loud"}} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 2, run(args, &stdout, &stderr), "%v", args)
		assert.Empty(t, stdout.String(), "%v", args)
	}
	var stdout, stderr bytes.Buffer
	run([]string{"--only=box-model,nope"}, &stdout, &stderr)
	assert.Contains(t, stderr.String(), `unknown probe "nope" (known: audio-offline-oscillator,`)
}

// deadProxyChromium writes a Chromium wrapper that sends every request, loopback
// included, to a proxy port nothing listens on.
func deadProxyChromium(t *testing.T) string {
	t.Helper()
	p := filepath.Join(testutil.BrowserDir(t), "chromium-dead-proxy")
	// After the oracle's own arguments: Chromium takes the last of a repeated switch,
	// and the oracle points every engine at its origin as a proxy (network allowlist).
	script := "#!/bin/sh\nexec " + browser.SystemChromium + " \"$@\" --proxy-server=http://127.0.0.1:9 '--proxy-bypass-list=<-loopback>'\n"
	require.NoError(t, os.WriteFile(p, []byte(script), 0o755))
	return p
}

type closedWriter struct{}

func (closedWriter) Write(p []byte) (int, error) { return 0, os.ErrClosed }

// Results that cannot be written are an error with its reason on stderr, not exit 0
// (before, the JSON encoder's errors were ignored). Real Chromium, one probe.
func TestProbeReportsAResultsWriteError(t *testing.T) {
	testutil.NeedsBrowsers(t)
	var stderr strings.Builder
	code := run([]string{"--json", "--engines=chromium", "--only=box-model"}, closedWriter{}, &stderr)
	assert.Equal(t, 2, code, stderr.String())
	assert.Contains(t, stderr.String(), "probe: write results: file already closed")
}
