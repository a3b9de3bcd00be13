package oracle

import (
	"sort"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// DefaultEnginePages are the page counts an oracle starts with when --pages is not
// given (and a Config names neither Pages nor EnginePages). Firefox gets one page
// more than the others: its case costs the most on the 2-core machines this runs on
// (the reset's navigation makes Playwright evaluate its injected script again), and a
// request naming no engine is answered when its slowest engine is; cmd/bench/README.md
// ("Pages per engine") has the measurement. Engines --pages=engine=count leaves out
// keep DefaultPages.
var DefaultEnginePages = map[string]int{browser.Chromium: 2, browser.Firefox: 3, browser.WebKit: 2}

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
