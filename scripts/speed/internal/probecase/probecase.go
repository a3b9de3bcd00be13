// Package probecase is what the raw-protocol speed probes share (scripts/speed/bidicase,
// scripts/speed/cdpcase): starting a browser that names its debugging endpoint on
// stderr, the one case with a script each probe sends (the oracle's own case program
// and walk), and the timed loop that prints wall and CPU per case.
package probecase

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// Script is each case's script by default: it appends the case's second <p>.
const Script = "document.body.appendChild(document.createElement('p')).textContent = 'added'"

// StartListening starts cmd and returns the first submatch of listening in its
// stderr (the browser's debugging endpoint); the rest of stderr is drained.
func StartListening(cmd *exec.Cmd, listening *regexp.Regexp) string {
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
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
	if url == "" {
		log.Fatalf("%s named no endpoint on stderr", cmd.Path)
	}
	return url
}

// ArgText is case i's argument to the case program as JSON text: the oracle's own
// case program and walk, as a geometry case with a script runs them
// (oracle/runcase.go), on a small page made unique by i.
func ArgText(i int, script string) string {
	html := fmt.Sprintf("<!doctype html><div style='width:100px;padding:3px'><p>hello <b>world</b></p><span>x</span></div><!--%d-->", i)
	arg := browser.CaseArg(html, browser.WithCaseScript(dump.WalkJS),
		[]any{script, dump.StyleProperties, 100000, 512, 64}, 20*time.Second)
	text, _ := json.Marshal(arg)
	return string(text)
}

// Check fails the probe unless case i's result is the walk's JSON text with both <p>
// (the page's and the script's); details is what the protocol said otherwise.
func Check(i int, typ string, value, details any) {
	if typ != "string" || strings.Count(fmt.Sprint(value), `"tag":"P"`) != 2 {
		log.Fatalf("case %d: %v %s %.300v", i, details, typ, value)
	}
}

// Measure runs one for 10 cases to warm up, then for n, and prints the wall per case,
// the median latency, and the CPU per case of the browser's process tree (browser
// names it) and of this process.
func Measure(n, browserPid int, browserName string, one func(i int) time.Duration) {
	for i := range 10 {
		one(i)
	}
	time.Sleep(time.Second)
	b0, me0 := proctree.TotalCPU(browserPid), selfCPU()
	t0 := time.Now()
	lat := make([]time.Duration, 0, n)
	for i := range n {
		lat = append(lat, one(i))
	}
	time.Sleep(500 * time.Millisecond)
	wall := time.Since(t0)
	b, me := proctree.TotalCPU(browserPid)-b0, selfCPU()-me0
	slices.Sort(lat)
	fmt.Printf("wall/case %.0f ms  median %.0f ms  cpu/case: %s %.1f ms, this process %.1f ms\n",
		float64(wall.Milliseconds())/float64(n), float64(lat[len(lat)/2].Microseconds())/1000,
		browserName, b*1000/float64(n), me*1000/float64(n))
}

func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
