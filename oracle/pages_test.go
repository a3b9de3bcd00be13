package oracle

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Unit test of the default page counts (no browser): --pages' default text parses
// back to DefaultEnginePages, a Config that chose nothing gets them, and any choice
// (one number, or a list) replaces them.
func TestEnginePagesFollowTheCPUs(t *testing.T) {
	assert.Equal(t, map[string]int{browser.Chromium: 1, browser.Firefox: 2, browser.WebKit: 1}, enginePagesFor(1))
	assert.Equal(t, map[string]int{browser.Chromium: 2, browser.Firefox: 3, browser.WebKit: 2}, enginePagesFor(2), "the 2-core counts measured")
	assert.Equal(t, map[string]int{browser.Chromium: 4, browser.Firefox: 6, browser.WebKit: 4}, enginePagesFor(4))
	assert.Equal(t, map[string]int{browser.Chromium: 16, browser.Firefox: 16, browser.WebKit: 16}, enginePagesFor(64))
	assert.Equal(t, enginePagesFor(1), enginePagesFor(0))
}

func TestDefaultEnginePages(t *testing.T) {
	def, per, err := ParsePages(DefaultPagesFlag(), DefaultPages)
	require.NoError(t, err)
	assert.Equal(t, DefaultPages, def)
	assert.Equal(t, DefaultEnginePages, per)

	var cfg Config
	defaultEnginePages(&cfg)
	for name, n := range DefaultEnginePages {
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
