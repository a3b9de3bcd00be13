package cdp

// The CDP route's page (cdp/cdp.go's engine): its target and session, and what the
// browser's events, decoded into cdproto's types, say of it.

import (
	"encoding/json"
	"sync"

	"github.com/chromedp/cdproto/inspector"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

// cdpPage is the page's target and session, and what its events said: the main
// frame's URL and load, and whether it crashed or closed.
type cdpPage struct {
	target, session string

	mu      sync.Mutex
	url     string
	failed  bool // the document is the error page of a navigation that failed
	loaded  bool
	seq     int           // main-frame navigations committed so far
	changed chan struct{} // closed and replaced at every event above
	ended   chan struct{} // closed when the page crashed or closed
	crashed bool
}

func newCDPPage(target, session string) *cdpPage {
	return &cdpPage{target: target, session: session, url: "about:blank", changed: make(chan struct{}), ended: make(chan struct{})}
}

// update changes the page's state under its lock and wakes whoever waits on it.
func (p *cdpPage) update(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	close(p.changed)
	p.changed = make(chan struct{})
}

// end marks the page closed, or crashed.
func (p *cdpPage) end(crashed bool) {
	p.update(func() {
		p.crashed = p.crashed || crashed
		select {
		case <-p.ended:
		default:
			close(p.ended)
		}
	})
}

// state is the page's URL, whether that document loaded, how many navigations
// committed, whether it is gone, and a channel closed at its next change.
func (p *cdpPage) state() (url string, loaded bool, seq int, gone bool, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.ended:
		gone = true
	default:
	}
	return p.url, p.loaded, p.seq, gone, p.changed
}

// navigationFailed says whether the page's document is a failed navigation's error page.
func (p *cdpPage) navigationFailed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

func (p *cdpPage) isCrashed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.crashed
}

// event takes the browser's events (on the wire's reader: it sends, never calls),
// decoded into cdproto's event types: the page's state, which the calls read, in
// order with the replies; and the dialogs, which arrive on any page's session, a
// popup's too. A case's popups are attached by subscription (attachPopups).
func (e *cdpEngine) event(session, method string, params json.RawMessage) {
	var page *cdpPage
	conn := e.Current(func() { page = e.page })
	switch method {
	case cdppage.JavascriptDialogOpening.Method:
		// Playwright's answer to a dialog no one listens for: a beforeunload is
		// accepted (the page may leave), every other dialog dismissed.
		d, _ := decodeEvent(e.Log, cdppage.JavascriptDialogOpening, params)
		if conn != nil {
			cdpSend(cdpSession{conn, session}, cdppage.HandleJavaScriptDialog,
				cdppage.HandleJavaScriptDialogParams{Accept: d.Type == cdppage.DialogTypeBeforeunload})
		}
		return
	case target.DetachedFromTarget.Method:
		if d, ok := decodeEvent(e.Log, target.DetachedFromTarget, params); ok && page != nil && string(d.SessionID) == page.session {
			page.end(false)
		}
		return
	}
	if page == nil || session != page.session {
		return
	}
	switch method {
	case cdppage.FrameNavigated.Method:
		if f, ok := decodeEvent(e.Log, cdppage.FrameNavigated, params); ok && f.Frame != nil && f.Frame.ParentID == "" {
			fr := f.Frame
			page.update(func() {
				page.url, page.failed, page.loaded, page.seq = fr.URL+fr.URLFragment, fr.UnreachableURL != "", false, page.seq+1
				if page.failed {
					page.url = fr.UnreachableURL // the error page stands for the url it could not load
				}
			})
		}
	case cdppage.NavigatedWithinDocument.Method:
		if n, ok := decodeEvent(e.Log, cdppage.NavigatedWithinDocument, params); ok && string(n.FrameID) == page.target { // the main frame's id is its target's
			page.update(func() { page.url = n.URL })
		}
	case cdppage.LoadEventFired.Method:
		page.update(func() { page.loaded = true })
	case inspector.TargetCrashed.Method:
		e.Log.Warn().Msg("page crashed; the browser relaunches on the next call")
		page.end(true)
	case inspector.Detached.Method:
		page.end(false)
	}
}

// attachPopups attaches, for conn's life, every page a case opens in the engine's
// browser context, so that its dialogs are answered too (a popup's alert would
// otherwise hold a renderer the page may share: event), and enables its Page domain
// once attached. Both are the browser session's events, taken by subscription
// (cdp.Session's Subscribe) on goroutines of their own: they only send commands
// and change no state a call reads.
func (e *cdpEngine) attachPopups(conn *cdpConn) {
	b := cdpSession{conn: conn}
	onEvents(b, target.TargetCreated, func(t target.EventTargetCreated) {
		var page *cdpPage
		var bctx string
		e.Current(func() { page, bctx = e.page, e.bctx })
		if ti := t.TargetInfo; ti != nil && ti.Type == "page" && string(ti.BrowserContextID) == bctx && (page == nil || string(ti.TargetID) != page.target) {
			cdpSend(b, target.AttachToTarget, target.AttachToTargetParams{TargetID: ti.TargetID, Flatten: ptr(true)})
		}
	})
	onEvents(b, target.AttachedToTarget, func(a target.EventAttachedToTarget) {
		var page *cdpPage
		e.Current(func() { page = e.page })
		if a.TargetInfo != nil && a.TargetInfo.Type == "page" && (page == nil || string(a.SessionID) != page.session) {
			cdpSend(cdpSession{conn, string(a.SessionID)}, cdppage.Enable, cdppage.EnableParams{})
		}
	})
}
