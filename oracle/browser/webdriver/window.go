package webdriver

// The WebKitGTK window a case sees: its viewport, its place on the screen and its
// focus, restored and checked around every case, and the other windows a case opened.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/inpage"
)

// windowState is what a case can see of its window: the viewport, the window's place
// on the screen, and whether the document has the focus.
type windowState struct {
	Inner  [2]int
	Screen [2]int
	Focus  bool
}

// windowStateJS is the window as windowState holds it, the elements of a script's
// array result, in parseWindowState's order (inpage/window_state.js);
// windowJS is a script answering that array.
var (
	windowStateJS = inpage.Read(programs, "inpage/window_state.js")
	windowJS      = inpage.Fill(inpage.Read(programs, "inpage/window.js"), "WINDOW_STATE", windowStateJS)
	innerSizeJS   = inpage.Read(programs, "inpage/inner_size.js")
)

func (e *webDriverEngine) windowNow(ctx context.Context) (windowState, error) {
	raw, err := e.session(ctx, http.MethodPost, "/execute/sync", map[string]any{
		"script": windowJS, "args": []any{}})
	if err != nil {
		return windowState{}, err
	}
	var v [5]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return windowState{}, fmt.Errorf("window state: %v (%s)", err, raw)
	}
	return parseWindowState(v[:], raw)
}

// parseWindowState reads windowStateJS's values as a script returned them (raw, for
// the error).
func parseWindowState(v []any, raw json.RawMessage) (windowState, error) {
	var w windowState
	for i, p := range []*int{&w.Inner[0], &w.Inner[1], &w.Screen[0], &w.Screen[1]} {
		f, ok := v[i].(float64)
		if !ok {
			return w, fmt.Errorf("window state: %s", raw)
		}
		*p = int(f)
	}
	w.Focus, _ = v[4].(bool)
	return w, nil
}

// restoreWindow puts back the window a case resized or moved (window.resizeTo,
// moveTo: WebKitGTK obeys them, where the Playwright engines keep their emulated
// viewport), or says it could not: every case must start in the window the first
// case had. It was seen: after a case's resizeTo(400, 300), every later case on that
// page ran in a 447x262 viewport, without the focus. w is the window as the reset
// found it, already read (blankState), and not the first case's.
func (e *webDriverEngine) restoreWindow(ctx context.Context, w windowState) error {
	want := e.window
	rect := map[string]int{"x": want.Screen[0], "y": want.Screen[1],
		"width": want.Inner[0] + e.chrome[0], "height": want.Inner[1] + e.chrome[1]}
	if _, err := e.session(ctx, http.MethodPost, "/window/rect", rect); err != nil {
		return fmt.Errorf("set window rect: %w", err)
	}
	focused := false
	for try := 0; try < 10; try++ { // a resize may land after the command returns
		var err error
		if w, err = e.windowNow(ctx); err != nil || w == want {
			return err
		}
		if w.Inner == want.Inner && w.Screen == want.Screen && w.Focus != want.Focus && !focused {
			// Put back, but without the focus: WebDriver's switch to the window gives
			// it back.
			focused = true
			if err := e.focusCurrentWindow(ctx); err != nil {
				return err
			}
			continue
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the window is %+v after the case, %+v put back, want %+v", w, rect, want)
}

// fixViewport sets the window so the viewport is exactly the spec's, correcting by the
// measured difference (MiniBrowser's window chrome, 38 px of height with Debian's WebKitGTK 2.50),
// and fails when it cannot verify innerWidth/innerHeight.
func (e *webDriverEngine) fixViewport(ctx context.Context) error {
	want := [2]int{int(dump.Viewport.Width), int(dump.Viewport.Height)}
	win := want
	var inner [2]int
	for i := 0; i < 5; i++ {
		if _, err := e.session(ctx, http.MethodPost, "/window/rect", map[string]int{"width": win[0], "height": win[1]}); err != nil {
			return browser.EngineErrorf(browser.WebKit, "set window rect %dx%d: %w", win[0], win[1], err)
		}
		var err error
		for try := 0; try < 10; try++ { // a resize may land after the command returns
			if inner, err = e.innerSize(ctx); err != nil {
				return browser.EngineErrorf(browser.WebKit, "measure viewport: %w", err)
			}
			if inner == want || try == 9 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		e.log.Debug().Int("window_w", win[0]).Int("window_h", win[1]).
			Int("inner_w", inner[0]).Int("inner_h", inner[1]).Msg("viewport measured")
		if inner == want {
			e.chrome = [2]int{win[0] - want[0], win[1] - want[1]}
			return nil
		}
		win[0] += want[0] - inner[0]
		win[1] += want[1] - inner[1]
		if win[0] < want[0] || win[1] < want[1] || win[0] > 4*want[0] || win[1] > 4*want[1] {
			break
		}
	}
	return browser.EngineErrorf(browser.WebKit, "cannot reach a %dx%d viewport: window %dx%d gives innerWidth/innerHeight %dx%d",
		want[0], want[1], win[0], win[1], inner[0], inner[1])
}

func (e *webDriverEngine) innerSize(ctx context.Context) ([2]int, error) {
	raw, err := e.session(ctx, http.MethodPost, "/execute/sync",
		map[string]any{"script": innerSizeJS, "args": []any{}})
	if err != nil {
		return [2]int{}, err
	}
	var v [2]int
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("innerWidth/innerHeight: %v (%s)", err, raw)
	}
	return v, nil
}

// currentWindow is the handle of the session's current window.
func (e *webDriverEngine) currentWindow(ctx context.Context) (string, error) {
	raw, err := e.session(ctx, http.MethodGet, "/window", nil)
	if err != nil {
		return "", err
	}
	var h string
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", fmt.Errorf("current window: %v (%s)", err, raw)
	}
	return h, nil
}

// focusCurrentWindow switches to the session's current window, which focuses it.
func (e *webDriverEngine) focusCurrentWindow(ctx context.Context) error {
	h, err := e.currentWindow(ctx)
	if err != nil {
		return err
	}
	_, err = e.session(ctx, http.MethodPost, "/window", map[string]string{"handle": h})
	return err
}

// closeOtherWindows closes every window but the session's current one: the popups
// and target=_blank windows a case opened (MiniBrowser blocks window.open without a
// user gesture by default; a launch profile or a future build may not).
func (e *webDriverEngine) closeOtherWindows(ctx context.Context) error {
	hs, err := e.windowHandles(ctx)
	if err != nil || len(hs) <= 1 {
		return err
	}
	main, err := e.currentWindow(ctx)
	if err != nil {
		return err
	}
	for _, h := range hs {
		if h == main {
			continue
		}
		if _, err := e.session(ctx, http.MethodPost, "/window", map[string]string{"handle": h}); err != nil {
			return err
		}
		if _, err := e.session(ctx, http.MethodDelete, "/window", nil); err != nil {
			return err
		}
	}
	_, err = e.session(ctx, http.MethodPost, "/window", map[string]string{"handle": main})
	return err
}

// OpenWindows counts the session's window handles, in its one session
// (browser.OpenWindows).
func (e *webDriverEngine) OpenWindows(ctx context.Context) (pages, contexts int, err error) {
	hs, err := e.windowHandles(ctx)
	return len(hs), 1, err
}
