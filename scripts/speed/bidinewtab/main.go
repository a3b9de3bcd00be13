// Command bidinewtab measures what a new top-level browsing context costs in the
// system Firefox over WebDriver BiDi, with no Playwright in between: a window (what
// Playwright's NewPage opens, and what the Firefox reset pays after every trace or url
// case), a tab in the same window, and a background tab; and whether each takes the
// focus from the page that had it. cmd/bench/HISTORY.md ("url cases") has its numbers.
//
//	go run ./scripts/speed/bidinewtab [-n 10] [-firefox /usr/bin/firefox-esr]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/layout-oracle/oracle/scripts/speed/internal/bidisession"
)

func focused(s *bidisession.Firefox, context string) bool {
	var r struct{ Result struct{ Value any } }
	_ = json.Unmarshal(s.Call("script.evaluate", map[string]any{"expression": "document.hasFocus()",
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
	s := bidisession.Start(*firefox, "")
	defer s.Close()
	var tree struct{ Contexts []struct{ Context string } }
	_ = json.Unmarshal(s.Call("browsingContext.getTree", map[string]any{}), &tree)
	cur := tree.Contexts[0].Context
	s.Call("browsingContext.activate", map[string]any{"context": cur})
	fmt.Printf("Firefox %s, %d of each; create = the command's round trip\n", s.Version, *n)
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
			_ = json.Unmarshal(s.Call("browsingContext.create", p), &made)
			create = append(create, time.Since(t))
			if focused(s, made.Context) {
				newFocus++
			}
			if focused(s, cur) {
				oldFocus++
			}
			t = time.Now()
			s.Call("browsingContext.activate", map[string]any{"context": made.Context})
			activate = append(activate, time.Since(t))
			if focused(s, made.Context) {
				activated++
			}
			s.Call("browsingContext.close", map[string]any{"context": cur})
			cur = made.Context
		}
		fmt.Printf("%-16s %12s %12s %11d/%d %11d/%d %13d/%d\n", kind, median(create).Round(time.Millisecond),
			median(activate).Round(time.Millisecond), newFocus, *n, oldFocus, *n, activated, *n)
	}
}
