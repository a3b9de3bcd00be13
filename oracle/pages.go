package oracle

import "github.com/layout-oracle/oracle/oracle/pagecount"

// defaultEnginePages fills in pagecount.PerEngine for a Config that chose no page
// counts at all.
func defaultEnginePages(cfg *Config) {
	if cfg.Pages > 0 || len(cfg.EnginePages) > 0 {
		return
	}
	cfg.EnginePages = map[string]int{}
	for name, n := range pagecount.PerEngine {
		cfg.EnginePages[name] = n
	}
}
