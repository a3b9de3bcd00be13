// Package proctree reads a process tree from /proc: each process of a root and its
// descendants, named by group (the oracle, a Playwright driver, each browser, Xvfb),
// and the CPU time they used. cmd/bench samples memory and CPU with it, and the
// oracle's benchmarks measure what a case costs the whole machine.
package proctree

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Groups, in table order. Each process belongs to the group of its own executable
// when that is recognized, else to its parent's group (a renderer inherits "chromium").
var Groups = []string{"oracle", "node", "chromium", "firefox", "wk-driver", "minibrowser", "wk-procs", "xvfb", "other"}

// groupOf names a process's group from its executable's base name, or "" when the
// name does not decide it.
func groupOf(exe string) string {
	base := filepath.Base(strings.TrimSuffix(exe, " (deleted)"))
	switch {
	case base == "node" || strings.HasPrefix(base, "node"):
		return "node"
	case base == "chromium" || base == "chrome" || strings.HasPrefix(base, "chrome_"):
		return "chromium"
	case strings.HasPrefix(base, "firefox"):
		return "firefox"
	case base == "WebKitWebDriver":
		return "wk-driver"
	case base == "MiniBrowser":
		return "minibrowser"
	case strings.HasPrefix(base, "WebKit"): // WebKitWebProcess, WebKitNetworkProcess, WebKitGPUProcess
		return "wk-procs"
	case base == "Xvfb" || base == "Xorg":
		return "xvfb"
	}
	return ""
}

// CPU is the CPU time, in seconds, that root and its descendants have used, by
// group: each process's user and system time plus that of its children it has reaped
// (a content process that exited counts in its browser's). Between two samples the
// difference is what the tree spent, once per CPU second, as long as a process's
// reaper is in the tree too.
func CPU(root int) map[string]float64 {
	cpu := map[string]float64{}
	Walk(root, func(pid int, g string) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		cpu[g] += parseCPUSeconds(b)
	})
	return cpu
}

// parseCPUSeconds is utime+stime+cutime+cstime (fields 14-17 of /proc/<pid>/stat),
// in seconds: the kernel reports them in USER_HZ ticks, 100 per second on Linux
// whatever the kernel's own tick rate.
func parseCPUSeconds(stat []byte) float64 {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3 (state)
	if len(f) < 15 {
		return 0
	}
	ticks := 0
	for _, s := range f[11:15] {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return float64(ticks) / 100
}

// Walk calls visit for root and every descendant with its group: its own
// executable's (GroupOf), else its parent's; the root is "oracle" whatever its name.
func Walk(root int, visit func(pid int, group string)) {
	parent := map[int]int{}
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid := readPPid(pid)
		if ppid < 0 {
			continue
		}
		parent[pid] = ppid
		children[ppid] = append(children[ppid], pid)
	}
	var walk func(pid int, inherited string)
	walk = func(pid int, inherited string) {
		g := inherited
		if pid == root {
			g = "oracle"
		} else {
			exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
			if own := groupOf(exe); own != "" {
				g = own
			}
		}
		visit(pid, g)
		for _, c := range children[pid] {
			walk(c, g)
		}
	}
	if _, ok := parent[root]; ok {
		walk(root, "other")
	}
}

// readPPid is the parent pid from /proc/<pid>/stat (field 4, after the parenthesized
// command, which may itself contain spaces and parentheses), or -1.
func readPPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	return ParsePPid(b)
}

func ParsePPid(stat []byte) int {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}
