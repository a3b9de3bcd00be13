package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newSet is a flag set as a binary makes one: --answers FILE with --oracle its old
// spelling, a repeatable --oracle-flag and the deprecated --oracle-args that
// splits into it, a boolean --json with --as-json its old spelling.
func newSet() (*flag.FlagSet, *bytes.Buffer, *string, *List, *bool) {
	var out bytes.Buffer
	fs := NewFlagSet("prog")
	fs.SetOutput(&out)
	answers := fs.String("answers", "", "the oracle's answers (`FILE`)")
	Alias(fs, "oracle", "answers")
	var flags List
	fs.Var(&flags, "oracle-flag", "a flag passed to the oracle (repeatable)")
	SplitAlias(fs, "oracle-args", "oracle-flag", &flags)
	asJSON := fs.Bool("json", false, "JSON")
	Alias(fs, "as-json", "json")
	return fs, &out, answers, &flags, asJSON
}

func TestAliasSetsTheNewFlagAndSaysSoOnce(t *testing.T) {
	fs, out, answers, _, asJSON := newSet()
	code, done := Parse(fs, []string{"--oracle", "a.ndjson", "--as-json", "--oracle=b.ndjson"}, &bytes.Buffer{})
	require.False(t, done, "code %d: %s", code, out)
	assert.Equal(t, "b.ndjson", *answers)
	assert.True(t, *asJSON, "a boolean alias stands alone")
	assert.Equal(t, "prog: --oracle FILE is deprecated, use --answers FILE\nprog: --as-json is deprecated, use --json\n", out.String())

	fs, out, answers, _, _ = newSet()
	_, done = Parse(fs, []string{"--answers", "a.ndjson"}, &bytes.Buffer{})
	require.False(t, done)
	assert.Equal(t, "a.ndjson", *answers)
	assert.Empty(t, out.String(), "the new spelling says nothing")
}

func TestSplitAliasAddsEachValue(t *testing.T) {
	fs, out, _, flags, _ := newSet()
	_, done := Parse(fs, []string{"--oracle-flag=--pages=1", "--oracle-args", "--store=off  --parallel=2"}, &bytes.Buffer{})
	require.False(t, done, out.String())
	assert.Equal(t, List{"--pages=1", "--store=off", "--parallel=2"}, *flags)
	assert.Equal(t, "prog: --oracle-args \"F...\" is deprecated, use --oracle-flag F, repeated\n", out.String())
}

func TestBothSpellingsIsAUsageError(t *testing.T) {
	fs, out, _, _, _ := newSet()
	code, done := Parse(fs, []string{"--answers", "a", "--oracle", "b"}, &bytes.Buffer{})
	assert.True(t, done)
	assert.Equal(t, ExitUsage, code)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "prog: --oracle and --answers are one flag (--oracle is its deprecated spelling): give --answers only", lines[len(lines)-1])
}

// -h lists each thing once, under its new name, with its default as defined (not
// a value parsed before -h).
func TestHelpLeavesTheDeprecatedSpellingsOut(t *testing.T) {
	fs, out, _, _, _ := newSet()
	fs.Int("n", 3, "a number")
	code, done := Parse(fs, []string{"--n", "7", "-h"}, &bytes.Buffer{})
	require.True(t, done)
	assert.Equal(t, ExitOK, code)
	help := out.String()
	for _, f := range []string{"-answers FILE", "-oracle-flag", "-json", "-n int", "(default 3)", "-version"} {
		assert.Contains(t, help, f)
	}
	for _, f := range []string{"-oracle ", "-oracle-args", "-as-json", "deprecated", "panic"} {
		assert.NotContains(t, help, f)
	}
}

func TestCanonicalNamesTheNewFlag(t *testing.T) {
	fs, _, _, _, _ := newSet()
	require.NoError(t, fs.Parse([]string{"--oracle", "a", "--json", "--oracle-args", "x"}))
	var names []string
	fs.Visit(func(f *flag.Flag) { names = append(names, Canonical(f)) })
	assert.Equal(t, []string{"json", "answers", "oracle-args"}, names)
}

// NewFlagSet's usage leaves the deprecated spellings out; a binary's own usage,
// set after, is the one Parse prints.
func TestNewFlagSetsUsageHidesDeprecatedSpellings(t *testing.T) {
	fs := NewFlagSet("x")
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.String("answers", "", "the answers file")
	Alias(fs, "oracle", "answers")
	code, done := Parse(fs, []string{"-h"}, &bytes.Buffer{})
	assert.True(t, done)
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, out.String(), "usage: x [FLAGS]")
	assert.Contains(t, out.String(), "-answers")
	assert.NotContains(t, out.String(), "-oracle")

	fs = NewFlagSet("x")
	fs.SetOutput(&bytes.Buffer{})
	called := false
	fs.Usage = func() { called = true }
	Parse(fs, []string{"-h"}, &bytes.Buffer{})
	assert.True(t, called)
}
