package environment

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser/host"
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
	s, err := Settings()
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
		cmd.Env = host.WithEnv(os.Environ(), []string{"FONTCONFIG_FILE=" + file})
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
	assert.ElementsMatch(t, pinnedFaces, slices.Compact(slices.Sorted(slices.Values(listed))), "fonts other than the pinned ones are visible")
}

// The prefs firefoxEnvironmentPrefs leaves out are Firefox's own defaults in the
// installed Firefox ESR (its greprefs.js, the last definition winning), so leaving
// them out changes nothing; and those it sends differ from them. A Firefox upgrade
// that changes one of these defaults fails here.
func TestFirefoxDefaultsAreFirefoxs(t *testing.T) {
	testutil.NeedsBrowsers(t) // reads the installed Firefox; launches nothing
	exe, err := filepath.EvalSymlinks(browser.SystemFirefox)
	require.NoError(t, err)
	z, err := zip.OpenReader(filepath.Join(filepath.Dir(exe), "omni.ja"))
	require.NoError(t, err)
	defer z.Close()
	f, err := z.Open("greprefs.js")
	require.NoError(t, err)
	src, err := io.ReadAll(f)
	require.NoError(t, err)
	firefox := map[string]any{}
	for _, m := range regexp.MustCompile(`(?m)^\s*pref\("([^"]+)",\s*(.*?)\);`).FindAllStringSubmatch(string(src), -1) {
		var v any
		if json.Unmarshal([]byte(m[2]), &v) == nil {
			if n, ok := v.(float64); ok {
				v = int(n)
			}
			firefox[m[1]] = v
		}
	}
	require.Greater(t, len(firefox), 1000, "greprefs.js parsed")
	for k, v := range firefoxDefaults() {
		got, ok := firefox[k]
		if !ok {
			got = "" // an unset string pref reads as ""
		}
		assert.Equal(t, v, got, "Firefox's default of %s", k)
	}
	sent := firefoxEnvironmentPrefs()
	for k, v := range firefoxPinnedPrefs() {
		if _, ok := sent[k]; ok {
			continue
		}
		if rest, ok := strings.CutPrefix(k, "font.name."); ok {
			assert.Equal(t, v, sent["font.name-list."+rest], "%s left out but not in the name list", k)
			assert.Empty(t, firefox[k], "%s left out but Firefox has one", k)
			continue
		}
		assert.Equal(t, v, firefox[k], "%s left out but not Firefox's default", k)
	}
	t.Logf("%d pinned prefs, %d sent", len(firefoxPinnedPrefs()), len(sent))
}
