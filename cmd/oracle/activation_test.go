package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// activationProbe appends B for an active and B for a sticky user activation, I for
// none (navigator.userActivation.isActive, hasBeenActive).
const activationProbe = `var a=navigator.userActivation;` +
	`document.body.append(document.createElement(a&&a.isActive?'b':'i'));` +
	`document.body.append(document.createElement(a&&a.hasBeenActive?'b':'i'))`

// A page loaded with no user interaction has no user activation, and no engine may
// give a case one: Playwright's Evaluate runs with a user gesture, so Chromium's
// cases saw navigator.userActivation active and went fullscreen, where WebKitGTK's
// did not (docs/untrusted.md). Firefox is on its default route, the oracle's own BiDi
// client; its Playwright route keeps Playwright's activation (no way around it there).
func TestNoCaseRunsWithAUserActivation(t *testing.T) {
	c := wcOracle(t)
	dumps := func(t *testing.T, req map[string]any) map[string]dumpJSON {
		t.Helper()
		req["engines"] = []string{"chromium", "firefox", "webkit"}
		return dumpsOf(t, c, req)
	}
	for _, tc := range []struct {
		name string
		req  map[string]any
	}{
		{"inline script", map[string]any{"html": "<!doctype html><p>a</p><script>" + activationProbe + "</script>"}},
		{"script field", map[string]any{"html": "<!doctype html><p>a</p>", "script": activationProbe}},
		// The url case's document comes from the replace script's navigation, and its
		// script runs in the case program's evaluation.
		{"url case's script", map[string]any{"url": "/oracle-tests/reftest-ref.html", "script": activationProbe}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for engine, d := range dumps(t, tc.req) {
				var tags []string
				for _, n := range d.Nodes {
					if n.Tag == "B" || n.Tag == "I" {
						tags = append(tags, n.Tag)
					}
				}
				assert.Equal(t, []string{"I", "I"}, tags, "%s: (isActive, hasBeenActive) as B for true", engine)
			}
		})
	}
	t.Run("fullscreen refused", func(t *testing.T) {
		d := dumps(t, map[string]any{"html": "<!doctype html><p>abc</p>",
			"script": "try{document.body.requestFullscreen().catch(()=>{})}catch(e){};document.body.append(document.createElement('u'))"})
		_, wk, _ := d["webkit"].node(t, "BODY", 0)
		_, cr, _ := d["chromium"].node(t, "BODY", 0)
		assertRect(t, "chromium (webkit's BODY)", wk, cr)
		// Firefox's dump was withheld at 1366x768; its line is 19 px where WebKit's is 18.
		_, ff, _ := d["firefox"].node(t, "BODY", 0)
		ff.H = wk.H
		assertRect(t, "firefox (webkit's BODY but its height)", wk, ff)
	})
}
