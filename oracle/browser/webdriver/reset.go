package webdriver

// The reset between cases: back to a fresh about:blank by replacing the document (no
// history entry), checked from outside the page, and the kept window of an inert case.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/inpage"
)

// Keep keeps the session's document as the inert case that just ran left it
// (Keeper): Load writes into the document it finds, so nothing needs to happen but
// a check that the session is live. An inert case cannot navigate, open a window,
// resize or move one, or add history, which the reset checks for.
func (e *webDriverEngine) Keep() bool {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	e.mu.Lock()
	live := !e.closed && e.proc != nil && e.proc.session != ""
	e.mu.Unlock()
	e.kept.Store(live)
	return live
}

// Reset navigates to a fresh about:blank: a new document and a new global object.
func (e *webDriverEngine) Reset(ctx context.Context) error {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	return e.resetLocked(ctx)
}

// resetLocked is Reset under callMu.
func (e *webDriverEngine) resetLocked(ctx context.Context) error {
	e.kept.Store(false)
	if err := e.ready(ctx); err != nil {
		return err
	}
	st, err := e.resetToBlank(ctx)
	if err != nil {
		// A page that cannot even leave (its web process busy) is replaced whole.
		e.restart("reset to about:blank failed: " + err.Error())
		return e.wrap(ctx, "reset to about:blank", err)
	}
	if st.History != e.firstHistory {
		// The case added session-history entries; WebDriver classic cannot clear
		// them, and a new session has the first case's history.
		e.restart("the case left session history (history.length " + st.History + ")")
		return nil
	}
	if st.Window != e.window {
		if err := e.restoreWindow(ctx, st.Window); err != nil {
			e.restart("the case's window could not be put back: " + err.Error())
		}
	}
	return nil
}

// blankState is what Reset checks on the about:blank it reached, read by one script
// (blankStateJS): each WebDriver call costs the driver, MiniBrowser and the web
// process CPU, and three-engine throughput is CPU bound.
type blankState struct {
	Referrer string      // left by a replace from a trace or url page
	History  string      // freshCheckJS's result: history.length
	Window   windowState // as windowNow measures it
}

// blankStateJS returns the referrer, freshCheckJS's result (it clears window.name
// and reads history.length, as on the Playwright route) and the window
// (inpage/blank_state.js).
var blankStateJS = inpage.Fill(inpage.Read(programs, "inpage/blank_state.js"), "FRESH_CHECK", inpage.FreshCheck, "WINDOW_STATE", windowStateJS)

func (e *webDriverEngine) blankState(ctx context.Context) (blankState, error) {
	raw, err := e.session(ctx, http.MethodPost, "/execute/sync", map[string]any{"script": blankStateJS, "args": []any{}})
	if err != nil {
		return blankState{}, err
	}
	var v [7]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return blankState{}, fmt.Errorf("blank state: %v (%s)", err, raw)
	}
	var st blankState
	st.Referrer, _ = v[0].(string)
	st.History, _ = v[1].(string)
	st.Window, err = parseWindowState(v[2:], raw)
	return st, err
}

// resetToBlank goes back to a new about:blank document without adding a history
// entry, by location.replace from wherever the case left the page. Not by WebDriver's
// navigation: from an about:blank that a location.replace made (after a trace or url
// case), WebKit adds an entry for the same URL, which cost a restart of driver and
// browser at the next reset. WebKit gives the replaced about:blank an opaque origin
// (TestACaseAfterATraceRunsInAFreshOpaqueDocument).
//
// An about:blank replaced from a trace or url page would have that page's origin as
// its document.referrer (which the next html case's document.open keeps): replaceJS
// sets the leaving page's referrer policy to no-referrer, and where that did not
// take (a case broke the DOM methods it uses), a second replace, from about:blank,
// leaves none. It closes the windows the case opened and returns the state of the
// about:blank it reached, for Reset's checks.
func (e *webDriverEngine) resetToBlank(ctx context.Context) (blankState, error) {
	for i := 0; ; i++ {
		if err := e.replaceTo(ctx, "about:blank"); err != nil {
			if err := e.navigateBlank(ctx); err != nil { // adds an entry, which Reset's check catches
				return blankState{}, err
			}
		}
		if err := e.closeOtherWindows(ctx); err != nil {
			return blankState{}, fmt.Errorf("close the case's windows: %w", err)
		}
		st, err := e.blankState(ctx)
		if err != nil || st.Referrer == "" || i == 1 {
			return st, err
		}
		e.log.Debug().Str("referrer", st.Referrer).Msg("the reset's about:blank kept a referrer; replacing it again")
	}
}

// staleMarkProp is the window property replaceTo sets on the document it leaves.
const staleMarkProp = "__layoutOracleLeaving"

// replaceJS marks the document it leaves (staleMarkProp), sets that document's
// referrer policy to no-referrer, and replaces it with arguments[0]. Without the
// policy, the about:blank a reset replaces a trace or url page with has that page's
// URL as its document.referrer, which resetToBlank's second replace, a whole
// navigation more, used to clear every time. Only an http(s) page sends a
// referrer, so only such a page gets the policy (an html case's about:blank does not
// run the DOM calls at all). A case that broke the DOM methods used here only costs
// that second replace. The text is inpage/replace.js; replacedJS
// (inpage/replaced.js) answers where the page is and whether it is still
// the one marked. rootJS answers the document's root element, as a WebDriver
// element reference (null when there is none).
var (
	rootJS     = inpage.Read(programs, "inpage/root.js")
	replaceJS  = inpage.Fill(inpage.Read(programs, "inpage/replace.js"), "STALE_MARK", staleMarkProp)
	replacedJS = inpage.Fill(inpage.Read(programs, "inpage/replaced.js"), "STALE_MARK", staleMarkProp)
)

// webElementKey names an element reference in W3C WebDriver's JSON.
const webElementKey = "element-6066-11e4-a52e-4f735466cecf"

// replaceTo navigates to url replacing the current session-history entry
// (location.replace), and waits until the document at url has loaded: WebDriver's
// navigation adds an entry, and history.length would grow with every trace case.
//
// A replace to the URL the page is already at (about:blank) must wait for the new
// document, not see the old one: the old document's root element, held as a
// WebDriver element reference, goes stale when it is gone, which nothing in the page
// can fake (a case that overrides built-ins or keeps timers running). A document
// without a root element is told by a property set on its window (staleMarkProp)
// instead.
func (e *webDriverEngine) replaceTo(ctx context.Context, url string) error {
	var root map[string]string
	if raw, err := e.session(ctx, http.MethodPost, "/execute/sync", map[string]any{"script": rootJS, "args": []any{}}); err == nil {
		_ = json.Unmarshal(raw, &root) // null: no root element
	}
	leaving := root[webElementKey]
	if _, err := e.execute(ctx, map[string]any{"script": replaceJS, "args": []any{url}}); err != nil {
		var wdErr *webDriverError
		if errors.As(err, &wdErr) && wdErr.sessionLost() || ctx.Err() != nil {
			return err
		}
		e.log.Debug().Err(err).Msg("replace navigation: the command was cut short; polling for the page")
	}
	for {
		raw, err := e.session(ctx, http.MethodPost, "/execute/sync",
			map[string]any{"script": replacedJS, "args": []any{}})
		var v [3]string
		if err == nil && json.Unmarshal(raw, &v) == nil && v[0] == url && v[1] == "complete" && v[2] == "false" && e.gone(ctx, leaving) {
			return nil
		}
		var wdErr *webDriverError
		if errors.As(err, &wdErr) && wdErr.sessionLost() {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gone says whether the element reference el (from a document replaceTo left) no
// longer names a live element; "" (no reference was taken) counts as gone.
func (e *webDriverEngine) gone(ctx context.Context, el string) bool {
	if el == "" {
		return true
	}
	_, err := e.session(ctx, http.MethodGet, "/element/"+el+"/name", nil)
	var wdErr *webDriverError
	return errors.As(err, &wdErr) && (wdErr.Code == "stale element reference" || wdErr.Code == "no such element")
}

// Prepare checks the session before a case (pool.go): a web process that died while
// idle ("session deleted because of page crash or hang") or a page that does not
// answer within probeTimeout costs a restart here, outside the case's deadline.
//
// The check reads the window, before every case of every operation: the reset's
// check of it can come too early. MiniBrowser's download bar, shown by a case's
// download, took 117 px of the viewport (800x483) for every later case, and a trace
// or reflect answer has no viewport check of its own. A window that is
// not the first case's is put back, or the driver and browser restarted.
func (e *webDriverEngine) Prepare(ctx context.Context) error {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	if err := e.ready(ctx); err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, browser.ProbeTimeout)
	w, err := e.windowNow(pctx)
	cancel()
	var wdErr *webDriverError
	switch {
	case err == nil && w == e.window:
		return nil
	case err == nil:
		if err := e.restoreWindow(ctx, w); err != nil {
			e.restart("the window changed while idle, and could not be put back: " + err.Error())
		}
		return nil
	case errors.As(err, &wdErr) && wdErr.Code == "unexpected alert open":
		return nil
	}
	e.restart("idle page failed a check: " + err.Error())
	return nil
}
