package playwright

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"
)

// A page on Playwright's browser server (`playwright run-server`, launchServer; the
// protocol of Playwright's containers and hosted grids): BrowserType.Connect over a
// WebSocket, the server launching one browser per connection. The server takes the
// browser's name from the x-playwright-browser header (playwright-go sets it to the
// browser type's name: chromium or firefox) and its launch options from
// x-playwright-launch-options (JSON), or from the URL's ?browser= and
// ?launch-options= when present, which then win over the headers. Without --unsafe
// the server drops args, executablePath, firefoxUserPrefs and chromiumSandbox from
// them (playwright-core's filterLaunchOptions): headless, channel, proxy and timeout
// remain. What is dropped is caught by the self-check's environment probe.

// connect connects to the browser server at wsURL and opens the same
// context and page a local launch opens (openContext), on a browser the server
// launches with the launch options a local launch of opts would use, as far as the
// protocol carries them. route is RouteSystem (Debian's builds: Chromium at its
// system path, Firefox ESR over WebDriver BiDi, channel moz-firefox) or
// RoutePlaywright (the server's own bundled builds). A launch-options query in wsURL is
// merged over the oracle's (a null value removes the oracle's key) and sent as the
// header. A dropped connection reconnects with relaunchBrowser's backoff; a browser
// of another version on reconnection is ErrVersionChanged.
//
// proxy (host:port) is also sent as Playwright's proxy option, which a server keeps
// without --unsafe, so the allowlist holds even where the args are dropped.
func (d *Driver) connect(wsURL, route, proxy string, opts Options, log zerolog.Logger) (browser.Engine, error) {
	endpoint, launch, err := remoteLaunchOptions(wsURL, route, proxy, opts)
	if err != nil {
		return nil, err
	}
	e, err := d.connectPlaywright(endpoint, launch, opts, log, new(pageTracker))
	if err != nil {
		return nil, err
	}
	version := e.version
	e.relaunch = func(on *Driver) (*playwrightEngine, error) {
		fresh, err := on.connectPlaywright(endpoint, launch, opts, log, e.pages)
		if err != nil {
			return nil, err
		}
		if fresh.version != version {
			fresh.Close()
			return nil, fmt.Errorf("%s at %s: %w: it was %s, it is now %s", opts.Engine, endpoint, browser.ErrVersionChanged, version, fresh.version)
		}
		return fresh, nil
	}
	return e, nil
}

// remoteLaunchOptions is the endpoint to dial (wsURL without its launch-options
// query) and the launch options to send.
func remoteLaunchOptions(wsURL, route, proxy string, opts Options) (string, map[string]any, error) {
	launch := map[string]any{"headless": true, "timeout": 60_000}
	if proxy != "" {
		launch["proxy"] = map[string]any{"server": "http://" + proxy, "bypass": ""}
	}
	k := knowledgeOf(opts.Engine)
	if route != browser.RoutePlaywright && k.systemExe != "" {
		launch["executablePath"] = cmp.Or(opts.ExecutablePath, k.systemExe)
		if k.channel != "" {
			launch["channel"] = k.channel
		}
	}
	if k.remoteLaunch != nil {
		k.remoteLaunch(launch, opts)
	}
	u, err := url.Parse(wsURL)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	if own := q.Get("launch-options"); own != "" {
		var user map[string]any
		if err := json.Unmarshal([]byte(own), &user); err != nil {
			return "", nil, fmt.Errorf("%s: launch-options in the URL is not a JSON object: %v", wsURL, err)
		}
		for k, v := range user {
			if v == nil {
				delete(launch, k)
			} else {
				launch[k] = v
			}
		}
		q.Del("launch-options")
		u.RawQuery = q.Encode()
	}
	return u.String(), launch, nil
}

// RemoteLaunchHeader is the x-playwright-launch-options header the route's Connect
// sends for a page of engine opened with r: its size is what a server's header limit
// sees.
func RemoteLaunchHeader(engine string, r browser.RemoteLaunch) (string, error) {
	_, launch, err := remoteLaunchOptions(r.URL, remoteRoute(r), r.Proxy, remoteOptions(engine, r))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(launch)
	return string(b), err
}

// connectTimeout bounds BrowserType.Connect: the server's handshake and its browser's
// launch. handshakeTimeout bounds the handshake alone (one HTTP upgrade, answered
// before the server launches anything): a server that accepts and stays silent
// costs that, not connectTimeout.
const (
	connectTimeout   = 90 * time.Second
	handshakeTimeout = 15 * time.Second
)

func (d *Driver) connectPlaywright(endpoint string, launch map[string]any, opts Options, log zerolog.Logger, pages *pageTracker) (*playwrightEngine, error) {
	bt := d.browserType(opts.Engine)
	if bt == nil {
		return nil, fmt.Errorf("unknown engine %q", opts.Engine)
	}
	header, err := json.Marshal(launch)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// The connection goes through a relay that checks the server's messages
	// (playwright/relay.go): a malformed one closes this connection, not the process.
	relay, stopRelay, err := startRelay(endpoint, opts.MaxMessage, handshakeTimeout, log)
	if err != nil {
		return nil, err
	}
	pwb, err := bt.Connect(relay, playwright.BrowserTypeConnectOptions{
		Headers: map[string]string{"x-playwright-launch-options": string(header)},
		Timeout: playwright.Float(float64(connectTimeout.Milliseconds())),
	})
	if err != nil {
		stopRelay()
		hint := ""
		// The server's status reaches us as text, through the driver's node process.
		if strings.Contains(err.Error(), " 431 ") {
			// Node's default limit is 16 KiB; the oracle's own options are about 9 KB,
			// but a launch-options query in the URL adds to them.
			hint = fmt.Sprintf(" (the launch options, %d bytes, exceed the server's header limit: start it with NODE_OPTIONS=--max-http-header-size=65536; docs/remote.md)", len(header))
		}
		return nil, browser.EngineErrorf(opts.Engine, "connect %s: %w%s", endpoint, err, hint)
	}
	if err := browser.CheckVersion(pwb.Version()); err != nil {
		pwb.Close()
		return nil, browser.EngineErrorf(opts.Engine, "connect %s: %w", endpoint, err)
	}
	route := "playwright-go connect " + endpoint
	if exe, ok := launch["executablePath"].(string); ok {
		route += " " + exe
	} else {
		route += " (the server's bundled build)"
	}
	if ch, ok := launch["channel"].(string); ok && strings.HasPrefix(ch, "moz-") {
		route += " (WebDriver BiDi, channel " + ch + ")"
	}
	e := &playwrightEngine{remote: true, name: opts.Engine, version: pwb.Version(), route: route, browser: pwb, log: log,
		initScripts: len(opts.InitScripts) > 0, pw: d, opts: opts, pages: pages}
	if e.context, e.page, err = e.openContext(pwb); err != nil {
		e.Close()
		return nil, err
	}
	log.Info().Str("engine", e.name).Str("version", e.version).Str("route", route).
		Dur("connect", time.Since(start)).Msg("engine connected")
	return e, nil
}

// ownDriver makes e, a Playwright engine, stop pw when it closes (a remote
// endpoint's page has a driver of its own, as a local page does).
func ownDriver(e browser.Engine, pw *Driver) {
	if e, ok := e.(*playwrightEngine); ok {
		e.driver = pw
	}
}
