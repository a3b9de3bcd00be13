package oracle

// A unit test of the trace origin server alone (no engine): which request gets a
// page. The engines' side is cmd/oracle's TestTraceEachCaseHasItsOwnOrigin.

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOriginServesAPageOnceAndOnlyToItsOwnHost(t *testing.T) {
	o, err := startOrigin(zerolog.Nop())
	require.NoError(t, err)
	defer o.Close()
	pageURL, release := o.register(o.newHost(), "..", "<p>case", "")
	defer release()
	u, err := url.Parse(pageURL)
	require.NoError(t, err)
	assert.Regexp(t, `^c[0-9a-f]{20}\.localhost$`, u.Hostname())
	assert.Regexp(t, `^/trace/[0-9a-f]{32}$`, u.Path)

	get := func(host string) (int, string) {
		// Dial the server itself whatever the Host header names.
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+u.Port()+u.Path, nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, other := range []string{"localhost:" + u.Port(), "127.0.0.1:" + u.Port(), "c00000000000000000000.localhost:" + u.Port(), u.Hostname()} {
		code, _ := get(other)
		assert.Equal(t, http.StatusNotFound, code, "host %q", other)
	}
	code, body := get(strings.ToUpper(u.Host))
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "<title>..</title></head><body><p>case</body>")
	code, _ = get(u.Host)
	assert.Equal(t, http.StatusNotFound, code, "a page is served once")
}
