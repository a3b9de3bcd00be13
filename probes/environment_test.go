package probes

import (
	"encoding/json"
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/trace"
	"github.com/stretchr/testify/assert"
)

// A unit test of checkEnvironment's own logic on hand-made traces (no engine): the
// message names the property and both values, a documented platform difference passes
// for its engine only, and a missing record is named.
func TestCheckEnvironmentNamesEachDifferingProperty(t *testing.T) {
	pinned := func(override map[string]string, drop string) *trace.Trace {
		tr := &trace.Trace{}
		for _, p := range pinnedEnvironment {
			if p.Label == drop {
				continue
			}
			v := p.Want
			if o, ok := override[p.Label]; ok {
				v = o
			}
			raw, _ := json.Marshal(v)
			tr.Records = append(tr.Records, trace.Record{Kind: "value", Label: p.Label, Value: raw})
		}
		return tr
	}
	assert.Empty(t, checkEnvironment(browser.Firefox, pinned(nil, "")))
	assert.Equal(t, []string{"monospace font size is 12px, want 13px", "scrollbar width is 12px, want 0px"},
		checkEnvironment(browser.Firefox, pinned(map[string]string{"monospace font size": "12px", "scrollbar width": "12px"}, "")))
	noDisplayMode := map[string]string{"media display-mode": noMatch}
	assert.Empty(t, checkEnvironment(browser.WebKit, pinned(noDisplayMode, "")), "WebKitGTK's documented difference")
	assert.Equal(t, []string{"media display-mode is no value matches, want browser"}, checkEnvironment(browser.Chromium, pinned(noDisplayMode, "")))
	assert.Equal(t, []string{"font serif was not measured"}, checkEnvironment(browser.Chromium, pinned(nil, "font serif")))
}
