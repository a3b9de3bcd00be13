package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/environment"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// remoteLaunchWithin bounds opening one page on a remote WebDriver endpoint.
const remoteLaunchWithin = 2 * time.Minute

// Launch is what a page on an endpoint is opened with: the launch settings every
// engine of the oracle gets and, for a Playwright server, the --browsers route, the
// binary override of the endpoint's engine and the proxy the browser is told to use.
type Launch struct {
	Settings       browser.LaunchSettings
	Browsers       string // --browsers (Route)
	ExecutablePath string // the endpoint's engine's binary override, or ""
	Proxy          string // host:port of the oracle's origin
}

// Open opens one page on ep.
func Open(ctx context.Context, ep Endpoint, l Launch, log zerolog.Logger) (browser.Engine, error) {
	s := l.Settings
	switch ep.Protocol {
	case WebDriver:
		// A remote driver may never answer (a bare WebKitWebDriver asked for a second
		// session was seen to leave the request hanging): the launch has a bound.
		lctx, cancel := context.WithTimeout(ctx, remoteLaunchWithin)
		defer cancel()
		return webdriver.Launch(lctx, webdriver.Options{RemoteURL: ep.URL, BrowserArgs: s.WebKitArgs,
			Capabilities: s.WebDriverCaps, MaxReply: s.MaxReply}, log)
	case Playwright:
		pw, err := playwright.Start(log)
		if err != nil {
			return nil, err
		}
		e, err := pw.Connect(ep.URL, l.Route(), l.Proxy, l.PlaywrightOptions(ep.Engine), log)
		if err != nil {
			return nil, errors.Join(err, pw.Stop())
		}
		playwright.OwnDriver(e, pw)
		return e, nil
	}
	return nil, fmt.Errorf("unknown endpoint protocol %q", ep.Protocol)
}

// PlaywrightOptions is what a Playwright server endpoint of engine is asked for.
func (l Launch) PlaywrightOptions(engine string) playwright.Options {
	opts := playwright.OptionsFor(engine, l.Settings)
	opts.ExecutablePath, opts.MaxMessage = l.ExecutablePath, l.Settings.MaxReply
	return opts
}

// Route is the build a Playwright server is asked to launch under --browsers:
// the system builds (Debian's Chromium, Firefox ESR over BiDi) unless --browsers
// says playwright; a server's host cannot be asked which are installed, and an
// endpoint URL's own launch-options override either (docs/remote.md).
func (l Launch) Route() string {
	if l.Browsers == browser.RoutePlaywright {
		return browser.RoutePlaywright
	}
	return browser.RouteSystem
}

// BrowserHostEnv is the environment (KEY=VALUE) a browser host's server must give
// the browsers of engine for the pinned environment: what a local launch puts in the
// browser's environment, which neither Playwright's server protocol nor WebDriver
// carries. It writes the pinned environment's files on this machine (`oracle
// browser-env` run on the browser host; docs/remote.md).
func BrowserHostEnv(engine string) ([]string, error) {
	s, err := environment.Settings()
	if err != nil {
		return nil, err
	}
	env := host.WithEnv(nil, s.Env)
	if engine == browser.WebKit {
		env = host.WithEnv(env, s.WebKitEnv)
	}
	return env, nil
}
