package browser

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

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
	s, err := EnvironmentSettings()
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
		cmd.Env = WithEnv(os.Environ(), []string{"FONTCONFIG_FILE=" + file})
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
