package probes

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/trace"
)

// environmentProperty is one answer of the pinned environment: the trace label the
// environment probe records it under, the value every engine must give, and the
// platform differences that remain (engine -> its documented other answer). What
// the oracle pins is oracle/browser/environment/environment.go; this is the probe that checks it.
type environmentProperty struct {
	Label string
	Want  string
	// Differs lists engines documented to answer otherwise (docs/environment.md, "Pinned
	// environment"): either answer passes there, so an engine that gains the feature
	// is not taken out of service for it.
	Differs map[string]string
}

// noMatch is the environment probe's answer for a media feature none of whose values
// matches: the engine does not know the feature.
const noMatch = "no value matches"

// environmentFaces are the faces the probe can name. A generic that resolves to none
// of them is reported with its measured size, so a different face shows.
var environmentFaces = []string{"Liberation Serif", "Liberation Sans", "Liberation Mono",
	"DejaVu Serif", "DejaVu Sans", "DejaVu Sans Mono"}

// environmentMedia is each media feature the probe asks about, with the values it
// tries in order; the answer is the first that matches.
var environmentMedia = []struct {
	feature string
	values  []string
}{
	{"hover", []string{"hover", "none"}},
	{"any-hover", []string{"hover", "none"}},
	{"pointer", []string{"fine", "coarse", "none"}},
	{"any-pointer", []string{"fine", "coarse", "none"}},
	{"prefers-color-scheme", []string{"light", "dark"}},
	{"prefers-reduced-motion", []string{"no-preference", "reduce"}},
	{"prefers-contrast", []string{"no-preference", "more", "less", "custom"}},
	{"forced-colors", []string{"none", "active"}},
	{"scripting", []string{"enabled", "initial-only", "none"}},
	{"update", []string{"fast", "slow", "none"}},
	{"display-mode", []string{"browser", "minimal-ui", "standalone", "fullscreen", "picture-in-picture"}},
	{"color-gamut", []string{"srgb", "p3", "rec2020"}},
	{"dynamic-range", []string{"standard", "high"}},
	{"inverted-colors", []string{"none", "inverted"}},
}

// pinnedEnvironment is what every engine must answer, in the order the probe records
// it. The table of docs/environment.md is this list.
var pinnedEnvironment = func() []environmentProperty {
	p := []environmentProperty{
		{Label: "font default", Want: environment.FaceStandard},
		{Label: "font serif", Want: environment.FaceSerif},
		{Label: "font sans-serif", Want: environment.FaceSansSerif},
		{Label: "font monospace", Want: environment.FaceMonospace},
		{Label: "font cursive", Want: environment.FaceCursive},
		{Label: "font fantasy", Want: environment.FaceFantasy},
		{Label: "font system-ui", Want: environment.FaceSystemUI},
		// No engine here implements the ui-* generics; each treats the name as a
		// family, which the fontconfig file aliases like the generic it names.
		{Label: "font ui-serif", Want: environment.FaceSerif},
		{Label: "font ui-sans-serif", Want: environment.FaceSansSerif},
		{Label: "font ui-monospace", Want: environment.FaceMonospace},
		{Label: "default font size", Want: fmt.Sprintf("%dpx", environment.DefaultFontSize)},
		{Label: "monospace font size", Want: fmt.Sprintf("%dpx", environment.DefaultMonospaceSize)},
		{Label: "scrollbar width", Want: "0px"},
		{Label: "scrollbar height", Want: "0px"},
		{Label: "device pixel ratio", Want: "1"},
	}
	differs := map[string]map[string]string{
		// MiniBrowser is not a "browser" display mode to WebKitGTK, and no setting
		// changes that.
		"display-mode": {browser.WebKit: noMatch},
		// Chromium and Firefox do not implement inverted-colors.
		"inverted-colors": {browser.Chromium: noMatch, browser.Firefox: noMatch},
	}
	for _, m := range environmentMedia {
		p = append(p, environmentProperty{Label: "media " + m.feature, Want: m.values[0], Differs: differs[m.feature]})
	}
	return p
}()

// environmentProbeJS measures the environment in the page and records one trace value
// per pinnedEnvironment label. A generic's face is found by measuring: its text at
// 50px must have the same width and height as one of the installed faces named
// explicitly, in the same engine (text metrics differ between engines, faces do not).
func environmentProbeJS() string {
	faces, _ := json.Marshal(environmentFaces)
	var media strings.Builder
	media.WriteString("[")
	for i, m := range environmentMedia {
		if i > 0 {
			media.WriteString(",")
		}
		v, _ := json.Marshal(m.values)
		fmt.Fprintf(&media, "[%q,%s]", m.feature, v)
	}
	media.WriteString("]")
	return `(function () {
  const text = 'Hamburgefonstiv WAVY 0123456789 iiiii mmmmm';
  const box = document.createElement('div');
  box.style.cssText = 'position:absolute;left:0;top:0;visibility:hidden;white-space:pre';
  document.body.appendChild(box);
  // Every span is laid out at once: one layout, not one per family.
  const generics = ['serif', 'sans-serif', 'monospace', 'cursive', 'fantasy', 'system-ui', 'ui-serif', 'ui-sans-serif', 'ui-monospace'];
  const faceNames = ` + string(faces) + `;
  const families = [''].concat(generics, faceNames.map(f => "'" + f + "'"));
  const spans = families.map(family => {
    const s = document.createElement('span');
    if (family) s.style.fontFamily = family;
    s.style.fontSize = '50px';
    s.textContent = text;
    box.appendChild(s);
    box.appendChild(document.createElement('br'));
    return s;
  });
  const sizes = {};
  spans.forEach((s, i) => { const r = s.getBoundingClientRect(); sizes[families[i]] = [r.width, r.height]; });
  const face = (family) => {
    const [w, h] = sizes[family];
    const same = faceNames.filter(f => { const [fw, fh] = sizes["'" + f + "'"]; return Math.abs(fw - w) < 0.01 && Math.abs(fh - h) < 0.01; });
    return same.length ? same.join(' or ') : 'an unknown face (' + w.toFixed(2) + 'x' + h.toFixed(2) + 'px at 50px)';
  };
  trace.value('font default', face(''));
  for (const g of generics) trace.value('font ' + g, face(g));
  trace.value('default font size', getComputedStyle(document.documentElement).fontSize);
  const mono = document.createElement('div');
  mono.style.fontFamily = 'monospace';
  box.appendChild(mono);
  trace.value('monospace font size', getComputedStyle(mono).fontSize);
  const sc = document.createElement('div');
  sc.style.cssText = 'overflow:scroll;width:100px;height:100px;border:1px solid';
  box.appendChild(sc);
  trace.value('scrollbar width', (sc.offsetWidth - sc.clientWidth - 2) + 'px');
  trace.value('scrollbar height', (sc.offsetHeight - sc.clientHeight - 2) + 'px');
  trace.value('device pixel ratio', String(devicePixelRatio));
  for (const [f, values] of ` + media.String() + `) {
    const v = values.find(v => matchMedia('(' + f + ': ' + v + ')').matches);
    trace.value('media ' + f, v === undefined ? '` + noMatch + `' : v);
  }
  box.remove();
  trace.done();
})();`
}

// selfCheckEnvironment is the pinned-environment probe: fonts per generic family,
// default sizes, scrollbar size and media features, each checked against
// pinnedEnvironment by checkEnvironment.
var selfCheckEnvironment = oracle.SelfCheck{Name: "environment",
	Request: oracle.Request{Op: oracle.OpTrace, Script: str(environmentProbeJS())},
	Expect:  checkEnvironment}

// checkEnvironment compares one engine's environment trace with pinnedEnvironment and
// names every property that differs, e.g. "monospace font size is 12px, want 13px".
func checkEnvironment(engine string, t *trace.Trace) []string {
	got := map[string]string{}
	for _, r := range t.Records {
		var s string
		if json.Unmarshal(r.Value, &s) != nil {
			s = string(r.Value)
		}
		got[r.Label] = s
	}
	var out []string
	for _, p := range pinnedEnvironment {
		v, ok := got[p.Label]
		switch {
		case !ok:
			out = append(out, p.Label+" was not measured")
		case v == p.Want:
		case p.Differs[engine] != "" && v == p.Differs[engine]:
		default:
			out = append(out, fmt.Sprintf("%s is %s, want %s", p.Label, v, p.Want))
		}
	}
	return out
}
