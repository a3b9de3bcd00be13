package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RSS groups, in table order. Each process belongs to the group of its own executable
// when that is recognized, else to its parent's group (a renderer inherits "chromium").
var rssGroups = []string{"oracle", "node", "chromium", "firefox", "wk-driver", "minibrowser", "wk-procs", "xvfb", "other"}

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

// rssSample is the resident memory of a process tree, in KiB, by group.
type rssSample struct {
	Cases int            `json:"cases"`
	KiB   map[string]int `json:"kib"`
	Procs map[string]int `json:"procs"`
	Total int            `json:"total_kib"`
	// PSS is the proportional set size by group (/proc/<pid>/smaps_rollup): shared
	// pages divided among the processes sharing them, so it sums honestly where VmRSS
	// counts a page shared by 20 renderers 20 times.
	PSS      map[string]int `json:"pss_kib"`
	TotalPSS int            `json:"total_pss_kib"`
}

// sampleRSS sums VmRSS over root and all its descendants, by group. The root is the
// "oracle" group whatever its name. Processes that exit mid-scan are skipped.
func sampleRSS(root int) rssSample {
	s := rssSample{KiB: map[string]int{}, Procs: map[string]int{}, PSS: map[string]int{}}
	walkTree(root, func(pid int, g string) {
		if kib, ok := readVmRSS(pid); ok {
			s.KiB[g] += kib
			s.Procs[g]++
			s.Total += kib
			if pss, ok := readPss(pid); ok {
				s.PSS[g] += pss
				s.TotalPSS += pss
			}
		}
	})
	return s
}

// sampleCPU is the CPU time, in seconds, that root and its descendants have used, by
// group: each process's user and system time plus that of its children it has reaped
// (a content process that exited counts in its browser's). Between two samples the
// difference is what the tree spent, once per CPU second, as long as a process's
// reaper is in the tree too.
func sampleCPU(root int) map[string]float64 {
	cpu := map[string]float64{}
	walkTree(root, func(pid int, g string) {
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

// walkTree calls visit for root and every descendant with its group: its own
// executable's (groupOf), else its parent's; the root is "oracle" whatever its name.
func walkTree(root int, visit func(pid int, group string)) {
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
	return parsePPid(b)
}

func parsePPid(stat []byte) int {
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

// readVmRSS is VmRSS from /proc/<pid>/status in KiB; a kernel thread or zombie has none.
func readVmRSS(pid int) (int, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return parseVmRSS(f)
}

// readPss is Pss from /proc/<pid>/smaps_rollup in KiB.
func readPss(pid int) (int, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return parseKiBField(f, "Pss:")
}

func parseVmRSS(r io.Reader) (int, bool) { return parseKiBField(r, "VmRSS:") }

// parseKiBField finds the first line starting with field ("VmRSS:", "Pss:") and
// returns its value in kB.
func parseKiBField(r io.Reader, field string) (int, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if n, err := strconv.Atoi(f[0]); err == nil {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// growthCheck compares the last sample with the reference sample, the first taken at
// or after refFrac of the run (the start of the run is excluded: caches, JIT and the
// pools' first pages legitimately grow early). It reports a failure per checked
// series whose last value exceeds the reference by more than maxGrowth (0.5 = 50%).
// Checked: the total, and the oracle process alone (a Go-side leak would hide in the
// browsers' total otherwise).
func growthCheck(samples []rssSample, total int, refFrac, maxGrowth float64) (ref rssSample, failures []string) {
	if len(samples) < 2 {
		return rssSample{}, nil
	}
	ref = samples[len(samples)-1]
	for _, s := range samples {
		if float64(s.Cases) >= refFrac*float64(total) {
			ref = s
			break
		}
	}
	last := samples[len(samples)-1]
	check := func(name string, r, l int) {
		if r > 0 && float64(l) > float64(r)*(1+maxGrowth) {
			failures = append(failures, name+": "+strconv.Itoa(r/1024)+" MiB at "+strconv.Itoa(ref.Cases)+
				" cases -> "+strconv.Itoa(l/1024)+" MiB at "+strconv.Itoa(last.Cases)+
				" (+"+strconv.Itoa(int(100*(float64(l)/float64(r)-1)))+"%, limit +"+strconv.Itoa(int(100*maxGrowth))+"%)")
		}
	}
	check("total", ref.Total, last.Total)
	check("oracle process", ref.KiB["oracle"], last.KiB["oracle"])
	return ref, failures
}
