package proctree

// Unit tests of the /proc parsing; CPU reads this test's own process.

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func TestParsing(t *testing.T) {
	if got := ParsePPid([]byte("1234 (Web Content (x)) S 987 1234 1 0 -1")); got != 987 {
		t.Errorf("ppid %d, want 987", got)
	}
	if got := ParsePPid([]byte("garbage")); got != -1 {
		t.Errorf("ppid of garbage %d", got)
	}
	// A real line's shape (fields 14-17: utime 250, stime 50, cutime 7, cstime 3).
	stat := "4242 (Isolated Web Co) S 4200 4200 4200 0 -1 4194560 9 0 0 0 250 50 7 3 20 0 28 0 1234 0 0"
	if got := parseCPUSeconds([]byte(stat)); got != 3.10 {
		t.Errorf("cpu %v s, want 3.10", got)
	}
	if got := parseCPUSeconds([]byte("4242 (x) S 1")); got != 0 {
		t.Errorf("cpu of a short line %v", got)
	}
	// Spin until the kernel has counted a tick (10 ms) of this process's CPU.
	var got float64
	for start := time.Now(); got == 0 && time.Since(start) < 5*time.Second; {
		for spin := time.Now(); time.Since(spin) < 20*time.Millisecond; {
		}
		got = CPU(os.Getpid())["oracle"]
	}
	if got <= 0 {
		t.Errorf("this test process has used %v s of CPU after spinning, want > 0", got)
	}
	for exe, want := range map[string]string{
		"/usr/lib/chromium/chromium":                                "chromium",
		"/usr/lib/firefox-esr/firefox-esr":                          "firefox",
		"/usr/bin/node":                                             "node",
		"/usr/bin/WebKitWebDriver":                                  "wk-driver",
		"/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser":      "minibrowser",
		"/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/WebKitWebProcess": "wk-procs",
		"/usr/bin/Xvfb":                                             "xvfb",
		"/usr/bin/dash":                                             "",
		"/usr/lib/chromium/chromium (deleted)":                      "chromium",
	} {
		if got := groupOf(exe); got != want {
			t.Errorf("GroupOf(%s) = %q, want %q", exe, got, want)
		}
	}
}

// totalCPU is CPU's sum over the groups: the seconds the whole tree has used.
func totalCPU(root int) float64 {
	var sum float64
	for _, v := range CPU(root) {
		sum += v
	}
	return sum
}

// TestTotalCPUCountsThisProcess is a unit test of this package alone: the sum over
// groups grows while this process spins. It spins until the kernel's own account
// of this process (getrusage) shows 0.3 s of CPU, not for 0.3 s of wall time: on a
// loaded machine the wall time bought as little as 0.08 s of CPU.
func TestTotalCPUCountsThisProcess(t *testing.T) {
	before := totalCPU(os.Getpid())
	own := func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	start := own()
	for deadline := time.Now().Add(30 * time.Second); own()-start < 0.3; {
		if time.Now().After(deadline) {
			t.Fatal("this process got under 0.3 s of CPU in 30 s")
		}
	}
	if after := totalCPU(os.Getpid()); after-before < 0.2 {
		t.Fatalf("CPU's sum grew %.3f s while getrusage counted %.3f s", after-before, own()-start)
	}
}
