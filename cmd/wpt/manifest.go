package main

// WPT's MANIFEST.json, read as wptrunner reads it when the tree has one: a test's
// type and references come from the manifest instead of the regular expressions
// over each file (classify). Format: tools/manifest/manifest.py and item.py, version
// 8 and up: {"version": N, "url_base": "/", "items": {TYPE: TREE}}, a TREE nesting
// one object per path component down to each file, whose value is [hash, ITEM...];
// a testharness ITEM is [url or null, {extras}], a reftest ITEM [url or null,
// [[ref url, "==" or "!="]...], {extras}].

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// manifestFile is where a WPT checkout keeps its manifest (`./wpt manifest` writes it).
const manifestFile = "MANIFEST.json"

// wptManifest is a manifest's files: path relative to the root → its entry.
type wptManifest struct {
	files map[string]manifestEntry
}

// manifestEntry is one file of the manifest: its item type ("testharness",
// "reftest", "support", "manual", ...) and, for a reftest, its references.
type manifestEntry struct {
	Type string
	Refs []reference
}

// loadManifest reads root/MANIFEST.json: nil and no error when there is none (the
// regular expressions decide then), an error when it is there but unreadable. It is
// read as a test file is (readTreeFile: through the root, a regular file only), with
// its own bound.
func loadManifest(root string) (*wptManifest, error) {
	b, err := readTreeFileUpTo(root, manifestFile, maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var raw struct {
		Version int                        `json:"version"`
		Items   map[string]json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %v", manifestFile, err)
	}
	if raw.Version < 8 || raw.Items == nil {
		return nil, fmt.Errorf("%s: version %d, not the version 8+ tree this reads (./wpt manifest --rebuild writes one)", manifestFile, raw.Version)
	}
	m := &wptManifest{files: map[string]manifestEntry{}}
	for typ, tree := range raw.Items {
		if err := m.walk(typ, "", tree); err != nil {
			return nil, fmt.Errorf("%s: items.%s: %v", manifestFile, typ, err)
		}
	}
	return m, nil
}

// walk adds the files of one type's tree under dir.
func (m *wptManifest) walk(typ, dir string, node json.RawMessage) error {
	var children map[string]json.RawMessage
	if json.Unmarshal(node, &children) == nil {
		for name, child := range children {
			if err := m.walk(typ, strings.TrimPrefix(dir+"/"+name, "/"), child); err != nil {
				return err
			}
		}
		return nil
	}
	var leaf []json.RawMessage // [hash, ITEM...]
	if err := json.Unmarshal(node, &leaf); err != nil || len(leaf) < 1 {
		return fmt.Errorf("%s: neither a directory nor a file entry", dir)
	}
	e := manifestEntry{Type: typ}
	if typ == kindReftest && len(leaf) > 1 {
		// Every item of one file names the same references: the first's.
		var parts []json.RawMessage // url, references, extras
		if json.Unmarshal(leaf[1], &parts) != nil || len(parts) < 2 {
			return fmt.Errorf("%s: a reftest item that is not [url, references, extras]", dir)
		}
		var refs [][2]string
		if err := json.Unmarshal(parts[1], &refs); err != nil {
			return fmt.Errorf("%s: references: %v", dir, err)
		}
		for _, r := range refs {
			e.Refs = append(e.Refs, reference{Path: strings.TrimPrefix(r[0], "/"), Mismatch: r[1] == "!="})
		}
	}
	m.files[dir] = e
	return nil
}

// classify is the package's classify with the manifest's word first: a file the
// manifest lists as a testharness test or a reftest is one (with the manifest's
// references), a file it lists as anything else is not a test run here, and a file
// it does not list (a manifest older than the tree) falls back to the regular
// expressions. A nil manifest always falls back.
func (m *wptManifest) classify(rel string, b []byte) (string, []reference) {
	if m == nil {
		return classify(rel, b)
	}
	e, ok := m.files[rel]
	switch {
	case !ok:
		return classify(rel, b)
	case e.Type == kindTestharness:
		return kindTestharness, nil
	case e.Type == kindReftest:
		return kindReftest, e.Refs
	}
	return "", nil
}
