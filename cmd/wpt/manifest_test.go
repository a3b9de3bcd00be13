package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With a MANIFEST.json in the root, the manifest says what each file is (a unit
// test of the planning: no browser); a file it does not list falls back to the
// regular expressions, and a manifest that cannot be read is an error.
func TestRequestsReadTypesFromTheManifest(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	// th.html loads testharness.js through a path the regular expression misses;
	// linked.html links a reference but the manifest calls it a support file;
	// ref.html's references are the manifest's, not its markup's; plain.html is not
	// in the manifest: its markup decides.
	write("a/th.html", `<script src="../resources/testharness.js"></script>`)
	write("a/linked.html", `<link rel=match href=linked-ref.html>`)
	write("a/linked-ref.html", `<p>x`)
	write("a/ref.html", `<link rel=match href=markup-ref.html>`)
	write("a/manifest-ref.html", `<p>x`)
	write("a/markup-ref.html", `<p>x`)
	write("a/plain.html", `<script src="/resources/testharness.js"></script>`)
	write(manifestFile, `{"version": 9, "url_base": "/", "items": {
	  "testharness": {"a": {"th.html": ["h1", [null, {}]]}},
	  "reftest": {"a": {"ref.html": ["h2", [null, [["/a/manifest-ref.html", "=="]], {}]]}},
	  "support": {"a": {"linked.html": ["h3", [null, {}]], "linked-ref.html": ["h4", [null, {}]],
	    "manifest-ref.html": ["h5", [null, {}]], "markup-ref.html": ["h6", [null, {}]]}}}}`)
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"requests", "--root", root, "a"}, nil, &out, &errb), errb.String())
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		ids = append(ids, l[:strings.Index(l, `","`)+1])
	}
	assert.Equal(t, []string{`{"id":"/a/plain.html"`, `{"id":"/a/ref.html"`, `{"id":"/a/manifest-ref.html"`, `{"id":"/a/th.html"`}, ids)

	write(manifestFile, `{"version": 5, "items": {}}`)
	errb.Reset()
	assert.Equal(t, 2, run([]string{"requests", "--root", root, "a"}, nil, &out, &errb))
	assert.Contains(t, errb.String(), "version 5")
	write(manifestFile, `{"version": 8, "items": {"reftest": {"a": {"ref.html": "x"}}}}`)
	errb.Reset()
	assert.Equal(t, 2, run([]string{"requests", "--root", root, "a"}, nil, &out, &errb))
	assert.Contains(t, errb.String(), "items.reftest: a/ref.html")
}
