// Package pagecount is how many pages (browser instances, each serving one case at a
// time) each engine gets: by default a count per engine from the CPUs this process
// may run on (PerEngine, Flag), else what --pages says (Parse), and Default for an
// engine --pages leaves out (docs/serving.md, "Pages per engine").
package pagecount

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/internal/cli"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// PerEngine are the page counts an oracle starts with when --pages is not given (and
// its Config names neither Pages nor EnginePages): forCPUs the CPUs this process may
// run on (runtime.NumCPU follows its affinity, so `taskset -c 0` gives the one-core
// counts). Engines --pages=engine=count leaves out get Default.
var PerEngine = forCPUs(runtime.NumCPU())

// pagesPerCPU is each engine's pages per CPU. Firefox gets half a page more than
// the others: its case cost the most when the counts were chosen (on Playwright's route a new
// document makes Playwright evaluate its injected script again), and a request naming no engine is answered when its
// slowest engine is. Measured on 2 cores (2, 3 and 2 pages: cmd/bench/HISTORY.md,
// "Pages per engine"); the counts scale with the cores, since every engine's case
// is CPU bound, up to maxDefaultPages.
var pagesPerCPU = map[string]float64{browser.Chromium: 1, browser.Firefox: 1.5, browser.WebKit: 1}

// maxDefaultPages bounds the default pages per engine on large machines: each page
// is a browser, and past the cores a page only waits.
const maxDefaultPages = 16

// forCPUs is the default page count of every engine on a machine of cpus CPUs.
func forCPUs(cpus int) map[string]int {
	out := map[string]int{}
	for name, per := range pagesPerCPU {
		out[name] = min(maxDefaultPages, max(1, int(math.Ceil(per*float64(max(cpus, 1))))))
	}
	return out
}

// Flag is PerEngine written as --pages takes it.
func Flag() string {
	var parts []string
	for name, n := range PerEngine {
		parts = append(parts, name+"="+strconv.Itoa(n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Default is an engine's page count when --pages names others but not it: the 2-core
// machines this runs on, two cases per engine in flight keep both cores busy while
// the other case waits on its driver's round trip (make bench measures the
// alternatives).
const Default = 2

// Parse parses --pages: one number for every engine ("2"), or a list of
// engine=count ("firefox=3,chromium=1"), where an engine not named gets def. It
// returns the default and the per-engine counts (nil for a plain number).
func Parse(s string, def int) (int, map[string]int, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 {
			return 0, nil, fmt.Errorf("--pages %q: a page count must be at least 1", s)
		}
		return n, nil, nil
	}
	per := map[string]int{}
	for _, item := range cli.SplitList(s) {
		name, count, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		n, err := strconv.Atoi(strings.TrimSpace(count))
		switch {
		case !ok:
			return 0, nil, fmt.Errorf("--pages %q: want a number or engine=count,... (e.g. firefox=3,chromium=1)", s)
		case !slices.Contains(browser.AllEngines, name):
			return 0, nil, fmt.Errorf("--pages %q: unknown engine %q (known: %s)", s, name, strings.Join(browser.AllEngines, ", "))
		case err != nil || n <= 0:
			return 0, nil, fmt.Errorf("--pages %q: %s's page count must be a number of at least 1", s, name)
		}
		if _, dup := per[name]; dup {
			return 0, nil, fmt.Errorf("--pages %q: %s named twice", s, name)
		}
		per[name] = n
	}
	if len(per) == 0 {
		return 0, nil, fmt.Errorf("--pages %q: want a number or a list of engine=count", s)
	}
	return def, per, nil
}
