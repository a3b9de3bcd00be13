package oracle

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The oracle's fontconfig file, read by the real fontconfig (fc-match, fc-list): each
// generic name an engine asks for resolves to its pinned face, only the pinned faces
// are listed, and writing the file leaves the oracle's own environment alone. The
// engines' own answers are tested in cmd/oracle (environment_test.go).
func TestFontconfigFileResolvesEveryGenericToItsFace(t *testing.T) {
	if _, err := exec.LookPath("fc-match"); err != nil {
		t.Skip("fc-match not installed")
	}
	before := os.Getenv("FONTCONFIG_FILE")
	s, err := settingsFor(Config{})
	require.NoError(t, err)
	assert.Equal(t, before, os.Getenv("FONTCONFIG_FILE"), "the oracle's own environment changed")
	var file string
	for _, kv := range s.Env {
		if k, v, _ := strings.Cut(kv, "="); k == "FONTCONFIG_FILE" {
			file = v
		}
	}
	require.NotEmpty(t, file, "no FONTCONFIG_FILE in the browsers' environment")
	fc := func(args ...string) string {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = withEnv(os.Environ(), []string{"FONTCONFIG_FILE=" + file})
		out, err := cmd.Output()
		require.NoError(t, err, "%v", args)
		return strings.TrimSpace(string(out))
	}
	for _, a := range genericAliases {
		for _, name := range a.names {
			// fc-match parses '-' as a size separator: escape it, as a pattern.
			assert.Equal(t, a.face, fc("fc-match", "-f", "%{family[0]}", strings.ReplaceAll(name, "-", `\-`)), name)
		}
	}
	var listed []string
	for _, l := range strings.Split(fc("fc-list", ":", "family"), "\n") {
		listed = append(listed, strings.Split(l, ",")[0])
	}
	assert.ElementsMatch(t, pinnedFaces, uniq(listed), "fonts other than the pinned ones are visible")
}

// A unit test of CheckEnvironment's own logic on hand-made traces (no engine): the
// message names the property and both values, a documented platform difference passes
// for its engine only, and a missing record is named.
func TestCheckEnvironmentNamesEachDifferingProperty(t *testing.T) {
	pinned := func(override map[string]string, drop string) *trace.Trace {
		tr := &trace.Trace{}
		for _, p := range PinnedEnvironment {
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
	assert.Empty(t, CheckEnvironment(Firefox, pinned(nil, "")))
	assert.Equal(t, []string{"monospace font size is 12px, want 13px", "scrollbar width is 12px, want 0px"},
		CheckEnvironment(Firefox, pinned(map[string]string{"monospace font size": "12px", "scrollbar width": "12px"}, "")))
	noDisplayMode := map[string]string{"media display-mode": noMatch}
	assert.Empty(t, CheckEnvironment(WebKit, pinned(noDisplayMode, "")), "WebKitGTK's documented difference")
	assert.Equal(t, []string{"media display-mode is no value matches, want browser"}, CheckEnvironment(Chromium, pinned(noDisplayMode, "")))
	assert.Equal(t, []string{"font serif was not measured"}, CheckEnvironment(Chromium, pinned(nil, "font serif")))
}
