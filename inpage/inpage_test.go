package inpage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// copyFS is the embedded tree as a MapFS, to change one file at a time.
func copyFS(t *testing.T) fstest.MapFS {
	m := fstest.MapFS{}
	err := fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(name)
		m[name] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The store's key hashes Hash: an edit of any file's text, or a file renamed, added
// or removed, must change it.
func TestHashChangesWithAnyFile(t *testing.T) {
	base := copyFS(t)
	if HashFS(base) != Hash() {
		t.Fatal("a copy of the tree hashes differently from the tree")
	}
	seen := map[string]string{Hash(): "the tree"}
	check := func(what string, m fstest.MapFS) {
		h := HashFS(m)
		if prev, ok := seen[h]; ok {
			t.Errorf("%s hashes as %s does", what, prev)
		}
		seen[h] = what
	}
	for name, f := range base {
		m := copyFS(t)
		m[name] = &fstest.MapFile{Data: append([]byte(" "), f.Data...)}
		check(name+" edited", m)
		m = copyFS(t)
		delete(m, name)
		check(name+" removed", m)
		m = copyFS(t)
		delete(m, name)
		m["x"+name] = f
		check(name+" renamed", m)
	}
	m := copyFS(t)
	m["new.js"] = &fstest.MapFile{Data: []byte("1")}
	check("a file added", m)
}

// Every file is a program a variable reads: a file nothing reads is a program the
// oracle runs from somewhere else, or a dead one.
func TestEveryFileIsAProgram(t *testing.T) {
	for name := range copyFS(t) {
		if !read[name] {
			t.Errorf("%s is embedded but no variable reads it", name)
		}
	}
}

// kept_case.js calls the program case.js leaves on a kept window: both name the
// same window property, each literally (neither is a template).
func TestKeptCaseCallsThePropertyCaseLeaves(t *testing.T) {
	m := regexp.MustCompile(`var PROGRAM = '([^']+)';`).FindStringSubmatch(Case)
	if m == nil {
		t.Fatal("case.js names no PROGRAM property")
	}
	if !strings.Contains(KeptCase, "getOwnPropertyDescriptor(window, '"+m[1]+"')") {
		t.Errorf("kept_case.js does not read case.js's PROGRAM property %q", m[1])
	}
}

func TestFill(t *testing.T) {
	if got := Fill("(@@A@@)(@@B_C@@)", "A", "x", "B_C", "@@A@@"); got != "(x)(@@A@@)" {
		t.Errorf("Fill = %q", got)
	}
	for _, c := range []struct {
		template string
		pairs    []string
	}{{"@@A@@", []string{"B", ""}}, {"@@A@@ @@B@@", []string{"A", ""}}, {"@@A@@", []string{"A"}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Fill(%q, %q) did not panic", c.template, c.pairs)
				}
			}()
			Fill(c.template, c.pairs...)
		}()
	}
}

// looksLikeJS matches a Go string literal that holds JavaScript.
var looksLikeJS = regexp.MustCompile(`\bfunction\s*\(|=>|(^|[^\w/])(document|window|location)\.\w|\breturn \[|JSON\.stringify\(`)

// notPrograms are the folders whose JavaScript-looking strings are not the oracle's
// programs: cmd/bench's are test cases' html, report's is the HTML report's own page,
// probes' are cases (a request's script, keyed as the request), as are the route
// tests' shared bodies' in oracle/browser/internal/routetest (test code only tests
// import, outside a _test.go file because two packages' tests share it), and the relay's
// schema names Playwright protocol fields ("location.url:s?"), not page code; scripts/
// holds measurement probes, whose cases' scripts are theirs (as cmd/bench's); the
// planted candidate's stylesheet script is a request's script, a case as probes' are.
var notPrograms = []string{"cmd/bench/", "cmd/planted/", "report/", "probes/", "oracle/browser/internal/routetest/", "oracle/browser/playwright/schema.go", "scripts/"}

// leftInGo are literals too short to be worth a file: Playwright's reset reads
// document.hasFocus() (oracle/browser/playwright/reset.go) and replaces the location.
var leftInGo = map[string]bool{
	`"u => { location.replace(u); }"`:   true, // oracle/browser/playwright/playwright.go
	`"document.hasFocus()"`:             true, // oracle/browser/playwright/playwright.go
	`"browser.dom.window.dump.enabled"`: true, // a Firefox pref name (oracle/browser/bidi/process.go), not a program
}

// No Go file outside tests holds an in-page program: each is a file here, where the
// store's key sees it.
func TestNoProgramInGoSource(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, p := range notPrograms {
			if strings.HasPrefix(rel, p) {
				return nil
			}
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || leftInGo[lit.Value] {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && looksLikeJS.MatchString(s) {
				t.Errorf("%s: an in-page program in Go: %.80q (make it a file under inpage/, or its route's inpage/)", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
