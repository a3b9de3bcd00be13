package browser

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// OpenWindows counts what e's browser has open: pages and contexts (Playwright),
// window handles and one session (WebDriver), top-level browsing contexts and one
// session (BiDi), page targets and browser contexts (CDP). The oracle's isolation
// tests use it to see, from outside the page, what a case left behind.
func OpenWindows(ctx context.Context, e Engine) (pages, contexts int, err error) {
	switch e := e.(type) {
	case *playwrightEngine:
		pages, contexts = e.windowCount()
		return pages, contexts, nil
	case *webDriverEngine:
		hs, err := e.windowHandles(ctx)
		return len(hs), 1, err
	case *bidiEngine:
		conn, _ := e.current()
		if conn == nil {
			return 0, 0, fmt.Errorf("firefox: no BiDi session")
		}
		tops, err := topContexts(ctx, conn)
		return len(tops), 1, err
	case *cdpEngine:
		return e.windowCount(ctx)
	}
	return 0, 0, fmt.Errorf("unknown engine type %T", e)
}

// ContentProcesses are the pids of a Playwright, CDP or BiDi engine's content processes
// (Chromium's renderers, Firefox's web content; host.ProcessTree and contentProcess, as the
// sandbox check finds them); nil for WebDriver's. The oracle's process-model test counts them.
func ContentProcesses(e Engine) map[int]bool {
	var roots []int
	switch e := e.(type) {
	case *playwrightEngine:
		e.mu.Lock()
		roots = append(roots, e.pids...)
		e.mu.Unlock()
	case interface{ pids() []int }: // the own-client routes (ownBrowser)
		roots = e.pids()
	default:
		return nil
	}
	out := map[int]bool{}
	for _, p := range host.ProcessTree(roots) {
		if contentProcess(e.Name(), p) {
			out[p.PID] = true
		}
	}
	return out
}

// windowCount is what the browser has open, as Playwright's windowCount counts it:
// every page target, and every browser context but the default one (Playwright's
// Browser.Contexts lists only the contexts it made).
func (e *cdpEngine) windowCount(ctx context.Context) (pages, contexts int, err error) {
	e.mu.Lock()
	conn := e.conn
	e.mu.Unlock()
	if conn == nil {
		return 0, 0, fmt.Errorf("chromium: no CDP connection")
	}
	all, err := pageTargets(ctx, conn)
	if err != nil {
		return 0, 0, err
	}
	raw, err := conn.call(ctx, "", "Target.getBrowserContexts", nil)
	if err != nil {
		return 0, 0, err
	}
	var c struct {
		BrowserContextIDs []string `json:"browserContextIds"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0, 0, err
	}
	return len(all), len(c.BrowserContextIDs), nil
}
