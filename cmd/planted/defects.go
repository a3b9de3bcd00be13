package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/layout-oracle/oracle/internal/cli"
)

// Defect is one planted defect: CSS rules the candidate applies on top of the
// engine's own layout, or a crash. Rules sit in a cascade layer of an adopted
// stylesheet (see plantScript), so a page's own unlayered rules and inline styles
// still win over them, as they win over a user-agent default: a planted rule reads
// like a wrong default of the engine, not like a rule of the page.
type Defect struct {
	Name string
	// What a real engine could have got wrong, for the table and the docs.
	Note string
	// CSS is the planted rules; empty for a crash.
	CSS string
	// Crash, when set, makes the candidate die by SIGSEGV on every case whose HTML
	// it matches (case-insensitively) instead of answering.
	Crash *regexp.Regexp
}

// Defects is the table of planted defects: add a row to plant your own. Each hits
// a realistic share of `bin/bench --emit-cases` (the benchmark's generated
// cases): measured shares are in docs/planted.md. p-tall and p-margin are a pair on
// one box (P), so a case with both shows causes of both on the same node; crash
// masks every other defect of the cases it hits (a crashed case has no dump to
// score). cell-padding and inline-spacing each hit several tags.
var Defects = []Defect{
	{Name: "p-tall", Note: "P 3 px taller a line: a wrong line-height on paragraphs",
		CSS: "p { line-height: 23px }"},
	{Name: "p-margin", Note: "a wrong UA default block margin on P (12px, not 1em)",
		CSS: "p { margin-block: 12px }"},
	{Name: "list-indent", Note: "lists indented 30px, not 40px: a wrong UA padding-inline-start on UL/OL",
		CSS: "ul, ol { padding-inline-start: 30px }"},
	{Name: "cell-padding", Note: "table cells padded 3px, not 1px: a wrong UA default on TD and TH",
		CSS: "td, th { padding: 3px }"},
	{Name: "inline-spacing", Note: "text 0.4px wider a letter in EM, I, B, STRONG: a letter-spacing error in inline formatting",
		CSS: "em, i, b, strong { letter-spacing: 0.4px }"},
	{Name: "link-margin", Note: "links with a 2px inline margin: a wrong UA default margin on A",
		CSS: "a { margin-inline: 2px }"},
	{Name: "code-size", Note: "monospace text at 90% of its parent's size, not the UA's 13px default",
		CSS: "code, kbd, samp, pre { font-size: 0.9em }"},
	{Name: "crash", Note: "the candidate dies by SIGSEGV laying out a reversed flex container",
		Crash: regexp.MustCompile(`(?i)flex-direction:\s*(row|column)-reverse`)},
}

// DefectNames lists the table's names, in order.
func DefectNames() []string {
	out := make([]string, len(Defects))
	for i, d := range Defects {
		out[i] = d.Name
	}
	return out
}

// pickDefects returns the table's defects that names (comma-separated, or "all")
// names, in the table's order; an unknown name is an error naming the known ones.
func pickDefects(names string) ([]Defect, error) {
	if strings.TrimSpace(names) == "all" {
		return Defects, nil
	}
	want := map[string]bool{}
	for _, n := range cli.SplitList(names) {
		if findDefect(n) == nil {
			return nil, fmt.Errorf("no planted defect %q (known: %s)", n, strings.Join(DefectNames(), ", "))
		}
		want[n] = true
	}
	var out []Defect
	for _, d := range Defects {
		if want[d.Name] {
			out = append(out, d)
		}
	}
	return out, nil
}

func findDefect(name string) *Defect {
	for i := range Defects {
		if Defects[i].Name == name {
			return &Defects[i]
		}
	}
	return nil
}

func names(ds []Defect) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	return out
}

// crashes returns the first of ds whose crash trigger matches html, or nil.
func crashes(ds []Defect, html string) *Defect {
	for i := range ds {
		if ds[i].Crash != nil && ds[i].Crash.MatchString(html) {
			return &ds[i]
		}
	}
	return nil
}

// plantScript is the case script that adopts one constructed stylesheet holding
// ds's rules in the cascade layer "planted". It runs with no rules too (an empty
// layer), so a planted run and the unplanted baseline take the same path through
// the oracle (a scripted case) and differ by the rules alone.
func plantScript(ds []Defect) string {
	var css strings.Builder
	css.WriteString("@layer planted {\n")
	for _, d := range ds {
		if d.CSS != "" {
			css.WriteString(d.CSS + "\n")
		}
	}
	css.WriteString("}\n")
	text, _ := json.Marshal(css.String()) // a JSON string is a JS string literal
	return "(() => { const s = new CSSStyleSheet(); s.replaceSync(" + string(text) +
		"); document.adoptedStyleSheets = [...document.adoptedStyleSheets, s]; })();"
}

// dieBySegv ends this process by SIGSEGV, as a candidate engine that crashed: the
// Go runtime turns a SIGSEGV sent to itself into a panic dump and exit status 2, so
// the process becomes a shell that sends the signal to itself (same pid).
func dieBySegv(d *Defect) {
	fmt.Fprintf(os.Stderr, "planted: defect %s: segmentation fault\n", d.Name)
	err := syscall.Exec("/bin/sh", []string{"sh", "-c", "kill -SEGV $$"}, os.Environ())
	fmt.Fprintf(os.Stderr, "planted: exec sh to crash: %v\n", err)
	os.Exit(139)
}
