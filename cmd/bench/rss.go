package main

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/internal/proctree"
)

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
	proctree.Walk(root, func(pid int, g string) {
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
