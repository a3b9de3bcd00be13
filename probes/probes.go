// Package probes is the oracle's cross-engine self-check (dump-format.md, "Probes"):
// hand-written cases run through every engine by the oracle's own request handling,
// compared pairwise and voted three-way. A real platform difference (engines
// disagreeing) is a finding, reported as a majority with an outlier or a split; only
// an engine that errored, or did not run a probe its profile supports, is a harness
// failure.
//
// Four of the probes are also the oracle's startup self-check (SelfChecks, which
// cmd/oracle passes to oracle.Start): defined here, once. One of them,
// "environment" (environment.go), also fails an engine whose answer differs from the
// pinned environment, naming the property: there engines differing is the harness's
// fault, not a finding.
package probes

import (
	"fmt"
	"strings"

	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/trace"
)

// kind is which protocol operation a probe uses.
type kind string

const (
	kindTrace    kind = "trace"
	kindGeometry kind = "geometry"
	kindReflect  kind = "reflect"
)

// probe is one hand-written case.
type probe struct {
	Name string
	// What the probe exercises, one line.
	Description string
	// Profile is the launch profile the probe needs ("" runs under any); under
	// another profile the probe is skipped with a reason, not failed.
	Profile string
	// Request is the case: Op, HTML, Script, Probes. The runner sets ID and Engines.
	Request oracle.Request
	// Expect, on a trace probe, names what is wrong with one engine's answer; an
	// engine it finds fault with fails the probe (a harness failure), as in the
	// self-check.
	Expect func(engine string, t *trace.Trace) []string
}

// kind is the probe's operation.
func (p probe) kind() kind {
	switch p.Request.Op {
	case oracle.OpTrace:
		return kindTrace
	case oracle.OpReflect:
		return kindReflect
	}
	return kindGeometry
}

func str(s string) *string { return &s }

func fromSelfCheck(c oracle.SelfCheck, description string) probe {
	return probe{Name: c.Name, Description: description, Request: *c.NewRequest(c.Name, nil), Expect: c.Expect}
}

func traceProbe(name, description, profile, html, script string) probe {
	p := probe{Name: name, Description: description, Profile: profile,
		Request: oracle.Request{Op: oracle.OpTrace, Script: str(script)}}
	if html != "" {
		p.Request.HTML = str(html)
	}
	return p
}

// all is every probe, in the order they run and are reported.
var all = []probe{
	traceProbe("audio-offline-oscillator",
		"OfflineAudioContext: a 440 Hz sine oscillator through a gain node, rendered to an AudioBuffer",
		"", "", `const ctx = new OfflineAudioContext(1, 2048, 44100);
const osc = ctx.createOscillator();
osc.type = 'sine';
osc.frequency.value = 440;
const gain = ctx.createGain();
gain.gain.value = 0.5;
osc.connect(gain).connect(ctx.destination);
osc.start(0);
ctx.startRendering().then(buf => {
  trace.value('sampleRate', buf.sampleRate);
  trace.value('rendered', buf);
  trace.done();
}, err => { trace.error('startRendering', err); trace.done(); });`),

	traceProbe("canvas-getimagedata",
		"2D canvas readback: a pixel-aligned rect (no anti-aliasing) and a filled circle (anti-aliased edge)",
		"", "", `const c = document.createElement('canvas');
c.width = 16; c.height = 16;
const g = c.getContext('2d');
g.fillStyle = '#ffffff'; g.fillRect(0, 0, 16, 16);
g.fillStyle = 'rgb(200, 30, 60)'; g.fillRect(2, 2, 6, 6);
g.beginPath(); g.arc(11.5, 11.5, 4, 0, Math.PI * 2);
g.fillStyle = 'rgb(20, 90, 220)'; g.fill();
trace.value('aligned-rect', g.getImageData(0, 0, 8, 8));
trace.value('antialiased-circle', g.getImageData(7, 7, 9, 9));
trace.done();`),

	traceProbe("event-bubble-order",
		"DOM event dispatch: a bubbling click and a non-bubbling custom event, listened on every ancestor",
		"", `<div id=outer><button id=btn>b</button></div>`, `const btn = document.getElementById('btn');
for (const t of [window, document, document.body, document.getElementById('outer'), btn]) trace.event(t, ['click', 'ping']);
btn.addEventListener('click', e => trace.value('click-at-target', [e.eventPhase, e.bubbles, e.isTrusted]));
btn.click();
btn.dispatchEvent(new Event('ping', {bubbles: false}));
trace.done();`),

	fromSelfCheck(selfCheckTrace,
		"promise/microtask settlement order: then chains, queueMicrotask, await, setTimeout, race, all"),

	traceProbe("url-idl-shape",
		"IDL shape walk: URL's prototype getters, read on new URL('https://a.example/p?q#h')",
		"", "", `trace.value('url', new URL('https://a.example/p?q#h'));
trace.done();`),

	traceProbe("fake-camera-track-settings",
		"getUserMedia({video:true}) on the fake camera, then the track's getSettings(): key set, resolution, frame rate",
		"media", "", `navigator.mediaDevices.getUserMedia({video: true}).then(stream => {
  const track = stream.getVideoTracks()[0];
  const s = track.getSettings();
  trace.value('kind', track.kind);
  trace.value('settings-keys', Object.keys(s).sort());
  trace.value('resolution', [s.width, s.height]);
  trace.value('frameRate', s.frameRate);
  stream.getTracks().forEach(t => t.stop());
  trace.done();
}, err => { trace.error('getUserMedia', err); trace.done(); });`),

	emulationProbe(SelfCheckSensors,
		"emulation profile: every Generic Sensor exposed (Accelerometer, Gyroscope, ...) read once; the fixed readings where the trace lists sensors"),
	emulationProbe(selfCheckGeolocation,
		"emulation profile: the geolocation permission, then getCurrentPosition where granted; the fixed position where the trace lists geolocation"),
	emulationProbe(selfCheckAuthenticator,
		"emulation profile: navigator.credentials.create of a resident, user-verified key; a platform credential where the trace lists authenticator"),

	fromSelfCheck(selfCheckGeometry,
		"box model: width/height, asymmetric padding, a 2px border and a margin, voted with compare.Geometry"),

	fromSelfCheck(selfCheckReflect,
		"reflection: setAttribute('value','5') on an <input>, read back as content attribute and IDL value"),

	fromSelfCheck(selfCheckEnvironment,
		"pinned environment: face per generic family (measured), default and monospace sizes, scrollbar size, media features"),
}

// Names lists every probe's name, in order.
func Names() []string {
	var out []string
	for _, p := range all {
		out = append(out, p.Name)
	}
	return out
}

// Select returns the named probes in all's order, or an error naming an unknown one.
// No names means all.
func Select(names []string) ([]probe, error) {
	if len(names) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		found := false
		for _, p := range all {
			found = found || p.Name == n
		}
		if !found {
			return nil, fmt.Errorf("unknown probe %q (known: %s)", n, strings.Join(Names(), ", "))
		}
		want[n] = true
	}
	var out []probe
	for _, p := range all {
		if want[p.Name] {
			out = append(out, p)
		}
	}
	return out, nil
}
