// Package inpage holds the programs the oracle runs inside a page, one .js file each
// under this folder (and the HTML wrappers the docroot serves WPT's script tests in),
// and Hash, which the store's key hashes (oracle/stored.go): a change to any file here
// makes the answers stored before it miss, with no list to keep. A route keeps the
// programs only it runs beside its code, in its own inpage/ folder, read with Read
// and hashed into the key through the route table (browser.Route's Programs). A
// program is its file's text byte for byte, a final newline included or not (the
// preludes the WebDriver route's call.js concatenates need theirs). A template names
// its parameters @@NAME@@, filled by Fill; the Go side that fills them is
// WalkVersion's (oracle/stored.go).
package inpage

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

//go:embed *.js */*.js docroot/*.html
var files embed.FS

// The programs, by the file each is. Templates say what fills them.
var (
	// Case is the case program: every Load, in every engine and on every route, is
	// one driver call evaluating this text on a fresh about:blank page (or, in a
	// kept window, KeptCase calling the one the window holds).
	Case = file("case.js")
	// KeptCase is what a Load into a kept inert window evaluates instead: the case
	// program the window's first inert case left on it, called with its argument.
	KeptCase = file("kept_case.js")
	// WithCaseScript wraps @@FN@@, a walk, into one that runs the case's script first
	// (browser.WithCaseScript).
	WithCaseScript = file("with_case_script.js")
	// InertCheck wraps @@FN@@, a walk, into an inert case's: the walk, then the case
	// program's check of what the engine built (oracle/runcase.go, runInertCase).
	InertCheck = file("inert_check.js")
	// CallExpression wraps @@FN@@ into Visit's call, answering JSON text
	// (browser.CallExpression).
	CallExpression = file("call_expression.js")
	// EvaluateCall is Playwright's evaluate of @@FN@@ with @@ARG@@ (JSON), as one
	// expression for CDP's Runtime.evaluate: FN may be an expression, whose value is
	// the result unless it is a function (Playwright's utility script). It reads no
	// global a page could have replaced (browser's evaluate).
	EvaluateCall = file("evaluate_call.js")
	// ViewportCheck answers the viewport, before the oracle serves a case.
	ViewportCheck = file("viewport_check.js")

	DumpWalk    = file("dump/walk.js")    // the geometry walk (dump.WalkJS)
	ReflectWalk = file("reflect/walk.js") // the reflection walk (reflect.WalkJS)

	// TraceRecorder is the trace recorder, keyed with @@SECRET@@ and bounded by
	// @@LIMITS@@ (trace.Recorder).
	TraceRecorder = file("trace/recorder.js")
	TraceRun      = file("trace/run.js") // runs a trace case's script (trace.RunJS)
	// TraceCollectAndClear runs @@RUN@@ (TraceRun) and clears the origin's storage.
	TraceCollectAndClear = file("trace/collect_and_clear.js")

	// FreshCheck clears window.name on the reset's about:blank and answers
	// history.length; PlaywrightResetCheck is it (@@FRESH_CHECK@@) plus the focus.
	FreshCheck           = file("reset/fresh_check.js")
	PlaywrightResetCheck = file("reset/playwright_check.js")
	// ReplaceWithoutReferrer replaces the page's document with the url it is given,
	// sending no referrer (Playwright: the next navigation from Firefox's reset page).
	ReplaceWithoutReferrer = file("reset/replace_without_referrer.js")

	// TestharnessReport is served at /resources/testharnessreport.js on case origins.
	TestharnessReport = file("docroot/testharnessreport.js")

	// WPT's script-test wrappers as wptserve writes them (tools/serve/serve.py), which
	// the docroot generates (oracle/origin/wptwrapper.go): @@META@@, @@SCRIPT@@, @@PATH@@ and,
	// in the worker ones, @@QUERY@@.
	WPTAnyHTML      = file("docroot/wpt_any.html")          // X.any.html
	WPTWindow       = file("docroot/wpt_window.html")       // X.window.html
	WPTWorker       = file("docroot/wpt_worker.html")       // X.any.worker.html, X.worker.html
	WPTSharedWorker = file("docroot/wpt_sharedworker.html") // X.any.sharedworker.html
	WPTAnyWorkerJS  = file("docroot/wpt_any_worker.js")     // X.any.worker.js
)

// read is every file a variable above was read from (TestEveryFileIsAProgram).
var read = map[string]bool{}

func file(name string) string {
	read[name] = true
	return Read(files, name)
}

// Read is the program name in fsys, the embedded inpage/ folder of a package that
// keeps its own programs. A file that is not there panics: the name is a constant
// of the package that embeds it.
func Read(fsys fs.FS, name string) string {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		panic("inpage: " + err.Error())
	}
	return string(b)
}

// Fill returns template with each @@NAME@@ of pairs (name, value, name, value...)
// replaced by its value. A name the template lacks panics, as does a placeholder left
// unfilled: a renamed parameter must not reach a page.
func Fill(template string, pairs ...string) string {
	if len(pairs)%2 != 0 {
		panic("inpage: Fill takes name, value pairs")
	}
	args := make([]string, 0, len(pairs))
	names := make([]string, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		p := "@@" + pairs[i] + "@@"
		if !strings.Contains(template, p) {
			panic("inpage: the template has no " + p)
		}
		args = append(args, p, pairs[i+1])
		names = append(names, p)
	}
	for _, p := range placeholderRE.FindAllString(template, -1) {
		if !slices.Contains(names, p) {
			panic("inpage: " + p + " is not filled")
		}
	}
	return strings.NewReplacer(args...).Replace(template)
}

var placeholderRE = regexp.MustCompile(`@@[A-Z_]+@@`)

// Hash is a hash of the whole embedded tree: every file's name and text, in
// lexical order.
func Hash() string { return HashFS(files) }

// HashFS is such a hash of fsys: of this folder's tree, or of a route's programs.
func HashFS(fsys fs.FS) string {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%d:%s%d:%s", len(name), name, len(b), b)
		return nil
	})
	if err != nil {
		panic("inpage: " + err.Error())
	}
	return hex.EncodeToString(h.Sum(nil))
}
