package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/wptmeta"
)

// Test types beyond .html testharness tests and reftests (docs/web-content.md,
// "Script tests" and "What --docroot lacks"): WPT's script tests, run in the wrappers
// the oracle's docroot generates as wptserve does, and the tests bin/wpt reports as
// SKIP because they need what the docroot does not serve, or WebDriver.

const statusSkip = "SKIP"

// runGlobals are the globals whose wrapper runs in a window the oracle traces: the
// window itself, and a dedicated or shared worker whose tests the window's harness
// fetches (fetch_tests_from_worker; each case has its own origin, so no case shares
// another's shared worker). Other globals are SKIP with skipGlobal's reason.
var runGlobals = map[string]bool{"window": true, "dedicatedworker": true, "sharedworker": true}

// skipGlobal says why a script test in global g is not run.
func skipGlobal(g string) string {
	switch g {
	case "serviceworker", "serviceworker-module":
		return "global " + g + ": wptrunner loads service worker tests over HTTPS, which --docroot does not serve; not run"
	case "jsshell":
		return "global jsshell: a JavaScript shell test, not run in a browser (wptrunner skips it too)"
	}
	return "global " + g + ": wpt run runs the window, dedicatedworker and sharedworker globals only"
}

// planSpecial plans the file rel (content b) when it is a script test or a test that
// needs a feature the docroot lacks: its tests, each with Skip set when it is not
// run. ok is false for any other file, planned as before (man.classify).
func planSpecial(man *wptManifest, root, rel string, b []byte) (tests []plannedTest, ok bool) {
	if wptmeta.IsScriptTest(rel) {
		why := skipReason(root, rel, b)
		for _, st := range wptmeta.Tests("/"+rel, wptmeta.Read(b)) {
			t := plannedTest{URL: st.URL, Kind: kindTestharness, Skip: why}
			if t.Skip == "" && !runGlobals[st.Global] {
				t.Skip = skipGlobal(st.Global)
			}
			tests = append(tests, t)
		}
		return tests, true
	}
	kind, refs := man.classify(rel, b)
	if kind == "" {
		return nil, false
	}
	why := skipReason(root, rel, b)
	for _, r := range refs {
		if why == "" && r.Path == aboutBlank {
			why = "a reference is about:blank, which the oracle does not load (it loads docroot paths)"
		}
	}
	vars := htmlVariants(b)
	if why == "" && (kind != kindTestharness || len(vars) == 0) {
		return nil, false
	}
	if kind != kindTestharness || len(vars) == 0 {
		vars = []string{""}
	}
	for _, v := range vars {
		tests = append(tests, plannedTest{URL: "/" + rel + v, Kind: kind, Refs: refs, Skip: why})
	}
	return tests, true
}

var (
	metaTagRE     = regexp.MustCompile(`(?is)<meta\b[^>]*>`)
	nameVariantRE = regexp.MustCompile(`(?i)\bname\s*=\s*["']?variant\b`)
	contentRE     = regexp.MustCompile(`(?i)\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)
)

// htmlVariants are a testharness test's <meta name=variant content> values, each a
// test of its own as in WPT's manifest (test_variants: "?1-1000", "#x", or ""); nil
// when it has none.
func htmlVariants(b []byte) []string {
	var out []string
	for _, tag := range metaTagRE.FindAll(b, -1) {
		if !nameVariantRE.Match(tag) {
			continue
		}
		if m := contentRE.FindSubmatch(tag); m != nil {
			out = append(out, string(m[1])+string(m[2])+string(m[3]))
		}
	}
	return out
}

var (
	testdriverRE = regexp.MustCompile(`/resources/testdriver(-vendor|-actions)?\.js`)
	// A URL in quotes (or a META line) naming a .py handler, an .asis file or a pipe.
	pyRE   = regexp.MustCompile(`(^|["'\x60(=])[\w./-]*\.py(\?[^"'\x60\s)]*)?(["'\x60)\s]|$)`)
	asisRE = regexp.MustCompile(`[\w./-]+\.asis\b`)
	pipeRE = regexp.MustCompile(`[?&]pipe=[^"'\x60\s>]*`)
	subRE  = regexp.MustCompile(`[\w./-]+\.sub\.\w+`)
	// wptserve's template substitutions ({{host}}, {{domains[www]}}, {{ports[https][0]}}...).
	templateRE = regexp.MustCompile(`\{\{\s*(host|hosts|domains|ports|location|GET|uuid|headers|file_hash|fs_path|url_base)\b`)
)

// skipReason says why the test file rel (content b) cannot run as wpt.fyi runs it,
// "" when it can: it uses testdriver.js (WebDriver actions wptrunner performs), or a
// feature of WPT's server --docroot lacks (docs/web-content.md): HTTPS, HTTP/2,
// .headers files, .sub. substitution, .py handlers, .asis files, pipes.
func skipReason(root, rel string, b []byte) string {
	if testdriverRE.Match(b) {
		return "uses testdriver.js: the actions it asks of WebDriver are not performed here"
	}
	name := path.Base(rel)
	flags := strings.Split(name, ".")
	for _, f := range flags[1:max(1, len(flags)-1)] {
		switch f {
		case "sub":
			return "needs wptserve's .sub. template substitution (" + name + "), which --docroot does not do"
		case "https":
			return "loaded over HTTPS by wptrunner (.https. in the name); --docroot serves HTTP only"
		case "h2":
			return "loaded over HTTP/2 by wptrunner (.h2. in the name); --docroot serves HTTP/1.1 only"
		case "www":
			return "loaded from the www subdomain by wptrunner (.www. in the name); --docroot has one host per case"
		}
	}
	dir := path.Dir(rel)
	for _, h := range []string{rel + ".headers", rel + ".sub.headers", path.Join(dir, "__dir__.headers"), path.Join(dir, "__dir__.sub.headers")} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(h))); err == nil {
			return "wptserve sends the headers of /" + h + "; --docroot sends no .headers file"
		}
	}
	for _, c := range []struct {
		re   *regexp.Regexp
		what string
	}{
		{subRE, "loads %s, which needs wptserve's .sub. template substitution"},
		{templateRE, "uses wptserve's template substitution (%s...}})"},
		{pyRE, "uses the wptserve handler %s, which --docroot does not run"},
		{asisRE, "uses %s, an .asis response --docroot does not send as such"},
		{pipeRE, "uses a wptserve pipe (%s), which --docroot does not apply"},
	} {
		if m := c.re.Find(b); m != nil {
			what := strings.Trim(string(m), "\"'`() \t\r\n")
			if c.re != pipeRE {
				what = strings.TrimLeft(what, "=")
			}
			if c.re == pyRE {
				what, _, _ = strings.Cut(what, "?")
			}
			return fmt.Sprintf(c.what, what)
		}
	}
	return ""
}

// traceRequest is the request for a testharness test at url: a trace of the page
// with no script of its own (testharnessreport.js records the results).
func traceRequest(url string) client.Request {
	return client.Request{ID: url, Op: client.OpTrace, URL: client.Str(url), Script: client.Str("")}
}

// emptyTrace is the status of a testharness test whose harness completed with
// status harness and recorded no subtest. testharness.js never completes OK without
// a test (done() with none defined is ERROR, "done() was called without first
// defining any tests"), so an OK here means the tests were never defined where the
// harness saw them, a script run after it finished: ERROR. ERROR and TIMEOUT stay.
func emptyTrace(harness string) string {
	if harness == statusOK {
		return statusError
	}
	return harness
}

func emptyTraceMessage(harness string) string {
	return "empty trace: the harness completed " + harness + " without any subtest"
}
