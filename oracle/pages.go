package oracle

import (
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// DefaultEnginePages are the page counts an oracle starts with when --pages is not
// given (and a Config names neither Pages nor EnginePages): enginePagesFor the CPUs
// this process may run on (runtime.NumCPU follows its affinity, so `taskset -c 0`
// gives the one-core counts). Engines --pages=engine=count leaves out keep
// DefaultPages.
var DefaultEnginePages = enginePagesFor(runtime.NumCPU())

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

// enginePagesFor is the default page count of every engine on a machine of cpus CPUs.
func enginePagesFor(cpus int) map[string]int {
	out := map[string]int{}
	for name, per := range pagesPerCPU {
		out[name] = min(maxDefaultPages, max(1, int(math.Ceil(per*float64(max(cpus, 1))))))
	}
	return out
}

// DefaultPagesFlag is DefaultEnginePages written as --pages takes it.
func DefaultPagesFlag() string {
	var parts []string
	for name, n := range DefaultEnginePages {
		parts = append(parts, name+"="+strconv.Itoa(n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// defaultEnginePages fills in DefaultEnginePages for a Config that chose no page
// counts at all.
func defaultEnginePages(cfg *Config) {
	if cfg.Pages > 0 || len(cfg.EnginePages) > 0 {
		return
	}
	cfg.EnginePages = map[string]int{}
	for name, n := range DefaultEnginePages {
		cfg.EnginePages[name] = n
	}
}
