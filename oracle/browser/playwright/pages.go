// Tracking a Playwright engine's pages and contexts: open, crashed, closed under
// the oracle (events playwright-go delivers on its connection goroutine).

package playwright

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// pageTracker is what playwright-go's events said about one engine's pages and
// contexts. It belongs to the engine value (and the engine values its relaunches
// make, whose pages it adopts), so two engines in one process share nothing.
type pageTracker struct {
	// open holds the pages not closed yet. playwright-go's Page.IsClosed reads a
	// field its connection goroutine writes without a lock (a data race under -race);
	// its close event is delivered on that goroutine, so the map is kept from there.
	open sync.Map // playwright.Page -> struct{}
	// crashed holds the open pages whose renderer (Chromium) or content process
	// (Firefox) crashed, from Playwright's crash event, delivered at once on the
	// connection's goroutine. Such a page fails every later call, so the next call
	// replaces it.
	crashed sync.Map // playwright.Page -> struct{}
	// contexts holds, per browser context the engine uses, whether it closed under
	// the oracle: Firefox closes the page's context when its content process is
	// killed, and no new page can open in it. The engine forgets its context when it
	// replaces or closes it, so the map holds only contexts in use (it used to
	// only grow).
	contexts sync.Map // playwright.BrowserContext -> *atomic.Bool
	// emulated holds, per open page, what the launch profile's emulation applied to
	// it (playwright/emulation.go).
	emulated sync.Map // playwright.Page -> *pageEmulation
	// cdp holds, per open page, the CDP session the engine evaluates over
	// (evaluateWithoutGesture), opened by the page's first evaluation.
	cdp sync.Map // playwright.Page -> playwright.CDPSession
	// ended holds, per open page, a channel closed when it crashes or closes: a CDP
	// call pending on a crashed page gets no answer, where Evaluate failed.
	ended sync.Map // playwright.Page -> *pageEnd
}

type pageEnd struct {
	once sync.Once
	c    chan struct{}
}

func (e *pageEnd) end() { e.once.Do(func() { close(e.c) }) }

// pageEnded is closed once p crashed or closed; nil (never ready) for a page no
// longer tracked, whose CDP calls fail by themselves.
func (t *pageTracker) pageEnded(p playwright.Page) <-chan struct{} {
	if v, ok := t.ended.Load(p); ok {
		return v.(*pageEnd).c
	}
	return nil
}

// trackContext follows c's close event.
func (t *pageTracker) trackContext(c playwright.BrowserContext) {
	closed := new(atomic.Bool)
	t.contexts.Store(c, closed)
	c.OnClose(func(playwright.BrowserContext) { closed.Store(true) })
}

// contextClosed says whether c closed; a context the engine no longer uses counts as closed.
func (t *pageTracker) contextClosed(c playwright.BrowserContext) bool {
	v, ok := t.contexts.Load(c)
	return !ok || v.(*atomic.Bool).Load()
}

func (t *pageTracker) forgetContext(c playwright.BrowserContext) {
	if c != nil {
		t.contexts.Delete(c)
	}
}

// contextLost says whether the call that failed with err on p failed because p's
// context (or browser) went away under it. Firefox's error ("Execution context was
// destroyed") arrives before the close and disconnect events, up to a second before
// them under a race-built oracle: such an error waits a moment for them. A case that
// merely navigated away gets the same error, and pays that wait.
func (t *pageTracker) contextLost(b playwright.Browser, c playwright.BrowserContext, p playwright.Page, err error) bool {
	gone := func() bool { return t.contextClosed(c) || !b.IsConnected() || (p != nil && !t.pageOpen(p)) }
	if t.contextClosed(c) {
		return true
	}
	if !errors.Is(err, playwright.ErrTargetClosed) && !contextDestroyed(err) {
		return false
	}
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if gone() {
			return true
		}
	}
	return false
}

// contextDestroyed says err is the page's JavaScript context going away under a
// call ("Execution context was destroyed, most likely because of a navigation"):
// Playwright sends it as a plain Error, with no name or code to test, so its text
// is all there is.
func contextDestroyed(err error) bool {
	return strings.Contains(err.Error(), "context was destroyed")
}

// trackPage follows p's close and crash events.
func (e *playwrightEngine) trackPage(p playwright.Page) {
	t := e.pages
	t.open.Store(p, struct{}{})
	end := &pageEnd{c: make(chan struct{})}
	t.ended.Store(p, end)
	p.OnClose(func(playwright.Page) {
		t.open.Delete(p)
		t.crashed.Delete(p)
		t.emulated.Delete(p)
		t.cdp.Delete(p)
		t.ended.Delete(p)
		end.end()
	})
	p.OnCrash(func(playwright.Page) {
		t.crashed.Store(p, struct{}{})
		end.end()
		e.log.Warn().Str("engine", e.name).Msg("page crashed; a new page opens for the next call")
	})
}

// cdpSession is p's CDP session, opened on first use. One opened as p closes is
// not kept: its close event is past.
func (t *pageTracker) cdpSession(p playwright.Page) (playwright.CDPSession, error) {
	if v, ok := t.cdp.Load(p); ok {
		return v.(playwright.CDPSession), nil
	}
	s, err := p.Context().NewCDPSession(p)
	if err != nil {
		return nil, err
	}
	if v, loaded := t.cdp.LoadOrStore(p, s); loaded {
		go s.Detach()
		return v.(playwright.CDPSession), nil
	}
	if !t.pageOpen(p) {
		t.cdp.Delete(p)
	}
	return s, nil
}

func (t *pageTracker) pageIsCrashed(p playwright.Page) bool {
	_, ok := t.crashed.Load(p)
	return ok
}

// pageCrashed says whether the call that failed with err on p failed on a crash. The
// call's error can arrive just before the crash event: an error that names a crash
// waits a moment for it.
func (t *pageTracker) pageCrashed(p playwright.Page, err error) bool {
	if t.pageIsCrashed(p) {
		return true
	}
	if !strings.Contains(strings.ToLower(err.Error()), "crash") {
		return false
	}
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if t.pageIsCrashed(p) {
			return true
		}
	}
	return false
}

func (t *pageTracker) pageOpen(p playwright.Page) bool {
	_, ok := t.open.Load(p)
	return ok
}

// currentPage is the page the engine's last call ran on (nil: none yet, or closed).
func (e *playwrightEngine) currentPage() playwright.Page {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.page
}
