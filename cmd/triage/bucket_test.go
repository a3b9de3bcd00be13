package main

// Pure tests of the command's parts (no browser): the reports are built by hand.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/compare"
)

func pTaller(node int, delta float64) *compare.Report {
	return &compare.Report{Verdict: compare.Fail,
		Findings: []compare.Finding{{Node: node, Tag: "P", Property: "bounding.h", Delta: delta}, {Node: node, Tag: "P", Property: "rects[1].h", Delta: delta}},
		Causes: []compare.Cause{{Node: node, Tag: "P", Kind: compare.CauseLayout, Engines: []string{"candidate"},
			Items: []compare.ItemRef{{Node: node, Property: "bounding.h"}, {Node: node, Property: "rects[1].h"}, {Node: node + 1, Property: "offset.y"}}, Explains: 3}}}
}

func TestOneDefectIsOneBucket(t *testing.T) {
	b := newBucketer()
	b.add("a", 300, pTaller(2, 3), "")
	b.add("b", 100, pTaller(5, 3.5), "") // another node, another fragment count: the same defect
	b.add("c", 50, pTaller(2, -3), "")   // shorter: another defect
	b.add("d", 10, nil, "timeout")
	style := &compare.Report{Verdict: compare.Fail,
		StyleFindings: []compare.StyleFinding{{Node: 1, Tag: "BR", Property: "style.display", Want: "inline", Got: "block"}},
		Causes: []compare.Cause{{Node: 1, Tag: "BR", Kind: compare.CauseStyle, Engines: []string{"firefox", "candidate"},
			Items: []compare.ItemRef{{Node: 1, Property: "style.display"}}, Explains: 1}}}
	b.add("e", 20, style, "")
	b.add("f", 20, &compare.Report{Causes: []compare.Cause{{Node: 1, Tag: "BR", Engines: []string{"firefox"}, Kind: compare.CauseStyle}}}, "")
	r := b.ranked()
	require.Len(t, r, 4)
	assert.Equal(t, "layout P bounding.h +", r[0].Signature.Label())
	assert.Equal(t, []string{"a", "b"}, r[0].Cases)
	assert.Equal(t, "b", r[0].Representative, "the smallest case")
	assert.Equal(t, 6, r[0].Items)
	labels := []string{r[1].Signature.Label(), r[2].Signature.Label(), r[3].Signature.Label()}
	assert.ElementsMatch(t, []string{"layout P bounding.h -", "candidate error: timeout", "style BR display=block"}, labels)
	assert.True(t, shows(r[0].Signature, pTaller(9, 1), ""))
	assert.False(t, shows(r[0].Signature, pTaller(9, -1), ""))
	assert.True(t, shows(Signature{Kind: "error", Error: "timeout"}, nil, "timeout"))
}

func TestCorpusRefusesURLCasesAndSkipsScripted(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":"a","html":"<p>"}`+"\n"+`{"id":"s","html":"<p>","script":"1"}`+"\n"+`{"id":2,"op":"reflect","html":"x"}`+"\n"), 0o644))
	cs, skipped, err := readCorpus([]string{f})
	require.NoError(t, err)
	assert.Equal(t, 2, skipped)
	assert.Equal(t, []tcase{{id: "a", raw: json.RawMessage(`"a"`), html: "<p>"}}, cs)

	require.NoError(t, os.WriteFile(f, []byte(`{"id":"u","url":"/x.html"}`+"\n"), 0o644))
	_, _, err = readCorpus([]string{f})
	require.ErrorContains(t, err, "a url case: triage needs inline html")

	require.NoError(t, os.WriteFile(f, []byte(`{"id":"a","html":"<p>"}`+"\n"+`{"id":"a","html":"<b>"}`+"\n"), 0o644))
	_, _, err = readCorpus([]string{f})
	require.ErrorContains(t, err, `id "a" already at c.ndjson:1`)

	var stdout, stderr bytes.Buffer
	assert.Equal(t, exitBadInput, run([]string{"--out", dir, f}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "--candidate-cmd is required")
}

func TestCandidateEnvPrintsExports(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, exitOK, run([]string{"candidate-env"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "export FONTCONFIG_FILE='")
	assert.Contains(t, stdout.String(), "export TZ='UTC'")
	stdout.Reset()
	require.Equal(t, 3, run([]string{"candidate-env", "sh", "-c", `printf %s "$LC_ALL"; exit 3`}, &stdout, &stderr))
	assert.Equal(t, "en_US.UTF-8", stdout.String())
}

// An "oracle" that exits at once (/bin/true: no engine at all) answers no case:
// that is no score, not a pass.
func TestNoVoteIsNotAPass(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "c.ndjson")
	require.NoError(t, os.WriteFile(f, []byte(`{"id":"a","html":"<p>"}`+"\n"), 0o644))
	var stdout, stderr bytes.Buffer
	code := run([]string{"--candidate-cmd", "cat", "--out", filepath.Join(dir, "out"), "--oracle", "/bin/true", "--reduce=0", f}, &stdout, &stderr)
	assert.Equal(t, exitBadInput, code, "%s", stderr.String())
	assert.Contains(t, stderr.String(), "gave no case a three-engine vote")
	assert.Contains(t, stdout.String(), "cases 1: 1 no-vote")
}

func TestHasDoctype(t *testing.T) {
	assert.True(t, hasDoctype("<!DOCTYPE html><p>"))
	assert.True(t, hasDoctype("\n <!-- c --> <!doctype html>"))
	assert.False(t, hasDoctype("<p>no doctype</p>"))
	assert.False(t, hasDoctype("<!-- unterminated"))
}
