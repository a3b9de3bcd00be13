package webdriver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// A page on a remote W3C WebDriver endpoint (--webdriver webkit=URL: a
// WebKitWebDriver on another host, or a Selenium Grid): the WebDriver engine with its
// process-launching part skipped. Each page is one session on the endpoint, opened
// with the capabilities the local route sends (webkitgtk:browserOptions naming
// MiniBrowser with --automation --enable-sandbox and the launch profile's and the
// pinned environment's arguments, the proxy, unhandledPromptBehavior). A restart (a
// wedged or lost session, a dropped connection) deletes the old session and opens a
// new one after the endpoint's /status says ready again, polling with backoff; a
// browserVersion other than the first session's is ErrVersionChanged. The driver's
// and browser's environment (the pinned fonts' FONTCONFIG_FILE, DISPLAY) is the
// endpoint host's to set: the self-check's environment probe verifies it.

func remoteWebDriverRoute(opts Options) string {
	if opts.AnyEngine {
		return "webdriver remote " + opts.RemoteURL
	}
	return fmt.Sprintf("webdriver remote %s + %s (WebKitGTK)", opts.RemoteURL, opts.BrowserPath)
}

// remoteBackoff is the wait between /status polls of a remote endpoint that does not
// answer ready; the last repeats until remoteReadyWithin.
var remoteBackoff = []time.Duration{0, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}

const remoteReadyWithin = 30 * time.Second

// remoteDriver stands in for startDriver: no process, the endpoint's base URL, and a
// kill that deletes the session.
func (e *webDriverEngine) remoteDriver(ctx context.Context) (*wdProc, error) {
	p := &wdProc{base: strings.TrimRight(e.opts.RemoteURL, "/"),
		out: host.NewTailLog(e.log.With().Str("proc", "remote-webdriver").Logger())}
	p.endRemote = func() {
		e.mu.Lock()
		session := p.session
		e.mu.Unlock()
		if session == "" {
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if _, err := e.do(dctx, p, http.MethodDelete, "/session/"+session, nil); err != nil {
			e.log.Debug().Err(err).Msg("delete the remote session")
		}
	}
	deadline := time.Now().Add(remoteReadyWithin)
	var lastErr error
	for i := 0; ; i++ {
		ready, err := p.status(ctx, e.client)
		if ready {
			return p, nil
		}
		lastErr = err
		if lastErr == nil {
			lastErr = fmt.Errorf("/status says not ready")
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("remote WebDriver %s not ready within %s: %v", p.base, remoteReadyWithin, lastErr)
		}
		wait := remoteBackoff[min(i, len(remoteBackoff)-1)]
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}
