package main

// The pinned environment (oracle/browser/environment/environment.go), against the real three engines.
// Each test reproduces a difference measured before the environment was pinned
// (docs/environment.md) with its own in-page measurement, not the
// environment probe's, so a fault in the probe cannot hide one here.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceValues runs script as a trace in every engine and returns each engine's
// records as label -> decoded value.
func traceValues(t *testing.T, script string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for e, tr := range traceAll(t, shared.get(t), "", script) {
		require.Equal(t, false, tr["timed_out"], "%s timed out", e)
		out[e] = map[string]any{}
		for _, r := range records(tr) {
			out[e][r["label"].(string)] = r["value"]
		}
	}
	return out
}

// Before: serif was Liberation Serif / DejaVu Serif / DejaVu Sans, sans-serif and
// monospace differed too. Now each generic is the same face everywhere, found by
// measuring its text against each installed face named explicitly in the same
// engine, and the widths agree across engines within what the engines' text metrics
// allow: WebKitGTK rounds each glyph advance to a whole pixel, so at 100px its widths
// are within 1.5% of the others', where a different face differs by 10% or more
// (Liberation Mono and DejaVu Sans Mono, 0.3% apart, the face check tells apart).
func TestGenericFamiliesAreTheSameFaceInEveryEngine(t *testing.T) {
	generics := map[string]string{"serif": environment.FaceSerif, "sans-serif": environment.FaceSansSerif,
		"monospace": environment.FaceMonospace, "cursive": environment.FaceCursive, "fantasy": environment.FaceFantasy,
		"system-ui": environment.FaceSystemUI}
	faces := []string{"Liberation Serif", "Liberation Sans", "Liberation Mono", "DejaVu Serif", "DejaVu Sans", "DejaVu Sans Mono"}
	gj, _ := json.Marshal(generics)
	fj, _ := json.Marshal(faces)
	vals := traceValues(t, fmt.Sprintf(`
const text = 'The quick brown fox, WAVY 0123456789';
const measure = (family, px) => {
  const s = document.createElement('span');
  s.style.cssText = 'white-space:pre;font-size:' + px + 'px;font-family:' + family;
  s.textContent = text;
  document.body.appendChild(s);
  const r = s.getBoundingClientRect();
  s.remove();
  return [r.width, r.height];
};
const faces = %s, generics = %s;
for (const g of Object.keys(generics)) {
  const [w, h] = measure(g, 40);
  const same = faces.filter(f => { const [fw, fh] = measure("'" + f + "'", 40); return Math.abs(fw - w) < 0.01 && Math.abs(fh - h) < 0.01; });
  trace.value('face ' + g, same.join('|') || 'none');
  trace.value('width ' + g, measure(g, 100)[0]);
}
trace.done();`, fj, gj))
	for g, want := range generics {
		for _, e := range engines {
			assert.Equal(t, want, vals[e]["face "+g], "%s: generic %s", e, g)
		}
		ref := vals["chromium"]["width "+g].(float64)
		for _, e := range engines {
			w := vals[e]["width "+g].(float64)
			t.Logf("%s %s: %.3f px", e, g, w)
			assert.InDelta(t, 0, math.Abs(w-ref)/ref, 0.015, "%s: %s is %.3f px wide, chromium %.3f px", e, g, w, ref)
		}
	}
}

// Before: Firefox's default monospace size was 12px, the others' 13px.
func TestMonospaceDefaultSizeIs13pxAndTheDefault16px(t *testing.T) {
	vals := traceValues(t, `
const code = document.createElement('code'); code.textContent = 'x';
const pre = document.createElement('pre'); pre.textContent = 'x';
document.body.append(code, pre);
trace.value('code', getComputedStyle(code).fontSize);
trace.value('pre', getComputedStyle(pre).fontSize);
trace.value('html', getComputedStyle(document.documentElement).fontSize);
trace.done();`)
	for _, e := range engines {
		assert.Equal(t, "13px", vals[e]["code"], "%s <code>", e)
		assert.Equal(t, "13px", vals[e]["pre"], "%s <pre>", e)
		assert.Equal(t, "16px", vals[e]["html"], "%s default", e)
	}
}

// Before: an overflow:scroll box lost 12px to each scrollbar in Firefox, none in
// Chromium and WebKitGTK.
func TestScrollbarsTakeNoLayoutSpace(t *testing.T) {
	vals := traceValues(t, `
const s = document.createElement('div');
s.style.cssText = 'overflow:scroll;width:200px;height:120px;border:3px solid;padding:0';
const a = document.createElement('div');
a.style.cssText = 'overflow:auto;width:200px;height:120px';
a.innerHTML = '<div style="width:400px;height:400px"></div>';
document.body.append(s, a);
trace.value('scroll', [s.offsetWidth - 6 - s.clientWidth, s.offsetHeight - 6 - s.clientHeight]);
trace.value('auto', [a.offsetWidth - a.clientWidth, a.offsetHeight - a.clientHeight]);
trace.done();`)
	for _, e := range engines {
		for _, k := range []string{"scroll", "auto"} {
			v, _ := json.Marshal(vals[e][k])
			assert.JSONEq(t, `{"$shape":"array","length":2,"elements":[0,0]}`, string(v), "%s overflow:%s loses space to scrollbars", e, k)
		}
	}
}

// Before: headless Firefox matched neither (hover: hover), (any-hover: hover) nor
// (pointer: fine). Now every feature answers the same in all three, except the
// documented platform differences (docs/environment.md, "Platform differences that remain").
func TestMediaFeaturesAnswerTheSameEverywhere(t *testing.T) {
	features := map[string][]string{
		"hover": {"hover", "none"}, "any-hover": {"hover", "none"},
		"pointer": {"fine", "coarse", "none"}, "any-pointer": {"fine", "coarse", "none"},
		"prefers-color-scheme": {"light", "dark"}, "prefers-reduced-motion": {"no-preference", "reduce"},
		"prefers-contrast": {"no-preference", "more", "less", "custom"}, "forced-colors": {"none", "active"},
		"scripting": {"enabled", "initial-only", "none"}, "update": {"fast", "slow", "none"},
		"color-gamut": {"srgb", "p3", "rec2020"}, "dynamic-range": {"standard", "high"},
		"display-mode": {"browser", "minimal-ui", "standalone", "fullscreen"},
	}
	fj, _ := json.Marshal(features)
	vals := traceValues(t, fmt.Sprintf(`
const features = %s;
for (const f of Object.keys(features))
  trace.value(f, features[f].filter(v => matchMedia('(' + f + ': ' + v + ')').matches).join(' ') || '-');
trace.done();`, fj))
	want := map[string]string{"hover": "hover", "any-hover": "hover", "pointer": "fine", "any-pointer": "fine",
		"prefers-color-scheme": "light", "prefers-reduced-motion": "no-preference", "prefers-contrast": "no-preference",
		"forced-colors": "none", "scripting": "enabled", "update": "fast", "color-gamut": "srgb",
		"dynamic-range": "standard", "display-mode": "browser"}
	for f, w := range want {
		for _, e := range engines {
			if f == "display-mode" && e == "webkit" {
				// The platform difference: MiniBrowser matches no display-mode.
				assert.Equal(t, "-", vals[e][f], "webkit display-mode changed: update docs/environment.md's platform differences")
				continue
			}
			assert.Equal(t, w, vals[e][f], "%s (%s)", e, f)
		}
	}
}

// The locale, time zone and screen are the environment's, not the oracle's host's
// (the shared oracle runs under TZ=America/New_York and LANG=C.UTF-8): under C.UTF-8,
// WebKitGTK said navigator.language "C" and formatted 1234567.891 with no grouping,
// every engine took the host's time zone, and the screens were 800x600 (Chromium:
// Playwright's default is the viewport), 1366x768 (headless Firefox) and 1280x1024
// (the Xvfb), so a case with a device-width media query laid out differently in each.
func TestLocaleAndScreenAreTheSameEverywhere(t *testing.T) {
	vals := traceValues(t, `
trace.value('language', navigator.language);
trace.value('intl', Intl.DateTimeFormat().resolvedOptions().locale);
trace.value('number', (1234567.891).toLocaleString());
trace.value('time zone', Intl.DateTimeFormat().resolvedOptions().timeZone + ' ' + new Date(2020, 0, 1).getTimezoneOffset());
trace.value('screen', screen.width + 'x' + screen.height);
trace.value('device-width', matchMedia('(device-width: 1280px) and (device-height: 1024px)').matches);
trace.done();`)
	for _, e := range engines {
		assert.Equal(t, "en-US", vals[e]["language"], e)
		assert.Equal(t, "en-US", vals[e]["intl"], e)
		assert.Equal(t, "1,234,567.891", vals[e]["number"], e)
		assert.Equal(t, "UTC 0", vals[e]["time zone"], e)
		assert.Equal(t, "1280x1024", vals[e]["screen"], e)
		assert.Equal(t, true, vals[e]["device-width"], e)
	}
}

func TestPingNamesThePinnedEnvironment(t *testing.T) {
	resp := shared.get(t).send(t, map[string]any{"op": "ping"})
	assert.Equal(t, "pinned-"+environment.Version, resp["environment"])
}

// unpinnedFontsChromium is Chromium launched without the oracle's fontconfig file:
// the way the pinning would break if the environment stopped reaching a browser.
// Its monospace is then Debian's DejaVu Sans Mono, its cursive the standard face.
func unpinnedFontsChromium(t *testing.T) string {
	t.Helper()
	p := filepath.Join(testutil.BrowserDir(t), "chromium-unpinned-fonts")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nunset FONTCONFIG_FILE\nexec /usr/bin/chromium \"$@\"\n"), 0o755))
	return p
}

func TestSelfCheckTakesOutAnEngineWhoseEnvironmentDiffers(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	// WebKit, not Firefox, is the engine that serves on: any other engine shows it, and
	// WebKit's launch costs a fraction of Firefox's.
	c := startOracle(t, "--engines=chromium,webkit", "--pages=1", "--log-level=info", "--chromium-path="+unpinnedFontsChromium(t))
	defer c.close()
	ping := c.send(t, map[string]any{"op": "ping"})
	assert.Equal(t, []any{"webkit"}, ping["engines"], "chromium must not serve")
	failed, _ := ping["failed"].(map[string]any)
	why, _ := failed["chromium"].(string)
	assert.True(t, strings.HasPrefix(why, "failed self-check: environment: "), why)
	assert.Contains(t, why, "font monospace is DejaVu Sans Mono, want Liberation Mono")
	assert.NotContains(t, why, "monospace font size", "only what differs is named")
	assert.NotContains(t, why, "box-model")
	// The self-check's log line is written before serving starts, but stderr is a
	// pipe of its own: it may reach the test after ping's answer did.
	var log string
	require.Eventually(t, func() bool {
		log = c.stderr.String()
		return strings.Contains(log, `"message":"self-check"`)
	}, 10*time.Second, 20*time.Millisecond, "no self-check log line")
	assert.Contains(t, log, `"passed":["webkit"]`)
	assert.Contains(t, log, `"checks":4`)
}

// The same wrapper with --self-check=false serves, and really answers with the
// unpinned face: the check caught a real fault.
func TestUnpinnedFontsReallyChangeTheAnswer(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	c := startOracle(t, "--engines=chromium", "--pages=1", "--log-level=warn", "--self-check=false",
		"--chromium-path="+unpinnedFontsChromium(t))
	defer c.close()
	resp := c.send(t, map[string]any{"op": "trace", "script": `
const w = f => { const s = document.createElement('span'); s.style.cssText = 'font:40px ' + f; s.textContent = 'mmmm'; document.body.append(s); return s.getBoundingClientRect().height; };
trace.value('same', w('monospace') === w("'DejaVu Sans Mono'") && w('monospace') !== w("'Liberation Mono'"));
trace.done();`})
	require.Nil(t, resp["errors"])
	recs := records(resp["traces"].(map[string]any)["chromium"].(map[string]any))
	require.Len(t, recs, 1)
	assert.Equal(t, true, recs[0]["value"], "without the fontconfig file monospace is DejaVu Sans Mono")
}
