package candidate

// Against Debian's ChromeDriver, a real WebDriver server separate from the oracle.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/internal/testutil/chromedriver"
)

// A WebDriver endpoint is a candidate with no adapter: its dump is the oracle's
// walk, in the contract's 800x600 viewport, named by the session's browserName
// and browserVersion; two cases at once use two sessions.
func TestWebDriverCandidateWalksChromeDriver(t *testing.T) {
	testutil.NeedsBrowsers(t)
	url := chromedriver.Start(t)
	webDriverLog = testutil.Logger(t)
	defer func() { webDriverLog = zerolog.Nop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := Open(ctx, Spec{WebDriver: url, Caps: chromedriver.Capabilities(), Timeout: time.Minute, Parallel: 2})
	require.NoError(t, err)
	defer c.Close()
	w := c.(*webDriver)
	name, version := w.Engine()
	assert.Equal(t, "chrome", name) // ChromeDriver's browserName for Chromium
	assert.Regexp(t, `^\d+\.`, version)
	assert.Contains(t, c.Describe(), url)

	htmls := []string{
		`<!doctype html><body style="margin:0"><div style="width:123px;height:45px"></div>`,
		`<!doctype html><body style="margin:8px"><p style="width:50%">x</p><span>y</span>`,
	}
	got := make([]*dump.Dump, len(htmls))
	errs := make([]error, len(htmls))
	done := make(chan int)
	for i, h := range htmls {
		go func() { got[i], errs[i] = c.Dump(ctx, h); done <- i }()
	}
	for range htmls {
		<-done
	}
	for i := range htmls {
		require.NoError(t, errs[i], "case %d", i)
		assert.Equal(t, "chrome", got[i].Engine)
		assert.Equal(t, version, got[i].EngineVersion)
		assert.Equal(t, dump.Viewport, got[i].Viewport)
		assert.Equal(t, "HTML", got[i].Nodes[0].Tag)
		assert.Equal(t, 800.0, got[i].Nodes[0].Bounding.W, "the viewport is 800 px wide")
	}
	div := got[0].Nodes[3] // HTML, HEAD, BODY, DIV
	assert.Equal(t, "DIV", div.Tag)
	assert.Equal(t, dump.Rect{X: 0, Y: 0, W: 123, H: 45}, div.Bounding)
	p := got[1].Nodes[3]
	assert.Equal(t, "P", p.Tag)
	assert.Equal(t, 392.0, p.Bounding.W, "50% of 800 - 2 x 8 px")

	// A case that never settles is that case's timeout, and the next case is answered.
	short, err := Open(ctx, Spec{WebDriver: url, Caps: chromedriver.Capabilities(), Timeout: 3 * time.Second, Parallel: 1})
	require.NoError(t, err)
	defer short.Close()
	_, err = short.Dump(ctx, `<script>while(true){}</script>`)
	var ce *Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "timeout", ce.Kind)
	d, err := short.Dump(ctx, htmls[0])
	require.NoError(t, err, "the session after a wedged case")
	assert.Equal(t, "HTML", d.Nodes[0].Tag)
}

// An endpoint that is no http(s) URL is refused at once. Before, "not a url" took
// the launch's 30 s of retries, three times, and its error named WebKitWebDriver.
func TestWebDriverCandidateRefusesANonURLAtOnce(t *testing.T) {
	for _, u := range []string{"not a url", "localhost:4444", "ftp://h:1/", "http://"} {
		start := time.Now()
		_, err := openWebDriver(context.Background(), u, "", time.Second, 1)
		assert.ErrorContains(t, err, "want an http:// or https:// URL with a host", u)
		assert.Less(t, time.Since(start), time.Second, u)
	}
}
