package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"
)

// The bare round trip (way d) is each engine's own cheapest "replace the document,
// evaluate, get the answer back" through its driver, with none of the oracle: no
// protocol line, no pool, no deadline goroutine, no dump decode/encode, no reset, no
// init script, no load wait beyond what the driver call itself does.
//
//   - chromium, firefox: one Playwright page; "walk" is one page.Evaluate of the
//     oracle's case program (which writes the document itself), "trivial" is
//     page.SetContent(html) then page.Evaluate of a constant.
//   - webkit: one WebDriver session; one Execute Script: the case program for
//     "walk", document.open/write/close and a constant for "trivial" (the
//     4.6 ms route first measured on Debian's WebKitGTK).
//
// Three variants: "walk" evaluates the same case program and dump walk the oracle runs,
// settle point included, in the document the case before left (no new document: not
// a correct way to run untrusted cases, the floor of what a case's own work costs);
// "fresh" first navigates to a new about:blank (the driver's own navigation), then
// does the same: the fastest correct way to give each case a new document and walk
// it, which the oracle's latency is compared against; "trivial" evaluates
// a constant (so the settle and walk's own cost shows too).

// walkFn is what the oracle's case program calls for a geometry case.
var walkFn = browser.WithCaseScript(dump.WalkJS)

// bareBudget is the case program's settle budget in the bare runs.
const bareBudget = 20 * time.Second

const trivialExpr = "() => 1"

// bareMode is what one bare round trip does.
type bareMode int

const (
	bareWalk    bareMode = iota // the case program in the document left by the case before
	bareFresh                   // a navigation to a new about:blank, then the case program
	bareTrivial                 // the document written, then a constant
)

// bareResult is one engine's bare latencies per variant.
type bareResult struct {
	Walk, Fresh, Trivial []time.Duration
	WallWalk, WallFresh  time.Duration
	WallTrivial          time.Duration
	// WalkCPU and FreshCPU are the CPU ms per case of those passes by process group,
	// the bench's own process left out (it is the client, not the engine).
	WalkCPU, FreshCPU map[string]float64
	Errors            int
	FirstErr          string
}

func (r *bareResult) fail(id string, err error) {
	r.Errors++
	if r.FirstErr == "" {
		r.FirstErr = id + ": " + err.Error()
	}
}

type bareRunner interface {
	// roundTrip runs one case the way mode says.
	roundTrip(c benchCase, mode bareMode) error
	close()
}

func runBare(ctx context.Context, cases []benchCase, engines []string, trivial bool, log zerolog.Logger) (map[string]*bareResult, error) {
	out := map[string]*bareResult{}
	var pw *playwright.Playwright
	for _, name := range engines {
		var r bareRunner
		var err error
		if name == browser.WebKit {
			r, err = newBareWebDriver(ctx, log)
		} else {
			if pw == nil {
				if pw, err = playwright.Run(&playwright.RunOptions{Stdout: os.Stderr, Stderr: os.Stderr}); err != nil {
					return out, fmt.Errorf("bare: start playwright: %w", err)
				}
				defer pw.Stop()
			}
			r, err = newBarePlaywright(pw, name)
		}
		if err != nil {
			return out, fmt.Errorf("bare %s: %w", name, err)
		}
		res := &bareResult{}
		out[name] = res
		// Warm up on a few cases first, as the oracle's self-check warms its pages.
		for _, c := range cases[:min(5, len(cases))] {
			_ = r.roundTrip(c, bareWalk)
		}
		// pass times every case in mode, one at a time, and returns the wall time
		// and the CPU per case by process group.
		pass := func(mode bareMode, lat *[]time.Duration) (time.Duration, map[string]float64) {
			cpu0 := proctree.CPU(os.Getpid())
			t0 := time.Now()
			for _, c := range cases {
				s := time.Now()
				if err := r.roundTrip(c, mode); err != nil {
					res.fail(c.ID, err)
				}
				*lat = append(*lat, time.Since(s))
			}
			wall := time.Since(t0)
			cpu := cpuPerCase(cpu0, proctree.CPU(os.Getpid()), len(cases))
			delete(cpu, "oracle")
			return wall, cpu
		}
		res.WallWalk, res.WalkCPU = pass(bareWalk, &res.Walk)
		res.WallFresh, res.FreshCPU = pass(bareFresh, &res.Fresh)
		if trivial {
			res.WallTrivial, _ = pass(bareTrivial, &res.Trivial)
		}
		r.close()
	}
	return out, nil
}

type barePlaywright struct {
	browser playwright.Browser
	page    playwright.Page
}

func newBarePlaywright(pw *playwright.Playwright, name string) (*barePlaywright, error) {
	opts := playwright.BrowserTypeLaunchOptions{Headless: playwright.Bool(true)}
	var bt playwright.BrowserType
	switch name {
	case browser.Chromium:
		bt = pw.Chromium
		opts.Args = browser.ChromiumArgs
		if os.Geteuid() == 0 {
			// The bare baseline runs the browser as this process's user, unlike the
			// oracle (docs/sandbox.md): as root Chromium starts only unsandboxed.
			opts.Args = append(append([]string{}, browser.ChromiumArgs...), "--no-sandbox")
		}
		if !exists(bt.ExecutablePath()) {
			opts.ExecutablePath = playwright.String(browser.SystemChromium)
		}
	case browser.Firefox:
		bt = pw.Firefox
		if !exists(bt.ExecutablePath()) {
			opts.ExecutablePath = playwright.String(browser.SystemFirefox)
			opts.Channel = playwright.String("moz-firefox")
		}
	default:
		return nil, fmt.Errorf("no bare Playwright route for %s", name)
	}
	b, err := bt.Launch(opts)
	if err != nil {
		return nil, err
	}
	ctx, err := b.NewContext(playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 800, Height: 600}})
	if err != nil {
		b.Close()
		return nil, err
	}
	page, err := ctx.NewPage()
	if err != nil {
		b.Close()
		return nil, err
	}
	return &barePlaywright{browser: b, page: page}, nil
}

func exists(p string) bool {
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

func (b *barePlaywright) roundTrip(c benchCase, mode bareMode) error {
	if mode == bareFresh {
		if _, err := b.page.Goto("about:blank"); err != nil {
			return err
		}
	}
	if mode != bareTrivial {
		v, err := b.page.Evaluate(browser.CaseProgram(),
			browser.CaseArg(c.HTML, walkFn, []any{c.Script, dump.StyleProperties}, bareBudget))
		if _, ok := v.(string); err == nil && !ok {
			err = fmt.Errorf("walk returned %T", v)
		}
		return err
	}
	if err := b.page.SetContent(c.HTML); err != nil {
		return err
	}
	_, err := b.page.Evaluate(trivialExpr)
	return err
}

func (b *barePlaywright) close() { b.browser.Close() }

// bareWebDriver is a minimal W3C WebDriver client for WebKitGTK: one driver, one
// session, one window, on an Xvfb of its own.
//
// It is a second WebDriver client beside the oracle's (oracle/browser) on
// purpose, not a copy to be merged: way (d) measures the engine's own round trip
// without the oracle, so it must not go through the oracle's client, with its
// restart and deadline handling, dialog recovery and serialization repair. Keep it
// this small; a fix to the oracle's client does not belong here.
type bareWebDriver struct {
	cmd     *exec.Cmd
	xvfb    *host.Xvfb
	base    string
	client  *http.Client
	walkJS  string
	trivial string
}

func newBareWebDriver(ctx context.Context, log zerolog.Logger) (*bareWebDriver, error) {
	display := os.Getenv("DISPLAY")
	w := &bareWebDriver{client: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2}}}
	if display == "" {
		x, err := host.StartXvfb(ctx, "", log)
		if err != nil {
			return nil, err
		}
		w.xvfb, display = x, x.Display
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		w.close()
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	w.cmd = exec.Command(browser.SystemWebKitWebDriver, "--port="+strconv.Itoa(port), "--host=127.0.0.1")
	w.cmd.Env = append(os.Environ(), "DISPLAY="+display, "GDK_BACKEND=x11", "NO_AT_BRIDGE=1")
	if w.xvfb != nil {
		w.cmd.Env = append(w.cmd.Env, "XAUTHORITY="+w.xvfb.Authority) // our Xvfb wants its cookie
	}
	w.cmd.SysProcAttr = proctree.WithParentDeath(&syscall.SysProcAttr{Setpgid: true}, syscall.SIGKILL)
	if err := w.cmd.Start(); err != nil {
		w.close()
		return nil, err
	}
	w.base = "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := w.do(http.MethodGet, "/status", nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			w.close()
			return nil, errors.New("WebKitWebDriver not ready in 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"webkitgtk:browserOptions": map[string]any{"binary": browser.SystemMiniBrowser, "args": []string{"--automation"}},
	}}}
	raw, err := w.do(http.MethodPost, "/session", caps)
	if err != nil {
		w.close()
		return nil, err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.SessionID == "" {
		w.close()
		return nil, fmt.Errorf("new session: %s", raw)
	}
	w.base += "/session/" + s.SessionID
	if _, err := w.do(http.MethodPost, "/url", map[string]string{"url": "about:blank"}); err != nil {
		w.close()
		return nil, err
	}
	// 800x600 viewport: set the window, measure the chrome, correct once.
	win := [2]int{800, 600}
	for i := 0; i < 3; i++ {
		if _, err := w.do(http.MethodPost, "/window/rect", map[string]int{"width": win[0], "height": win[1]}); err != nil {
			w.close()
			return nil, err
		}
		time.Sleep(50 * time.Millisecond)
		raw, err := w.do(http.MethodPost, "/execute/sync", map[string]any{"script": "return [innerWidth, innerHeight]", "args": []any{}})
		var in [2]int
		if err == nil {
			err = json.Unmarshal(raw, &in)
		}
		if err != nil {
			w.close()
			return nil, err
		}
		if in == [2]int{800, 600} {
			break
		}
		win[0] += 800 - in[0]
		win[1] += 600 - in[1]
	}
	load := "document.open(); document.write(arguments[0]); document.close();\n"
	w.walkJS = "return (" + browser.CaseProgram() + ")(arguments[0]);"
	w.trivial = load + "return 1;"
	return w, nil
}

func (w *bareWebDriver) roundTrip(c benchCase, mode bareMode) error {
	if mode == bareFresh {
		// WebDriver's navigation, which waits for the load: the history entries it
		// adds cost nothing here (the oracle avoids them; it must, for the next case).
		if _, err := w.do(http.MethodPost, "/url", map[string]string{"url": "about:blank"}); err != nil {
			return err
		}
	}
	body := map[string]any{"script": w.trivial, "args": []any{c.HTML}}
	if mode != bareTrivial {
		body = map[string]any{"script": w.walkJS, "args": []any{browser.CaseArg(c.HTML, walkFn, []any{c.Script, dump.StyleProperties}, bareBudget)}}
	}
	_, err := w.do(http.MethodPost, "/execute/sync", body)
	return err
}

func (w *bareWebDriver) do(method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("webdriver %s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("webdriver %s %s: %d %.300s", method, path, resp.StatusCode, strings.TrimSpace(string(env.Value)))
	}
	return env.Value, nil
}

func (w *bareWebDriver) close() {
	if w.cmd != nil && w.cmd.Process != nil {
		if strings.Contains(w.base, "/session/") {
			req, _ := http.NewRequest(http.MethodDelete, w.base, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if resp, err := w.client.Do(req.WithContext(ctx)); err == nil {
				resp.Body.Close()
			}
			cancel()
		}
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		_ = w.cmd.Wait()
	}
	if w.xvfb != nil {
		w.xvfb.Close()
	}
}
