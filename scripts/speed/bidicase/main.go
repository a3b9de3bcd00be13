// Command bidicase measures what a case with a script costs the system Firefox when
// driven over WebDriver BiDi with no Playwright in between: per case, a navigation to a
// new about:blank (a new document and global, as every case with a script gets) and
// one script.callFunction of the oracle's own case program (inpage/case.js, the walk
// of dump.WalkJS, the case's script). It prints the wall median and the CPU per case
// of the Firefox process tree and of this process, to set beside
// `PROBE_SCRIPT=... python3 scripts/speed/cpuprobe.py bin/oracle firefox N`
// (the same case through the oracle, Playwright's route). cmd/bench/HISTORY.md has its
// numbers ("A direct BiDi route for Firefox").
//
//	go run ./scripts/speed/bidicase [-n 100] [-firefox /usr/bin/firefox-esr]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/scripts/speed/internal/bidisession"
	"github.com/layout-oracle/oracle/scripts/speed/internal/probecase"
)

func main() {
	n := flag.Int("n", 100, "cases")
	firefox := flag.String("firefox", "/usr/bin/firefox-esr", "Firefox binary")
	script := flag.String("script", probecase.Script, "each case's script")
	checks := flag.Int("checks", 0, "trivial script.callFunction round trips per case beside the case's two commands (the oracle's page checks are such calls), to price one")
	flag.Parse()
	// The oracle's process model (oracle/processmodel.go): no process per site.
	fx := bidisession.Start(*firefox, `user_pref("fission.webContentIsolationStrategy", 0);`+"\n")
	defer fx.Close()
	s := fx
	var tree struct{ Contexts []struct{ Context string } }
	_ = json.Unmarshal(s.Call("browsingContext.getTree", map[string]any{}), &tree)
	page := tree.Contexts[0].Context
	s.Call("browsingContext.setViewport", map[string]any{"context": page,
		"viewport": map[string]any{"width": dump.Viewport.Width, "height": dump.Viewport.Height}})

	// The argument goes in as JSON text, parsed in the page.
	program := "(arg) => (" + browser.CaseProgram() + ")(JSON.parse(arg))"
	one := func(i int) time.Duration {
		text := probecase.ArgText(i, *script)
		t := time.Now()
		s.Call("browsingContext.navigate", map[string]any{"context": page, "url": "about:blank", "wait": "complete"})
		var r struct {
			Type   string
			Result struct {
				Type  string
				Value any
			}
			ExceptionDetails any
		}
		_ = json.Unmarshal(s.Call("script.callFunction", map[string]any{
			"functionDeclaration": program, "awaitPromise": true, "resultOwnership": "none",
			"target":    map[string]any{"context": page},
			"arguments": []any{map[string]any{"type": "string", "value": text}},
		}), &r)
		for range *checks {
			s.Call("script.callFunction", map[string]any{"functionDeclaration": "() => document.hasFocus()",
				"awaitPromise": false, "target": map[string]any{"context": page}})
		}
		d := time.Since(t)
		typ := r.Result.Type
		if r.Type != "success" {
			typ = r.Type // "exception"
		}
		probecase.Check(i, typ, r.Result.Value, r.ExceptionDetails)
		return d
	}
	fmt.Printf("Firefox %s over BiDi, no Playwright: %d cases with a script, each a navigation to a new about:blank and one callFunction of the case program\n",
		fx.Version, *n)
	probecase.Measure(*n, fx.Cmd.Process.Pid, "firefox", one)
}
