package host

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ProcInfo is what /proc says of one process.
type ProcInfo struct {
	PID, PPID       int
	UID, EUID       int
	Seccomp         int // 0 none, 1 strict, 2 filter
	NNP             bool
	UserNS, PidNS   string
	NetNS, Cmdline0 string
	Args            []string
}

func readProc(pid int) (ProcInfo, bool) {
	p := ProcInfo{PID: pid}
	dir := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return p, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		switch k {
		case "PPid":
			if len(f) > 0 {
				p.PPID, _ = strconv.Atoi(f[0])
			}
		case "Uid":
			if len(f) > 1 {
				p.UID, _ = strconv.Atoi(f[0])
				p.EUID, _ = strconv.Atoi(f[1])
			}
		case "Seccomp":
			if len(f) > 0 {
				p.Seccomp, _ = strconv.Atoi(f[0])
			}
		case "NoNewPrivs":
			p.NNP = len(f) > 0 && f[0] == "1"
		}
	}
	if b, err := os.ReadFile(dir + "/cmdline"); err == nil {
		// Chromium and Firefox rewrite their process title into one space-separated
		// string: split on both.
		p.Args = strings.Fields(strings.ReplaceAll(string(b), "\x00", " "))
		if len(p.Args) > 0 {
			p.Cmdline0 = filepath.Base(p.Args[0])
		}
	}
	p.UserNS, _ = os.Readlink(dir + "/ns/user")
	p.PidNS, _ = os.Readlink(dir + "/ns/pid")
	p.NetNS, _ = os.Readlink(dir + "/ns/net")
	return p, true
}

// ProcessTree is every live process under roots (roots included), from /proc.
func ProcessTree(roots []int) []ProcInfo {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	infos := map[int]ProcInfo{}
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		p, ok := readProc(pid)
		if !ok {
			continue
		}
		infos[pid] = p
		children[p.PPID] = append(children[p.PPID], pid)
	}
	var out []ProcInfo
	seen := map[int]bool{}
	queue := append([]int{}, roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if p, ok := infos[pid]; ok {
			out = append(out, p)
			queue = append(queue, children[pid]...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// HasArg says whether one of p's arguments starts with prefix.
func (p ProcInfo) HasArg(prefix string) bool {
	for _, a := range p.Args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}
