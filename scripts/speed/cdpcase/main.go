// Command cdpcase measures what a case with a script costs the system Chromium when
// driven over the Chrome DevTools Protocol with no Playwright in between: per case, a
// Page.navigate to a new about:blank (a new document and global, as every case with a
// script gets), its load event, and one Runtime.evaluate of the oracle's own case
// program (inpage/case.js, the walk of dump.WalkJS, the case's script). Chromium gets
// the switches Playwright's launch gives it plus the oracle's (oracle/browser), in a
// browser context of its own as Playwright's pages are. It prints the wall median and
// the CPU per case of the Chromium process tree and of this process, to set beside
// `PROBE_SCRIPT=... python3 scripts/speed/cpuprobe.py bin/oracle chromium N` (the
// same case through the oracle). cmd/bench/HISTORY.md has its numbers. The Firefox
// counterpart is scripts/speed/bidicase.
//
//	go run ./scripts/speed/cdpcase [-n 100] [-chromium /usr/bin/chromium]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	oraclecdp "github.com/layout-oracle/oracle/oracle/browser/cdp"

	"github.com/coder/websocket"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/scripts/speed/internal/probecase"
)

type cdpCommand struct {
	method string
	params map[string]any
}

// playwrightPageSetup is what Playwright's Chromium page sets up beyond this probe's
// (its crPage.ts, as its protocol log shows it for an oracle page), by name.
var playwrightPageSetup = map[string][]cdpCommand{
	"runtime":   {{"Runtime.enable", map[string]any{}}},
	"lifecycle": {{"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}}},
	"network":   {{"Network.enable", map[string]any{}}},
	"log":       {{"Log.enable", map[string]any{}}},
	// Playwright's utility world: an isolated world in every new document.
	"utility": {{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "", "worldName": "__playwright_utility_world__", "runImmediately": true}}},
	// An init script in the main world, as the oracle's trace recorder is.
	"initscript": {{"Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.__probe = 1", "runImmediately": true}}},
	"focus":      {{"Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true}}},
}

// cdp is a minimal flat-session CDP client: commands by id, events by method to
// whoever waits for them, any error reply fatal.
type cdp struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	waiting map[int]chan json.RawMessage
	events  map[string]chan struct{}
}

func (c *cdp) call(session, method string, params any) json.RawMessage {
	c.mu.Lock()
	c.next++
	id, ch := c.next, make(chan json.RawMessage, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	m := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		m["sessionId"] = session
	}
	msg, _ := json.Marshal(m)
	if err := c.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
		log.Fatalf("%s: %v", method, err)
	}
	var reply struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	_ = json.Unmarshal(<-ch, &reply)
	if reply.Error != nil {
		log.Fatalf("%s: %s", method, reply.Error.Message)
	}
	return reply.Result
}

// event returns a channel that gets one value for each event method from now on.
func (c *cdp) event(method string) chan struct{} {
	ch := make(chan struct{}, 16)
	c.mu.Lock()
	c.events[method] = ch
	c.mu.Unlock()
	return ch
}

func (c *cdp) read() {
	for {
		_, b, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m struct {
			ID     *int
			Method string
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		c.mu.Lock()
		if m.ID != nil {
			c.waiting[*m.ID] <- b
			delete(c.waiting, *m.ID)
		} else if ch := c.events[m.Method]; ch != nil {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		c.mu.Unlock()
	}
}

func main() {
	n := flag.Int("n", 100, "cases")
	chromium := flag.String("chromium", browser.SystemChromium, "Chromium binary")
	script := flag.String("script", probecase.Script, "each case's script")
	sandbox := flag.Bool("sandbox", os.Geteuid() != 0, "Chromium's sandbox on (the oracle's: its browsers run as a user of their own, docs/untrusted.md); off as root, where Chromium refuses it")
	with := flag.String("with", "", "what Playwright also turns on for each page, comma-separated, to find what its route costs: "+strings.Join(slices.Sorted(maps.Keys(playwrightPageSetup)), ","))
	flag.Parse()
	profile, err := os.MkdirTemp("", "cdpcase")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(profile)
	// The CDP route's own list of Playwright's switches (oracle/browser/cdp/process.go).
	args := append(append(slices.Clone(oraclecdp.PlaywrightChromiumSwitches), browser.ChromiumArgs...),
		"--user-data-dir="+profile, "--remote-debugging-port=0", "--no-startup-window")
	if !*sandbox {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(*chromium, args...)
	url := probecase.StartListening(cmd, regexp.MustCompile(`DevTools listening on (ws://\S+)`))
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ws, _, err := websocket.Dial(context.Background(), url, nil)
	if err != nil {
		log.Fatal(err)
	}
	ws.SetReadLimit(64 << 20)
	c := &cdp{ws: ws, waiting: map[int]chan json.RawMessage{}, events: map[string]chan struct{}{}}
	go c.read()

	var version struct{ Product string }
	_ = json.Unmarshal(c.call("", "Browser.getVersion", map[string]any{}), &version)
	var bctx struct{ BrowserContextID string }
	_ = json.Unmarshal(c.call("", "Target.createBrowserContext", map[string]any{"disposeOnDetach": true}), &bctx)
	var target struct{ TargetID string }
	_ = json.Unmarshal(c.call("", "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": bctx.BrowserContextID}), &target)
	var attached struct{ SessionID string }
	_ = json.Unmarshal(c.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &attached)
	s := attached.SessionID
	loaded := c.event("Page.loadEventFired")
	c.call(s, "Page.enable", map[string]any{})
	for _, w := range strings.Split(*with, ",") {
		if w == "" {
			continue
		}
		steps, ok := playwrightPageSetup[w]
		if !ok {
			log.Fatalf("-with %s: not one of %v", w, slices.Sorted(maps.Keys(playwrightPageSetup)))
		}
		for _, st := range steps {
			c.call(s, st.method, st.params)
		}
	}
	c.call(s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": dump.Viewport.Width, "height": dump.Viewport.Height,
		"deviceScaleFactor": 1, "mobile": false})

	program := "(" + browser.CaseProgram() + ")"
	one := func(i int) time.Duration {
		text := probecase.ArgText(i, *script)
		t := time.Now()
		for len(loaded) > 0 {
			<-loaded
		}
		c.call(s, "Page.navigate", map[string]any{"url": "about:blank"})
		<-loaded
		var r struct {
			Result struct {
				Type  string
				Value any
			}
			ExceptionDetails any
		}
		_ = json.Unmarshal(c.call(s, "Runtime.evaluate", map[string]any{
			"expression":   program + "(JSON.parse(" + strconv.Quote(text) + "))",
			"awaitPromise": true, "returnByValue": true,
		}), &r)
		d := time.Since(t)
		probecase.Check(i, r.Result.Type, r.Result.Value, r.ExceptionDetails)
		return d
	}
	fmt.Printf("%s over CDP, no Playwright: %d cases with a script, each a navigation to a new about:blank and one Runtime.evaluate of the case program\n",
		version.Product, *n)
	probecase.Measure(*n, cmd.Process.Pid, "chromium", one)
}
