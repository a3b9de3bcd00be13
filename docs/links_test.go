// Package docs holds the project's reference pages; this test keeps them, the
// READMEs and the code comments inside the repository: a clone has nothing beside it.
package docs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// outside are the marks of a pointer out of the repository: the shared folder
// beside a checkout, this host's absolute paths, and the shared engines notes.
var outside = regexp.MustCompile(`\.\./shared|/work/|ENGINES\.md`)

// mdLink is a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// root is the module root, the folder above docs/.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("no go.mod above docs/: %v", err)
	}
	return r
}

// walk calls fn for every file of the repository but .git, bin and the vendored
// WPT tree (whose READMEs are WPT's own).
func walk(t *testing.T, r string, fn func(rel string)) {
	t.Helper()
	err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, p)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", filepath.Join("testdata", "wpt"):
				return filepath.SkipDir
			}
			return nil
		}
		fn(rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNothingPointsOutsideTheRepository(t *testing.T) {
	r := root(t)
	checked := map[string]int{}
	walk(t, r, func(rel string) {
		path := filepath.Join(r, rel)
		switch {
		case filepath.Base(rel) == "README.md" || strings.HasPrefix(rel, "docs"+string(filepath.Separator)) && strings.HasSuffix(rel, ".md"):
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checked["markdown"]++
			for i, line := range strings.Split(string(b), "\n") {
				if m := outside.FindString(line); m != "" {
					t.Errorf("%s:%d: %q points outside the repository: %s", rel, i+1, m, line)
				}
				for _, l := range mdLink.FindAllStringSubmatch(line, -1) {
					checkLink(t, r, rel, i+1, l[1])
				}
			}
		case strings.HasSuffix(rel, ".go"):
			checked["go"]++
			fset := token.NewFileSet()
			full, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			for _, g := range full.Comments {
				for _, c := range g.List {
					if m := outside.FindString(c.Text); m != "" {
						t.Errorf("%s: %q in a comment points outside the repository: %s", fset.Position(c.Pos()), m, c.Text)
					}
				}
			}
		case strings.HasSuffix(rel, ".js"):
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checked["js"]++
			if m := outside.FindString(string(b)); m != "" {
				t.Errorf("%s: %q points outside the repository", rel, m)
			}
		}
	})
	for _, kind := range []string{"markdown", "go", "js"} {
		if checked[kind] == 0 {
			t.Errorf("no %s file checked: the walk missed the tree", kind)
		}
	}
}

// checkLink fails a relative Markdown link that leaves the repository or names a
// file that is not there.
func checkLink(t *testing.T, r, rel string, line int, target string) {
	t.Helper()
	if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
		return
	}
	target, frag, _ := strings.Cut(target, "#")
	if target == "" {
		return
	}
	if filepath.IsAbs(target) {
		t.Errorf("%s:%d: absolute link %q", rel, line, target)
		return
	}
	p := filepath.Join(r, filepath.Dir(rel), target)
	if inside, err := filepath.Rel(r, p); err != nil || strings.HasPrefix(inside, "..") {
		t.Errorf("%s:%d: link %q leaves the repository", rel, line, target)
		return
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("%s:%d: link %q: no such file", rel, line, target)
		return
	}
	if frag != "" && strings.HasSuffix(target, ".md") && !anchors(t, p)[frag] {
		t.Errorf("%s:%d: link %q: no heading #%s there", rel, line, target, frag)
	}
}

// anchors are the heading anchors of a Markdown file, as GitHub makes them: lower
// case, punctuation dropped, spaces as hyphens.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || !strings.HasPrefix(h, " ") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				slug.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		out[slug.String()] = true
	}
	return out
}
