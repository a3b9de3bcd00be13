package browser

import (
	"context"
	"fmt"
)

// OpenWindows counts what e's browser has open: pages and contexts (Playwright),
// window handles and one session (WebDriver), top-level browsing contexts and one
// session (BiDi). The oracle's isolation tests use it to see, from outside the page,
// what a case left behind.
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
	}
	return 0, 0, fmt.Errorf("unknown engine type %T", e)
}

// ContentProcesses are the pids of a Playwright or BiDi engine's content processes
// (Chromium's renderers, Firefox's web content; processTree and contentProcess, as the
// sandbox check finds them); nil for WebDriver's. The oracle's process-model test counts them.
func ContentProcesses(e Engine) map[int]bool {
	var roots []int
	switch e := e.(type) {
	case *playwrightEngine:
		e.mu.Lock()
		roots = append(roots, e.pids...)
		e.mu.Unlock()
	case *bidiEngine:
		e.mu.Lock()
		if e.proc != nil {
			roots = []int{e.proc.cmd.Process.Pid}
		}
		e.mu.Unlock()
	default:
		return nil
	}
	out := map[int]bool{}
	for _, p := range processTree(roots) {
		if contentProcess(e.Name(), p) {
			out[p.pid] = true
		}
	}
	return out
}
