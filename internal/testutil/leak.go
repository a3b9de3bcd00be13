package testutil

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// leakGrace is how long RunCheckingLeaks waits for goroutines to end after the tests:
// a closed browser connection's reader or a timer's callback may still be returning.
const leakGrace = 10 * time.Second

// permanent are goroutines the runtime or the standard library start once and keep
// for the process's life: not a test's leak.
var permanent = []string{
	"os/signal.signal_recv",   // signal.Notify's loop
	"os/signal.loop",          //
	"runtime.ensureSigM",      // signal masking, started with the loop above
	"testing.(*M).startAlarm", // -timeout
}

// RunCheckingLeaks is m.Run for a TestMain that also fails the run when goroutines
// the tests started outlive them by more than leakGrace (as go-rod's checkLeaking
// does, for the whole package): an oracle, engine or server a test closed must take
// its goroutines with it. The leaked goroutines' stacks go to stderr.
func RunCheckingLeaks(m *testing.M) int {
	before := goroutines()
	code := m.Run()
	if code != 0 {
		return code // the failure already says what is wrong; stacks would bury it
	}
	if leaked := leakedSince(before, leakGrace); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "%d goroutines outlived the tests by %s:\n\n%s\n", len(leaked), leakGrace, strings.Join(leaked, "\n\n"))
		return 1
	}
	return code
}

// leakedSince waits up to grace for every goroutine not in before (and not
// permanent) to end, and returns the stacks of those that did not.
func leakedSince(before map[string]string, grace time.Duration) []string {
	var leaked []string
	for deadline := time.Now().Add(grace); ; time.Sleep(50 * time.Millisecond) {
		leaked = leaked[:0]
		for id, stack := range goroutines() {
			if _, ok := before[id]; !ok && !isPermanent(stack) {
				leaked = append(leaked, stack)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return leaked
		}
	}
}

// goroutines are the stacks of every goroutine but the caller's, by goroutine id.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for i, stack := range strings.Split(string(buf), "\n\n") {
		if i == 0 {
			continue // the caller's own
		}
		// "goroutine 7 [chan receive]:"
		if f := strings.Fields(stack); len(f) > 1 && f[0] == "goroutine" {
			out[f[1]] = stack
		}
	}
	return out
}

func isPermanent(stack string) bool {
	for _, p := range permanent {
		if strings.Contains(stack, p) {
			return true
		}
	}
	return false
}
