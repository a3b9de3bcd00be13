package origin

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// The network allowlist. Every browser is pointed at the oracle's origin
// server as its HTTP proxy for every URL, loopback included, and the origin answers
// only requests for its own hosts (<token>.localhost:<origin port>, whatever path);
// it refuses every other host and port, IP literals, and CONNECT (https, wss, ws
// through a proxy, any tunnel) with 403. So a case reaches nothing but the oracle's
// own origins: not another loopback port, not the machine's network. data: and blob:
// never touch the network and keep working; file: is not the proxy's to refuse and
// is checked by test in every engine (docs/untrusted.md).
//
// A proxy rather than request interception: it covers every route (the own CDP and
// BiDi clients, playwright-go and WebDriver) and every request kind (fetch, XHR, subresources, navigations,
// popups, WebSocket, sendBeacon, prefetches, the browser's own background requests)
// the same way, with nothing to miss in a per-engine routing API.

// ownHost says whether host (a request's Host, host:port) is one of the oracle's
// origins: c<hex>.localhost on the origin's port. The case token's letters are
// checked loosely (any [0-9a-z]) so that another served kind of page on the same
// origin server keeps working; the port and the .localhost suffix are exact.
func (o *Server) ownHost(host string) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != strconv.Itoa(o.port) {
		return false
	}
	h = strings.ToLower(h)
	label, ok := strings.CutSuffix(h, ".localhost")
	if !ok || len(label) < 2 || label[0] != 'c' {
		return false
	}
	for _, r := range label {
		if (r < '0' || r > '9') && (r < 'a' || r > 'z') {
			return false
		}
	}
	return true
}

// guard wraps the origin's handler with the allowlist. A proxied request arrives in
// absolute form (GET http://host/path), for which net/http sets r.Host to the
// URL's host; a direct one carries it in its Host header: both are checked the same.
func (o *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect || !o.ownHost(r.Host) {
			o.log.Debug().Str("method", r.Method).Str("host", r.Host).Str("url", r.URL.String()).
				Msg("network allowlist: refused a request outside the oracle's origins")
			w.Header().Set("Connection", "close")
			http.Error(w, "the layout oracle serves only its own origins", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ProxySettings points every engine at the origin server (on host:port, host
// 127.0.0.1 unless --origin-listen named another) as its proxy, with every implicit
// bypass of loopback removed.
func ProxySettings(host string, port int) browser.LaunchSettings {
	if port == 0 {
		return browser.LaunchSettings{}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	hostPort := net.JoinHostPort(host, strconv.Itoa(port))
	return browser.LaunchSettings{
		ChromiumArgs: []string{
			"--proxy-server=http://" + hostPort,
			// Chromium never proxies loopback (localhost, *.localhost, 127/8, [::1])
			// unless told to: "<-loopback>" removes that implicit bypass.
			"--proxy-bypass-list=<-loopback>",
			// WebRTC may only use proxied TCP: no UDP, no direct TCP to a TURN server.
			"--webrtc-ip-handling-policy=disable_non_proxied_udp",
		},
		FirefoxPrefs: map[string]any{
			"network.proxy.type":                            1, // manual
			"network.proxy.http":                            host,
			"network.proxy.http_port":                       port,
			"network.proxy.ssl":                             host,
			"network.proxy.ssl_port":                        port,
			"network.proxy.share_proxy_settings":            false,
			"network.proxy.socks":                           "",
			"network.proxy.socks_remote_dns":                false,
			"network.proxy.no_proxies_on":                   "",
			"network.proxy.allow_hijacking_localhost":       true, // else localhost and 127/8 go direct
			"network.proxy.failover_direct":                 false,
			"network.proxy.allow_bypass":                    false,
			"media.peerconnection.enabled":                  false, // WebRTC would reach hosts directly
			"network.dns.disablePrefetch":                   true,
			"network.prefetch-next":                         false,
			"network.http.speculative-parallel-limit":       0,
			"browser.safebrowsing.downloads.remote.enabled": false,
		},
		// The W3C proxy capability: WebKitWebDriver hands it to the automation
		// session's network session.
		WebDriverCaps: map[string]any{"proxy": map[string]any{
			"proxyType": "manual", "httpProxy": hostPort, "sslProxy": hostPort, "noProxy": []string{},
		}},
	}
}
