// Package remote is what the oracle knows of browsers on other hosts
// (docs/remote.md), reached through Playwright's browser server (--connect) or a W3C
// WebDriver endpoint (--webdriver): the endpoints the flags name (Endpoint,
// ParseEndpoint), a page opened on one (Open), which leaves service when its
// browser's build changes on reconnection (Page), and the environment a browser
// host must give its browsers (BrowserHostEnv). Which pages join which engine's
// pool, and when, is package oracle's (its remote.go).
package remote

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// Endpoint protocols.
const (
	Playwright = "playwright" // Playwright's browser server (run-server, launchServer), BrowserType.Connect
	WebDriver  = "webdriver"  // a W3C WebDriver endpoint: a bare driver or a Grid, one session per page
)

// Endpoint is one remote browser endpoint.
type Endpoint struct {
	Engine   string
	URL      string
	Protocol string // Playwright or WebDriver
	Pages    int    // pages (connections, sessions) on it; 0: the oracle's default for the protocol
}

// ParseEndpoint parses one --connect (protocol Playwright) or --webdriver
// (WebDriver) value: ENGINE=URL, or ENGINE:PAGES=URL.
func ParseEndpoint(protocol, s string) (Endpoint, error) {
	flag := map[string]string{Playwright: "--connect", WebDriver: "--webdriver"}[protocol]
	if flag == "" {
		return Endpoint{}, fmt.Errorf("unknown endpoint protocol %q", protocol)
	}
	key, raw, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok || raw == "" {
		return Endpoint{}, fmt.Errorf("%s %q: want ENGINE=URL or ENGINE:PAGES=URL", flag, s)
	}
	ep := Endpoint{Protocol: protocol, URL: raw}
	name, pages, hasPages := strings.Cut(key, ":")
	ep.Engine = strings.TrimSpace(name)
	if hasPages {
		n, err := strconv.Atoi(strings.TrimSpace(pages))
		if err != nil || n <= 0 {
			return Endpoint{}, fmt.Errorf("%s %q: the page count must be a number of at least 1", flag, s)
		}
		ep.Pages = n
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Endpoint{}, fmt.Errorf("%s %q: not a URL with a host", flag, s)
	}
	switch protocol {
	case Playwright:
		if ep.Engine != browser.Chromium && ep.Engine != browser.Firefox {
			return Endpoint{}, fmt.Errorf("%s %q: Playwright's server serves chromium or firefox here (stock WebKitGTK is reached over --webdriver)", flag, s)
		}
		if u.Scheme != "ws" && u.Scheme != "wss" {
			return Endpoint{}, fmt.Errorf("%s %q: want a ws:// or wss:// URL", flag, s)
		}
	case WebDriver:
		if ep.Engine != browser.WebKit {
			return Endpoint{}, fmt.Errorf("%s %q: the WebDriver route serves webkit", flag, s)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return Endpoint{}, fmt.Errorf("%s %q: want an http:// or https:// URL", flag, s)
		}
	}
	return ep, nil
}
