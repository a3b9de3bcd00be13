// Command bidinewtab measures what a new top-level browsing context costs in the
// system Firefox over WebDriver BiDi, with no Playwright in between: a window (what
// Playwright's NewPage opens, and what the Firefox reset pays after every trace or url
// case), a tab in the same window, and a background tab; and whether each takes the
// focus from the page that had it. cmd/bench/README.md ("url cases") has its numbers.
//
//	go run ./scripts/speed/bidinewtab [-n 10] [-firefox /usr/bin/firefox-esr]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// session is one BiDi session: commands by id, events ignored.
type session struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	waiting map[int]chan json.RawMessage
}

func (s *session) call(method string, params any) json.RawMessage {
	s.mu.Lock()
	s.next++
	id, ch := s.next, make(chan json.RawMessage, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := s.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
		log.Fatalf("%s: %v", method, err)
	}
	var reply struct {
		Type    string          `json:"type"`
		Result  json.RawMessage `json:"result"`
		Message string          `json:"message"`
	}
	_ = json.Unmarshal(<-ch, &reply)
	if reply.Type != "success" {
		log.Fatalf("%s: %s", method, reply.Message)
	}
	return reply.Result
}

func (s *session) read() {
	for {
		_, b, err := s.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m struct{ ID *int }
		if json.Unmarshal(b, &m) == nil && m.ID != nil {
			s.mu.Lock()
			ch := s.waiting[*m.ID]
			s.mu.Unlock()
			ch <- b
		}
	}
}

func (s *session) focused(context string) bool {
	var r struct{ Result struct{ Value any } }
	_ = json.Unmarshal(s.call("script.evaluate", map[string]any{"expression": "document.hasFocus()",
		"target": map[string]any{"context": context}, "awaitPromise": false}), &r)
	return r.Result.Value == true
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func main() {
	n := flag.Int("n", 10, "contexts of each kind")
	firefox := flag.String("firefox", "/usr/bin/firefox-esr", "Firefox binary")
	flag.Parse()
	profile, err := os.MkdirTemp("", "bidinewtab")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(profile)
	cmd := exec.Command(*firefox, "--headless", "--remote-debugging-port=0", "--profile", profile, "--no-remote", "about:blank")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer cmd.Process.Kill()
	listening := regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	go func() {
		for lines.Scan() {
		}
	}()
	ws, _, err := websocket.Dial(context.Background(), url+"/session", nil)
	if err != nil {
		log.Fatal(err)
	}
	s := &session{ws: ws, waiting: map[int]chan json.RawMessage{}}
	go s.read()
	var version struct {
		Capabilities struct{ BrowserVersion string }
	}
	_ = json.Unmarshal(s.call("session.new", map[string]any{"capabilities": map[string]any{}}), &version)
	var tree struct{ Contexts []struct{ Context string } }
	_ = json.Unmarshal(s.call("browsingContext.getTree", map[string]any{}), &tree)
	cur := tree.Contexts[0].Context
	s.call("browsingContext.activate", map[string]any{"context": cur})
	fmt.Printf("Firefox %s, %d of each; create = the command's round trip\n", version.Capabilities.BrowserVersion, *n)
	fmt.Printf("%-16s %12s %12s %14s %14s %16s\n", "kind", "create med", "activate med", "new has focus", "old keeps it", "focus, activated")
	for _, kind := range []string{"window", "tab", "background tab"} {
		var create, activate []time.Duration
		newFocus, oldFocus, activated := 0, 0, 0
		for range *n {
			p := map[string]any{"type": "window"}
			if kind != "window" {
				p = map[string]any{"type": "tab", "referenceContext": cur, "background": kind == "background tab"}
			}
			t := time.Now()
			var made struct{ Context string }
			_ = json.Unmarshal(s.call("browsingContext.create", p), &made)
			create = append(create, time.Since(t))
			if s.focused(made.Context) {
				newFocus++
			}
			if s.focused(cur) {
				oldFocus++
			}
			t = time.Now()
			s.call("browsingContext.activate", map[string]any{"context": made.Context})
			activate = append(activate, time.Since(t))
			if s.focused(made.Context) {
				activated++
			}
			s.call("browsingContext.close", map[string]any{"context": cur})
			cur = made.Context
		}
		fmt.Printf("%-16s %12s %12s %11d/%d %11d/%d %13d/%d\n", kind, median(create).Round(time.Millisecond),
			median(activate).Round(time.Millisecond), newFocus, *n, oldFocus, *n, activated, *n)
	}
}
