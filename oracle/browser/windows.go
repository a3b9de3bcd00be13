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

// BrowserPIDs are the main process ids of a Playwright engine's browser (nil for
// WebDriver's): the oracle's process-model test looks for content processes below them.
func BrowserPIDs(e Engine) []int {
	if e, ok := e.(*playwrightEngine); ok {
		e.mu.Lock()
		defer e.mu.Unlock()
		return append([]int(nil), e.pids...)
	}
	return nil
}
