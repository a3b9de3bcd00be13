// Command bidicase measures what a case with a script costs the system Firefox when
// driven over WebDriver BiDi with no Playwright in between: per case, a navigation to a
// new about:blank (a new document and global, as every case with a script gets) and
// one script.callFunction of the oracle's own case program (inpage/case.js, the walk
// of dump.WalkJS, the case's script). It prints the wall median and the CPU per case
// of the Firefox process tree and of this process, to set beside
// `PROBE_SCRIPT=... python3 scripts/speed/cpuprobe.py bin/oracle firefox N`
// (the same case through the oracle, Playwright's route). cmd/bench/README.md has its
// numbers ("A direct BiDi route for Firefox").
//
//	go run ./scripts/speed/bidicase [-n 100] [-firefox /usr/bin/firefox-esr]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/scripts/speed/internal/bidisession"
)

func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func main() {
	n := flag.Int("n", 100, "cases")
	firefox := flag.String("firefox", "/usr/bin/firefox-esr", "Firefox binary")
	script := flag.String("script", "document.body.appendChild(document.createElement('p')).textContent = 'added'", "each case's script")
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

	// The oracle's own case program and walk, as a geometry case with a script runs them
	// (oracle/runcase.go); the argument goes in as JSON text, parsed in the page.
	html := "<!doctype html><div style='width:100px;padding:3px'><p>hello <b>world</b></p><span>x</span></div>"
	fn := browser.WithCaseScript(dump.WalkJS)
	program := "(arg) => (" + browser.CaseProgram() + ")(JSON.parse(arg))"
	one := func(i int) time.Duration {
		arg := browser.CaseArg(fmt.Sprintf("%s<!--%d-->", html, i), fn,
			[]any{*script, dump.StyleProperties, 100000, 512, 64}, 20*time.Second)
		text, _ := json.Marshal(arg)
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
			"arguments": []any{map[string]any{"type": "string", "value": string(text)}},
		}), &r)
		for range *checks {
			s.Call("script.callFunction", map[string]any{"functionDeclaration": "() => document.hasFocus()",
				"awaitPromise": false, "target": map[string]any{"context": page}})
		}
		d := time.Since(t)
		if r.Type != "success" || r.Result.Type != "string" || strings.Count(fmt.Sprint(r.Result.Value), `"tag":"P"`) != 2 {
			log.Fatalf("case %d: %s %v %s %.300v", i, r.Type, r.ExceptionDetails, r.Result.Type, r.Result.Value)
		}
		return d
	}
	for i := range 10 { // warm up
		one(i)
	}
	time.Sleep(time.Second)
	ff0, me0 := proctree.TotalCPU(fx.Cmd.Process.Pid), selfCPU()
	t0 := time.Now()
	lat := make([]time.Duration, 0, *n)
	for i := range *n {
		lat = append(lat, one(i))
	}
	time.Sleep(500 * time.Millisecond)
	wall := time.Since(t0)
	ff, me := proctree.TotalCPU(fx.Cmd.Process.Pid)-ff0, selfCPU()-me0
	slices.Sort(lat)
	fmt.Printf("Firefox %s over BiDi, no Playwright: %d cases with a script, each a navigation to a new about:blank and one callFunction of the case program\n",
		fx.Version, *n)
	fmt.Printf("wall/case %.0f ms  median %.0f ms  cpu/case: firefox %.1f ms, this process %.1f ms\n",
		float64(wall.Milliseconds())/float64(*n), float64(lat[len(lat)/2].Microseconds())/1000,
		ff*1000/float64(*n), me*1000/float64(*n))
}
