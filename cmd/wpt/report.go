package main

// The wptreport format, as `wpt run --log-wptreport` writes it
// (tools/wptrunner/wptrunner/formatters/wptreport.py), and how one engine's oracle
// answers become its results (docs/web-content.md, "wpt run").

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/trace"
)

// wptReport is one engine's report. Field order is wptreport.py's.
type wptReport struct {
	RunInfo   runInfo     `json:"run_info"`
	TimeStart int64       `json:"time_start"` // ms since the epoch
	Results   []wptResult `json:"results"`
	TimeEnd   int64       `json:"time_end"`
}

// runInfo is the part of wptrunner's run_info (mozinfo's keys) this command knows;
// wpt.fyi's results processor reads product, browser_version, os and revision.
// Keys describing wptrunner's own build and environment (python_version, debug,
// has_sandbox, automation, wasm) are not written: nothing here knows them.
type runInfo struct {
	Product        string `json:"product"`
	BrowserVersion string `json:"browser_version"`
	OS             string `json:"os"`
	OSVersion      string `json:"os_version,omitempty"`
	Version        string `json:"version,omitempty"`
	LinuxDistro    string `json:"linux_distro,omitempty"`
	Processor      string `json:"processor,omitempty"`
	Bits           int    `json:"bits,omitempty"`
	Headless       bool   `json:"headless"`
	Verify         bool   `json:"verify"`
	Revision       string `json:"revision,omitempty"`
}

// wptResult is one test. A reader's "expected" and "known_intermittent" are never
// written (there are no expectations here) and ignored on reading.
type wptResult struct {
	Test     string       `json:"test"`
	Subtests []wptSubtest `json:"subtests"`
	Status   string       `json:"status"`
	Message  *string      `json:"message"`
	// Duration in ms, this engine's request for the test (a reftest's references
	// not counted); readers require it (the wptreport crate), so a test never sent
	// has 0.
	Duration int64 `json:"duration"`
	// Screenshots, on a failing reftest, are wptrunner's: the compared documents'
	// paths, each to "sha1:" and the SHA-1 of its screenshot's PNG bytes
	// (formatters/wptreport.py, from the executor's reftest_screenshots).
	Screenshots map[string]string `json:"screenshots,omitempty"`
}

type wptSubtest struct {
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Message *string `json:"message"`
}

// Statuses (wptrunner's).
const (
	statusOK      = "OK"
	statusPass    = "PASS"
	statusFail    = "FAIL"
	statusError   = "ERROR"
	statusTimeout = "TIMEOUT"
	statusCrash   = "CRASH"
	// statusExternalTimeout: the oracle's deadline for the engine ended the test, not
	// the test's own harness (wptrunner's name for its own timeout firing).
	statusExternalTimeout = "EXTERNAL-TIMEOUT"
)

// The oracle's engine errors for a crash ("page crashed (its renderer ...)",
// "browser crashed or disconnected", an engine name and a step before it) and for
// its deadline ("timed out after 30s", "webkit: navigate: case timed out"), and a
// call that ran out of time. Anchored at the start: an oracle that exited ends the
// call with "oracle exited (...; its stderr ends: ...)", whose log may say anything.
var (
	crashRE   = regexp.MustCompile(`(?i)^(?:[\w-]+: )*(?:page|browser|target) crashed`)
	timeoutRE = regexp.MustCompile(`^(?:[\w-]+: )*(?:case )?timed out\b|^` + regexp.QuoteMeta(context.DeadlineExceeded.Error()))
)

// errorStatus is the status of a test whose engine gave no answer, why: CRASH when
// the page or the browser crashed, EXTERNAL-TIMEOUT when the oracle's deadline (or
// this command's bound on a request) ended it, ERROR for anything else (a refused
// request, an oracle that exited, a failed navigation).
func errorStatus(why string) string {
	switch {
	case crashRE.MatchString(why):
		return statusCrash
	case timeoutRE.MatchString(why):
		return statusExternalTimeout
	}
	return statusError
}

// products are wpt.fyi's names for the engines' browsers (wpt.fyi
// shared/browsers.go, its known browser names; wptrunner's product for WebKitGTK is
// webkitgtk_minibrowser, which wpt.fyi files as webkitgtk).
var products = map[string]string{"chromium": "chromium", "firefox": "firefox", "webkit": "webkitgtk"}

// productName is run_info.product for engine.
func productName(engine string) string {
	if p, ok := products[engine]; ok {
		return p
	}
	return engine
}

// commitRE is a full git commit, what wpt.fyi files a run's revision under.
var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// screenshotHashes are the "screenshots" of a failing reftest: each of urls that
// has a screenshot in this engine, to "sha1:" and the SHA-1 of its PNG bytes.
func screenshotHashes(dumpOf func(url string) (*dump.Dump, string), urls ...string) map[string]string {
	out := map[string]string{}
	for _, u := range urls {
		d, _ := dumpOf(u)
		if d == nil || d.Screenshot == "" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(d.Screenshot)
		if err != nil {
			continue
		}
		out[u] = fmt.Sprintf("sha1:%x", sha1.Sum(raw))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// harnessLabel is the label testharnessreport.js records the harness status under.
const harnessLabel = "(harness)"

func msg(s string) *string { return &s }

// harnessResult is a testharness test's result from one engine's trace: the value
// records inpage/docroot/testharnessreport.js wrote, one per subtest, then the
// harness status. A trace that ended without the harness status timed out (the
// trace's own timeout) or never loaded the report script. Each subtest's message is
// this engine's own (the record's message, which the vote skips), null on a PASS as
// wptrunner writes it; the test's message is the harness's (an uncaught error's),
// null when it has none.
func harnessResult(tr *trace.Trace) (status string, message *string, subtests []wptSubtest) {
	subtests = []wptSubtest{}
	harness, harnessMsg := "", ""
	for _, r := range tr.Records {
		if r.Kind != "value" {
			continue
		}
		var v string
		if json.Unmarshal(r.Value, &v) != nil {
			continue // not one of the report script's records
		}
		if r.Label == harnessLabel {
			harness, harnessMsg = v, r.Message
			continue
		}
		st := wptSubtest{Name: r.Label, Status: v}
		if v != statusPass && r.Message != "" {
			st.Message = msg(r.Message)
		}
		subtests = append(subtests, st)
	}
	switch {
	case harness != "" && len(subtests) == 0:
		m := emptyTraceMessage(harness)
		if harnessMsg != "" {
			m += ": " + harnessMsg
		}
		return emptyTrace(harness), msg(m), subtests
	case harness != "" && harnessMsg != "":
		return harness, msg(harnessMsg), subtests
	case harness != "":
		return harness, nil, subtests
	case len(subtests) == 0 && tr.TimedOut:
		return statusTimeout, msg("empty trace: no subtest, and the harness did not complete within the trace's timeout"), subtests
	case len(subtests) == 0:
		return statusError, msg("empty trace: no subtest, and the trace ended without a harness status (does the test load /resources/testharnessreport.js?)"), subtests
	case tr.TimedOut:
		return statusTimeout, msg("the harness did not complete within the trace's timeout"), subtests
	default:
		return statusError, msg("the trace ended without a harness status (does the test load /resources/testharnessreport.js?)"), subtests
	}
}

// sameLayout says whether two dumps of one engine lay out alike: the same tree of
// boxes and every geometry item within tol. Only elements that generate a box are
// compared (boxes): a test's <head> has its help links and assertions, its
// reference's does not. Style is not compared: a reference reaches the same
// rendering by other styles. Two dumps that both overflowed compare as usual (the
// same engine's scrollbar takes the same width); one overflowing alone differs.
func sameLayout(ref, test *dump.Dump, tol float64) (bool, string, error) {
	if ref.Overflowed != test.Overflowed {
		return false, "only one overflowed the viewport", nil
	}
	r, t := boxes(ref), boxes(test)
	rep, err := compare.Dumps(r, t, tol)
	if err != nil {
		return false, "", err
	}
	if d := rep.Shape; d != nil {
		return false, fmt.Sprintf("box trees differ at box %d: reference %s, test %s", d.Index, d.Want, d.Got), nil
	}
	if f := rep.Failures(); len(f) > 0 {
		return false, fmt.Sprintf("%d items, the first box %d %s %s %g vs %g", len(f), f[0].Node, f[0].Tag, f[0].Property, f[0].Want, f[0].Got), nil
	}
	return true, "", nil
}

// boxes is d with only the root and the elements that generate a box (non-empty
// rects), each re-parented to its nearest kept ancestor, overflow cleared.
func boxes(d *dump.Dump) *dump.Dump {
	out := *d
	out.Overflowed = false
	out.Nodes = nil
	kept := make([]int, len(d.Nodes)) // a dropped node maps to its nearest kept ancestor
	for i, n := range d.Nodes {
		p := -1
		if n.Parent >= 0 && n.Parent < i {
			p = kept[n.Parent]
		}
		if i > 0 && len(n.Rects) == 0 {
			kept[i] = p
			continue
		}
		n.Index, n.Parent, n.Depth = len(out.Nodes), p, 0
		if p >= 0 {
			n.Depth = out.Nodes[p].Depth + 1
		}
		kept[i] = n.Index
		out.Nodes = append(out.Nodes, n)
	}
	return &out
}
