package origin

// A unit test of the trace origin server alone (no engine): which request gets a
// page. The engines' side is cmd/oracle's TestTraceEachCaseHasItsOwnOrigin.

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOriginServesAPageOnceAndOnlyToItsOwnHost(t *testing.T) {
	o, err := Start("", zerolog.Nop())
	require.NoError(t, err)
	defer o.Close()
	pageURL, release := o.Register(o.NewHost(), "..", "<p>case", "")
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
	// Hosts that are not the oracle's origins are refused by the network allowlist
	// (network.go); another case's origin is one of them, and has no such page.
	for _, other := range []string{"localhost:" + u.Port(), "127.0.0.1:" + u.Port(), u.Hostname()} {
		code, _ := get(other)
		assert.Equal(t, http.StatusForbidden, code, "host %q", other)
	}
	code, _ := get("c00000000000000000000.localhost:" + u.Port())
	assert.Equal(t, http.StatusNotFound, code, "another case's origin")
	var body string
	code, body = get(strings.ToUpper(u.Host))
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "<title>..</title></head><body><p>case</body>")
	code, _ = get(u.Host)
	assert.Equal(t, http.StatusNotFound, code, "a page is served once")
}

// A unit test of the proxy side of the allowlist (no engine): the origin server used
// as a proxy forwards nothing. An absolute-form request for another host or port, or a
// CONNECT, is refused with 403; one for an own origin is served like a direct one.
// The engines' side is cmd/oracle's TestNetworkAllowlist*.
func TestOriginAsProxyServesOnlyItsOwnOrigins(t *testing.T) {
	o, err := Start("", zerolog.Nop())
	require.NoError(t, err)
	defer o.Close()
	pageURL, release := o.Register(o.NewHost(), "p", "<p>case", "")
	defer release()
	proxy, err := url.Parse("http://127.0.0.1:" + strconv.Itoa(o.port))
	require.NoError(t, err)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	for _, target := range []string{"http://127.0.0.1:9/", "http://localhost:" + strconv.Itoa(o.port) + "/trace/x",
		"http://c0123.localhost:9/", "http://example.invalid/"} {
		resp, err := client.Get(target)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, target)
	}
	// https through a proxy is a CONNECT tunnel: refused.
	_, err = client.Get("https://127.0.0.1:9/")
	assert.Error(t, err)
	resp, err := client.Get(pageURL)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), "<p>case")
}

func TestParseListen(t *testing.T) {
	for _, ok := range []string{"10.0.0.5:9000", "oracle.internal:0", "[fd00::1]:9000"} {
		_, err := ParseListen(ok)
		assert.NoError(t, err, ok)
	}
	for _, bad := range []string{"0.0.0.0:9000", "[::]:9000", ":9000", "host", "h:99999"} {
		_, err := ParseListen(bad)
		assert.Error(t, err, bad)
	}
}
