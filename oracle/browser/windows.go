package browser

import (
	"context"
	"fmt"
)

// OpenWindows counts what e's browser has open: pages and contexts (Playwright),
// window handles and one session (WebDriver). The oracle's isolation tests use it
// to see, from outside the page, what a case left behind.
func OpenWindows(ctx context.Context, e Engine) (pages, contexts int, err error) {
	switch e := e.(type) {
	case *playwrightEngine:
		pages, contexts = e.windowCount()
		return pages, contexts, nil
	case *webDriverEngine:
		hs, err := e.windowHandles(ctx)
		return len(hs), 1, err
	}
	return 0, 0, fmt.Errorf("unknown engine type %T", e)
}

// ContentProcesses are the pids of a Playwright engine's content processes (Chromium's
// renderers, Firefox's web content; processTree and contentProcess, as the sandbox
// check finds them); nil for WebDriver's. The oracle's process-model test counts them.
func ContentProcesses(e Engine) map[int]bool {
	pe, ok := e.(*playwrightEngine)
	if !ok {
		return nil
	}
	pe.mu.Lock()
	roots := append([]int(nil), pe.pids...)
	pe.mu.Unlock()
	out := map[int]bool{}
	for _, p := range processTree(roots) {
		if contentProcess(pe.name, p) {
			out[p.pid] = true
		}
	}
	return out
}
