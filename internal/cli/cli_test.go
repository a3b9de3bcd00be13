package cli

import (
	"os/exec"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The version line from a build info as the go command stamps it.
func TestVersionReadsTheBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"}}}
	assert.Equal(t, "x v1.2.3 (revision 0123456789abcdef0123456789abcdef01234567, modified; go1.26.8)", version("x", bi))
	assert.Equal(t, "x (devel) (revision unknown; go1.26.8)", version("x", &debug.BuildInfo{GoVersion: "go1.26.8"}))
}

// A quoted word comes back from sh byte for byte, whatever it holds.
func TestShellQuoteIsOneLiteralWord(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", "a b\nc", "$(echo expanded) `id` \\ \"q\" '' ;|&"} {
		out, err := exec.Command("sh", "-c", `printf %s `+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("ShellQuote(%q): sh printed %q (%v)", s, out, err)
		}
	}
}

// Printable leaves ordinary text alone and escapes what a terminal would act on.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"wpt/css/a b.html <p>&\"x\" é 😀": "wpt/css/a b.html <p>&\"x\" é 😀",
		"\x1b]0;title\x07\x1b[2J\rX":     `\x1b]0;title\x07\x1b[2J\x0dX`,
		"a\nFAKE LINE\tb\x7f":            `a\x0aFAKE LINE\x09b\x7f`,
		"\u0085\u009b2J":                 `\u0085\u009b2J`,
		"abc\u202edef\u2066":             `abc\u202edef\u2066`,
		"bad \xff\x9b byte":              `bad \xff\x9b byte`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
