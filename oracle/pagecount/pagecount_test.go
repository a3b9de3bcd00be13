package pagecount

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Unit tests of the page counts (no browser): the defaults follow the CPUs, --pages'
// default text parses back to them, and --pages is parsed strictly. The real
// engines' page counts are tested through the binary (cmd/oracle startup_test.go).

func TestEnginePagesFollowTheCPUs(t *testing.T) {
	assert.Equal(t, map[string]int{browser.Chromium: 1, browser.Firefox: 2, browser.WebKit: 1}, forCPUs(1))
	assert.Equal(t, map[string]int{browser.Chromium: 2, browser.Firefox: 3, browser.WebKit: 2}, forCPUs(2), "the 2-core counts measured")
	assert.Equal(t, map[string]int{browser.Chromium: 4, browser.Firefox: 6, browser.WebKit: 4}, forCPUs(4))
	assert.Equal(t, map[string]int{browser.Chromium: 16, browser.Firefox: 16, browser.WebKit: 16}, forCPUs(64))
	assert.Equal(t, forCPUs(1), forCPUs(0))
}

func TestFlagParsesBackToPerEngine(t *testing.T) {
	def, per, err := Parse(Flag(), Default)
	require.NoError(t, err)
	assert.Equal(t, Default, def)
	assert.Equal(t, PerEngine, per)
}

func TestParse(t *testing.T) {
	def, per, err := Parse("3", 2)
	require.NoError(t, err)
	assert.Equal(t, 3, def)
	assert.Nil(t, per)

	def, per, err = Parse(" firefox=3, chromium=1 ", 2)
	require.NoError(t, err)
	assert.Equal(t, 2, def)
	assert.Equal(t, map[string]int{browser.Firefox: 3, browser.Chromium: 1}, per)

	for _, bad := range []string{"", "0", "-1", "firefox", "firefox=", "firefox=0", "firefox=x", "opera=2", "firefox=1,firefox=2", ","} {
		_, _, err := Parse(bad, 2)
		assert.Error(t, err, "%q", bad)
	}
}
