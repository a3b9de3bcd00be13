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
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"
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

// treeCPU is the CPU seconds (user+system, own and reaped children) of pid and every
// live descendant.
func treeCPU(root int) float64 {
	parent := map[int]int{}
	cpu := map[int]float64{}
	hz := 100.0
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		parent[pid], _ = strconv.Atoi(f[1])
		var t float64
		for _, i := range []int{11, 12, 13, 14} {
			v, _ := strconv.ParseFloat(f[i], 64)
			t += v / hz
		}
		cpu[pid] = t
	}
	var sum float64
	var walk func(int)
	walk = func(p int) {
		sum += cpu[p]
		for c, pp := range parent {
			if pp == p {
				walk(c)
			}
		}
	}
	walk(root)
	return sum
}

func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func main() {
	n := flag.Int("n", 100, "cases")
	firefox := flag.String("firefox", "/usr/bin/firefox-esr", "Firefox binary")
	script := flag.String("script", "document.body.appendChild(document.createElement('p')).textContent = 'added'", "each case's script")
	flag.Parse()
	profile, err := os.MkdirTemp("", "bidicase")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(profile)
	// The oracle's process model (oracle/processmodel.go): no process per site.
	_ = os.WriteFile(filepath.Join(profile, "user.js"), []byte(`user_pref("fission.webContentIsolationStrategy", 0);`+"\n"), 0o644)
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
	ws.SetReadLimit(64 << 20)
	s := &session{ws: ws, waiting: map[int]chan json.RawMessage{}}
	go s.read()
	var version struct {
		Capabilities struct{ BrowserVersion string }
	}
	_ = json.Unmarshal(s.call("session.new", map[string]any{"capabilities": map[string]any{}}), &version)
	var tree struct{ Contexts []struct{ Context string } }
	_ = json.Unmarshal(s.call("browsingContext.getTree", map[string]any{}), &tree)
	page := tree.Contexts[0].Context
	s.call("browsingContext.setViewport", map[string]any{"context": page,
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
		s.call("browsingContext.navigate", map[string]any{"context": page, "url": "about:blank", "wait": "complete"})
		var r struct {
			Type   string
			Result struct {
				Type  string
				Value any
			}
			ExceptionDetails any
		}
		_ = json.Unmarshal(s.call("script.callFunction", map[string]any{
			"functionDeclaration": program, "awaitPromise": true, "resultOwnership": "none",
			"target":    map[string]any{"context": page},
			"arguments": []any{map[string]any{"type": "string", "value": string(text)}},
		}), &r)
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
	ff0, me0 := treeCPU(cmd.Process.Pid), selfCPU()
	t0 := time.Now()
	lat := make([]time.Duration, 0, *n)
	for i := range *n {
		lat = append(lat, one(i))
	}
	time.Sleep(500 * time.Millisecond)
	wall := time.Since(t0)
	ff, me := treeCPU(cmd.Process.Pid)-ff0, selfCPU()-me0
	slices.Sort(lat)
	fmt.Printf("Firefox %s over BiDi, no Playwright: %d cases with a script, each a navigation to a new about:blank and one callFunction of the case program\n",
		version.Capabilities.BrowserVersion, *n)
	fmt.Printf("wall/case %.0f ms  median %.0f ms  cpu/case: firefox %.1f ms, this process %.1f ms\n",
		float64(wall.Milliseconds())/float64(*n), float64(lat[len(lat)/2].Microseconds())/1000,
		ff*1000/float64(*n), me*1000/float64(*n))
}
