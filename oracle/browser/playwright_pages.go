// Tracking a Playwright engine's pages and contexts: open, crashed, closed under
// the oracle (events playwright-go delivers on its connection goroutine).

package browser

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// openPages holds the pages not closed yet. playwright-go's Page.IsClosed reads a
// field its connection goroutine writes without a lock (a data race under -race);
// its close event is delivered on that goroutine, so the map is kept from there.
var openPages sync.Map

// crashedPages holds the open pages whose renderer (Chromium) or content process
// (Firefox) crashed, from Playwright's crash event, delivered at once on the
// connection's goroutine. Such a page fails every later call, so the next call
// replaces it. Kept per page, not per engine: a relaunch adopts the pages of the
// engine value that launched them.
var crashedPages sync.Map

// contexts holds, per browser context an engine uses, whether it closed under the
// oracle: Firefox closes the page's context when its content process is killed, and
// no new page can open in it. An engine forgets its context when it replaces or
// closes it, so the map holds only contexts in use (it only grew before, issue 27).
var contexts sync.Map // playwright.BrowserContext -> *atomic.Bool

// contextClosed says whether c closed; a context no engine uses any more counts as closed.
func contextClosed(c playwright.BrowserContext) bool {
	v, ok := contexts.Load(c)
	return !ok || v.(*atomic.Bool).Load()
}

func forgetContext(c playwright.BrowserContext) {
	if c != nil {
		contexts.Delete(c)
	}
}

// contextLost says whether the call that failed with err on p failed because p's
// context (or browser) went away under it. Firefox's error ("Execution context was
// destroyed") arrives before the close and disconnect events, up to a second before
// them under a race-built oracle: such an error waits a moment for them. A case that
// merely navigated away gets the same error, and pays that wait.
func contextLost(b playwright.Browser, c playwright.BrowserContext, p playwright.Page, err error) bool {
	gone := func() bool { return contextClosed(c) || !b.IsConnected() || (p != nil && !pageOpen(p)) }
	if contextClosed(c) {
		return true
	}
	if s := err.Error(); !strings.Contains(s, "context was destroyed") && !strings.Contains(s, "has been closed") {
		return false
	}
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if gone() {
			return true
		}
	}
	return false
}

// trackPage follows p's close and crash events.
func (e *playwrightEngine) trackPage(p playwright.Page) {
	openPages.Store(p, struct{}{})
	p.OnClose(func(playwright.Page) { openPages.Delete(p); crashedPages.Delete(p) })
	p.OnCrash(func(playwright.Page) {
		crashedPages.Store(p, struct{}{})
		e.log.Warn().Str("engine", e.name).Msg("page crashed; a new page opens for the next call")
	})
}

func pageIsCrashed(p playwright.Page) bool {
	_, ok := crashedPages.Load(p)
	return ok
}

// pageCrashed says whether the call that failed with err on p failed on a crash. The
// call's error can arrive just before the crash event: an error that names a crash
// waits a moment for it.
func pageCrashed(p playwright.Page, err error) bool {
	if pageIsCrashed(p) {
		return true
	}
	if !strings.Contains(strings.ToLower(err.Error()), "crash") {
		return false
	}
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pageIsCrashed(p) {
			return true
		}
	}
	return false
}

func pageOpen(p playwright.Page) bool {
	_, ok := openPages.Load(p)
	return ok
}
