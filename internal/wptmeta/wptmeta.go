// Package wptmeta reads what WPT's manifest reads from a script test (.any.js,
// .window.js, .worker.js): its "// META:" lines and the globals and test URLs they
// give (tools/manifest/sourcefile.py at WPT 20574795). The oracle's docroot uses it to
// generate the tests' wrappers, and bin/wpt to list the tests.
package wptmeta

import (
	"bufio"
	"bytes"
	"regexp"
	"sort"
	"strings"
)

// pair is one "// META: key=value" line.
type pair struct{ Key, Value string }

// metaRE is the manifest's js_meta_re.
var metaRE = regexp.MustCompile(`^//\s*META:\s*(\w*)=(.*)$`)

// Read returns a script's metadata: its leading lines that match "// META: k=v", up
// to the first that does not (read_script_metadata).
func Read(src []byte) []pair {
	var out []pair
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := metaRE.FindStringSubmatch(strings.TrimSuffix(sc.Text(), "\r"))
		if m == nil {
			break
		}
		out = append(out, pair{m[1], m[2]})
	}
	return out
}

// First is the value of the first pair with key, "" if none.
func First(meta []pair, key string) string {
	for _, m := range meta {
		if m.Key == key {
			return m.Value
		}
	}
	return ""
}

// all are the values of every pair with key, in order.
func all(meta []pair, key string) []string {
	var out []string
	for _, m := range meta {
		if m.Key == key {
			out = append(out, m.Value)
		}
	}
	return out
}

// variants is the manifest's _any_variants: each global's test URL suffix ("" for
// the default ".any.<name>.html") and the names a shorthand stands for.
var variants = map[string]struct {
	suffix   string
	longhand []string
}{
	"window":                 {suffix: ".any.html"},
	"serviceworker":          {},
	"serviceworker-module":   {},
	"sharedworker":           {},
	"sharedworker-module":    {},
	"dedicatedworker":        {suffix: ".any.worker.html"},
	"dedicatedworker-module": {suffix: ".any.worker-module.html"},
	"worker":                 {longhand: []string{"dedicatedworker", "sharedworker", "serviceworker"}},
	"worker-module":          {},
	"jsshell":                {suffix: ".any.js"},
	// Later WPT's realm globals: listed so that a test naming them is reported
	// (skipped) rather than dropped.
	"shadowrealm": {},
}

// Globals is parse_variants: the globals a "// META: global=" value names ("" is
// window and dedicatedworker); unknown names name none.
func Globals(value string) map[string]bool {
	out := map[string]bool{}
	if value == "" {
		out["window"], out["dedicatedworker"] = true, true
		return out
	}
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		v, ok := variants[item]
		if !ok {
			continue
		}
		if v.longhand == nil {
			out[item] = true
		}
		for _, g := range v.longhand {
			out[g] = true
		}
	}
	return out
}

// test is one test a script file gives: its URL path and the global it runs in.
type test struct {
	URL    string // "/dom/a.any.worker.html?1-10"
	Global string // "window", "dedicatedworker", ...
}

// Tests are the tests of the script test at url ("/dom/a.any.js"), as the manifest
// lists them: per global for .any.js (global_suffixes, global_variant_url), one
// .window.html or .worker.html otherwise; each once per "// META: variant=". Nil
// for a file that is no script test.
func Tests(url string, meta []pair) []test {
	vars := all(meta, "variant")
	if len(vars) == 0 {
		vars = []string{""}
	}
	var base []test
	switch flag := scriptFlag(url); flag {
	case "any":
		gs := Globals(First(meta, "global"))
		names := make([]string, 0, len(gs))
		for g := range gs {
			names = append(names, g)
		}
		sort.Strings(names)
		for _, g := range names {
			suffix := variants[g].suffix
			if suffix == "" {
				suffix = ".any." + g + ".html"
			}
			base = append(base, test{URL: variantURL(url, suffix), Global: g})
		}
		sort.Slice(base, func(i, j int) bool { return base[i].URL < base[j].URL })
	case "window", "worker":
		g := map[string]string{"window": "window", "worker": "dedicatedworker"}[flag]
		base = []test{{URL: strings.TrimSuffix(url, ".js") + ".html", Global: g}}
	default:
		return nil
	}
	var out []test
	for _, t := range base {
		for _, v := range vars {
			out = append(out, test{URL: t.URL + v, Global: t.Global})
		}
	}
	return out
}

// variantURL is global_variant_url.
func variantURL(url, suffix string) string {
	url = strings.Replace(url, ".any.", ".", -1)
	if strings.Contains(url, ".https.") && strings.HasPrefix(suffix, ".https.") {
		url = strings.Replace(url, ".https.", ".", -1)
	} else if strings.Contains(url, ".h2.") && strings.HasPrefix(suffix, ".h2.") {
		url = strings.Replace(url, ".h2.", ".", -1)
	}
	return strings.TrimSuffix(url, ".js") + suffix
}

// IsScriptTest says whether a path names a script test whose tests Tests lists.
func IsScriptTest(p string) bool { return scriptFlag(p) != "" }

// scriptFlag is "any", "window" or "worker" for a path ending ".<flag>.js", else "".
func scriptFlag(p string) string {
	for _, f := range []string{"any", "window", "worker"} {
		if strings.HasSuffix(p, "."+f+".js") {
			return f
		}
	}
	return ""
}
