package remote

import (
	"context"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/environment"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// Open opens one page on ep over the row of the route table t its protocol names
// (a browser.Connector), with r's launch settings.
func Open(ctx context.Context, t browser.Routes, ep Endpoint, r browser.RemoteLaunch, log zerolog.Logger) (browser.Engine, error) {
	c, ok := t.Named(ep.Protocol).(browser.Connector)
	if !ok {
		return nil, fmt.Errorf("unknown endpoint protocol %q", ep.Protocol)
	}
	r.URL = ep.URL
	return c.Connect(ctx, ep.Engine, r, log)
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
