package bidi

// The reset between cases: a fresh about:blank by navigation (no history entry from
// about:blank), checked for history and focus; a new tab when the case left one it
// cannot reset; the kept window of an inert case; and the idle page's check.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// Reset gives the next case a new about:blank document and global, with the first
// case's guarantees (docs/untrusted.md, "Per-case state"): no window but the page,
// window.name cleared, history.length 1, the focus. A case that added history
// entries, closed its window or took the focus for good costs a new tab; a page that
// cannot reset in time, a relaunch.
func (e *bidiEngine) Reset(ctx context.Context) error { return e.ResetPage(ctx, e.reset) }

func (e *bidiEngine) reset(ctx context.Context) error {
	conn, page := e.current()
	pageOpen, onBlank, err := e.closeOthers(ctx, conn, page)
	if err != nil {
		return err
	}
	if !pageOpen || !onBlank {
		// The case closed its window, or navigated it (its own location, a form): an
		// about:blank it reached would inherit its origin, and Gecko adds a history
		// entry for the driver's navigation from there. A new tab has neither.
		return e.newTab(ctx, conn, page, pageOpen)
	}
	if err := navigateBlank(ctx, conn, page); err != nil {
		return err
	}
	if ok, err := e.freshAndFocused(ctx, conn, page); err != nil || ok {
		if ok {
			e.MarkBlank()
		}
		return err
	}
	// The case added session-history entries (pushState, hash changes, an iframe's
	// navigations) or took the focus for good: only a new tab has the first case's.
	return e.newTab(ctx, conn, page, true)
}

// freshAndFocused runs the reset's check on page (it clears window.name) and says
// whether history.length is the first case's and the page has the focus, giving the
// focus back first when a case took it.
func (e *bidiEngine) freshAndFocused(ctx context.Context, conn *bidiConn, page string) (bool, error) {
	raw, err := e.evaluate(ctx, conn, page, resetCheckJS, nil)
	return e.FreshAndFocused(raw, err, "a new tab replaces the page", func() bool { return e.refocus(ctx, conn, page) })
}

// refocus activates page (a download or a popup took the focus) and says whether it
// has the focus now.
func (e *bidiEngine) refocus(ctx context.Context, conn *bidiConn, page string) bool {
	if _, err := conn.call(ctx, "browsingContext.activate", map[string]any{"context": page}); err != nil {
		return false
	}
	raw, err := e.evaluate(ctx, conn, page, hasFocusJS, nil)
	return err == nil && string(raw) == "true"
}

// closeOthers closes every top-level context but page (the popups and windows a
// case opened) and says whether page is still open and on about:blank.
func (e *bidiEngine) closeOthers(ctx context.Context, conn *bidiConn, page string) (open, blank bool, err error) {
	for round := 0; round < 5; round++ {
		tops, err := topContexts(ctx, conn)
		if err != nil {
			return false, false, err
		}
		others := 0
		open, blank = false, false
		for _, t := range tops {
			if t.Context == page {
				open, blank = true, t.URL == "about:blank"
				continue
			}
			others++
			if err := closeContext(ctx, conn, t.Context); err != nil {
				var be *bidiError
				if !errors.As(err, &be) || be.code != "no such frame" {
					return false, false, fmt.Errorf("close a window the case opened: %w", err)
				}
			}
		}
		if others == 0 {
			return open, blank, nil
		}
	}
	return false, false, errors.New("the case's popups kept opening more")
}

// newTab replaces the page by a new tab (an empty session history, an opaque
// about:blank) with the spec's viewport and the focus, and closes the old one.
func (e *bidiEngine) newTab(ctx context.Context, conn *bidiConn, old string, closeOld bool) error {
	page, err := createTab(ctx, conn)
	if err != nil {
		return err
	}
	if closeOld {
		if err := closeContext(ctx, conn, old); err != nil {
			return err
		}
	}
	e.SetPage(func() { e.page = page })
	// The next Load navigates the new tab's initial about:blank to a reset's.
	if ok, err := e.freshAndFocused(ctx, conn, page); err != nil || !ok {
		return errors.Join(err, errors.New("the new tab is not fresh or has no focus"))
	}
	return nil
}

// createTab opens a tab (it takes the focus) with the spec's viewport.
func createTab(ctx context.Context, conn *bidiConn) (string, error) {
	raw, err := conn.call(ctx, "browsingContext.create", map[string]any{"type": "tab"})
	if err != nil {
		return "", err
	}
	var c struct {
		Context string `json:"context"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || c.Context == "" {
		return "", fmt.Errorf("browsingContext.create gave no context: %s", raw)
	}
	return c.Context, setViewport(ctx, conn, c.Context)
}

// Keep keeps the page as the inert case that just ran on it left it (Keeper): the
// only window, on about:blank (one round trip to Firefox's parent process).
func (e *bidiEngine) Keep() bool {
	var page string
	conn, ok := e.Keepable(func() { page = e.page })
	return ok && e.KeepIf(func(ctx context.Context) bool {
		tops, err := topContexts(ctx, conn)
		return err == nil && len(tops) == 1 && tops[0].Context == page && tops[0].URL == "about:blank"
	}, func() bool { return true })
}

// Prepare checks the idle page before a case (pool.go): it must answer a trivial
// evaluation within probeTimeout and have the focus; otherwise the browser relaunches.
func (e *bidiEngine) Prepare(ctx context.Context) error {
	if err := e.Ensure(ctx); err != nil {
		return err
	}
	conn, page := e.current()
	pctx, cancel := context.WithTimeout(ctx, browser.ProbeTimeout)
	defer cancel()
	raw, err := e.evaluate(browser.WithOp(pctx, "check of the idle page"), conn, page,
		hasFocusJS, nil)
	if err == nil && (string(raw) == "true" || e.refocus(pctx, conn, page)) {
		return nil
	}
	return e.IdlePageFailed(ctx, err)
}

// OpenWindows counts the session's top-level browsing contexts, in its one session
// (browser.OpenWindows).
func (e *bidiEngine) OpenWindows(ctx context.Context) (pages, contexts int, err error) {
	conn, _ := e.current()
	if conn == nil {
		return 0, 0, fmt.Errorf("firefox: no BiDi session")
	}
	tops, err := topContexts(ctx, conn)
	return len(tops), 1, err
}
