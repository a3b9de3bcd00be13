package oracle

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/pagecount"
	"github.com/stretchr/testify/assert"
)

// Unit test of the default page counts (no browser): a Config that chose nothing
// gets pagecount.PerEngine, and any choice (one number, or a list) replaces them.
func TestDefaultEnginePages(t *testing.T) {
	var cfg Config
	defaultEnginePages(&cfg)
	for name, n := range pagecount.PerEngine {
		assert.Equal(t, n, cfg.pagesFor(name), name)
	}

	one := Config{Pages: 1}
	defaultEnginePages(&one)
	assert.Nil(t, one.EnginePages, "--pages=1 means one page for every engine")
	assert.Equal(t, 1, one.pagesFor(browser.Firefox))

	list := Config{EnginePages: map[string]int{browser.Chromium: 1}}
	defaultEnginePages(&list)
	assert.Equal(t, map[string]int{browser.Chromium: 1}, list.EnginePages)
}
