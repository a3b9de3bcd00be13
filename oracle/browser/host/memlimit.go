package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupProcsEnv names, in a Playwright browser's environment, the cgroup.procs file
// the browser wrapper (user.go) writes its own pid into before it execs the
// browser, so the browser and every process it forks start inside its engine's
// memory cgroup.
const cgroupProcsEnv = "LAYOUT_ORACLE_CGROUP_PROCS"

// MemoryBounds is one oracle process's memory bound on each engine's processes: a
// cgroup per engine (docs/untrusted.md, "Memory per engine"), under
// <the oracle's own cgroup>/layout-oracle-<pid> (v1) or beside it (v2).
type MemoryBounds struct {
	Limit   int64  `json:"limit"`             // bytes per engine, all its pages together; 0: off
	Kind    string `json:"kind,omitempty"`    // "cgroup v2", "cgroup v1"
	Dir     string `json:"dir,omitempty"`     // the oracle's cgroup of engine cgroups
	Problem string `json:"problem,omitempty"` // why there is no bound
	home    string // where processes left at Close go (the oracle's own cgroup)
}

// MemoryState is one engine's bound as ping reports it.
type MemoryState struct {
	Limit    int64  `json:"limit"`
	Usage    int64  `json:"usage"`
	OOMKills int64  `json:"oom_kills"` // processes the kernel killed at the bound
	Cgroup   string `json:"cgroup"`
}

// NewMemoryBounds makes a cgroup with limit bytes for each engine. When no cgroup
// can be made (no writable memory controller) Problem says why and every engine
// runs unbounded: an address-space rlimit is no substitute, since Chromium and
// Firefox reserve far more address space than they use and fail to start under one.
func NewMemoryBounds(limit int64, engines []string) *MemoryBounds {
	if limit <= 0 {
		return &MemoryBounds{Problem: "off (--engine-memory=0)"}
	}
	var problems []string
	for _, try := range []func(int64, []string) (*MemoryBounds, error){cgroupV2, cgroupV1} {
		m, err := try(limit, engines)
		if err == nil {
			return m
		}
		problems = append(problems, err.Error())
	}
	return &MemoryBounds{Problem: "no memory cgroup: " + strings.Join(problems, "; ") + ": engines run unbounded"}
}

// ownCgroup is this process's cgroup directory for a hierarchy: v2 (controller "")
// or the v1 hierarchy holding controller.
func ownCgroup(controller string) (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	return cgroupDir(string(cg), string(mi), controller)
}

// cgroupDir finds the cgroup directory from /proc/self/cgroup and /proc/self/mountinfo.
func cgroupDir(procCgroup, mountinfo, controller string) (string, error) {
	hierarchy := controller
	if hierarchy == "" {
		hierarchy = "cgroup2"
	}
	rel, found := "", false
	for _, line := range strings.Split(procCgroup, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if (controller == "" && f[0] == "0" && f[1] == "") || (controller != "" && inList(f[1], controller)) {
			rel, found = f[2], true
		}
	}
	if !found {
		return "", fmt.Errorf("not in a %s hierarchy", hierarchy)
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		// id parent maj:min root mountpoint opts ... - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		if (controller == "" && g[0] == "cgroup2") || (controller != "" && g[0] == "cgroup" && inList(g[2], controller)) {
			// A mount of a subtree (a container's) shows paths below its root.
			root, mnt := f[3], f[4]
			if root != "/" {
				rel = strings.TrimPrefix(rel, root)
			}
			return filepath.Join(mnt, rel), nil
		}
	}
	return "", fmt.Errorf("no %s mount", hierarchy)
}

func inList(list, item string) bool {
	for _, s := range strings.Split(list, ",") {
		if s == item {
			return true
		}
	}
	return false
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// cgroupV1 makes <own memory cgroup>/layout-oracle-<pid>/<engine>, each with
// memory.limit_in_bytes (and memsw, so swap is no way past it).
func cgroupV1(limit int64, engines []string) (*MemoryBounds, error) {
	own, err := ownCgroup("memory")
	if err != nil {
		return nil, fmt.Errorf("cgroup v1: %w", err)
	}
	m := &MemoryBounds{Limit: limit, Kind: "cgroup v1", home: own,
		Dir: filepath.Join(own, "layout-oracle-"+strconv.Itoa(os.Getpid()))}
	err = m.makeEngines(engines, func(dir string) error {
		n := strconv.FormatInt(limit, 10)
		if err := writeFile(filepath.Join(dir, "memory.limit_in_bytes"), n); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err == nil {
			return writeFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), n)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cgroup v1: %w", err)
	}
	return m, nil
}

// cgroupV2 makes layout-oracle-<pid>/<engine> with memory.max (and memory.swap.max
// 0). The oracle's own cgroup holds processes, so (no internal processes) it cannot
// give children a controller unless it is the root: the group goes beside it then.
func cgroupV2(limit int64, engines []string) (*MemoryBounds, error) {
	own, err := ownCgroup("")
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	parent := own
	if _, err := os.Stat(filepath.Join(own, "memory.max")); err == nil {
		// Not the root (it has no memory.max): beside it, unless it is the root of
		// what this process sees (a cgroup namespace), where nothing is beside it.
		if _, err := os.Stat(filepath.Join(filepath.Dir(own), "cgroup.procs")); err == nil {
			parent = filepath.Dir(own)
		}
	}
	if c, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers")); err != nil || !inList(strings.ReplaceAll(strings.TrimSpace(string(c)), " ", ","), "memory") {
		return nil, fmt.Errorf("cgroup v2: no memory controller in %s", parent)
	}
	m := &MemoryBounds{Limit: limit, Kind: "cgroup v2", home: own,
		Dir: filepath.Join(parent, "layout-oracle-"+strconv.Itoa(os.Getpid()))}
	if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), "+memory"); err != nil {
		return nil, fmt.Errorf("cgroup v2: enable memory in %s: %w", parent, err)
	}
	err = m.makeEngines(engines, func(dir string) error {
		if err := writeFile(filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"), "+memory"); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(limit, 10)); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			return writeFile(filepath.Join(dir, "memory.swap.max"), "0")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	return m, nil
}

// makeEngines creates m.Dir and a child per engine that set configures, or leaves
// nothing behind.
func (m *MemoryBounds) makeEngines(engines []string, set func(dir string) error) error {
	removeStale(filepath.Dir(m.Dir))
	if err := os.Mkdir(m.Dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	for _, name := range engines {
		dir := filepath.Join(m.Dir, name)
		err := os.Mkdir(dir, 0o755)
		if err == nil || errors.Is(err, os.ErrExist) {
			err = set(dir)
		}
		if err != nil {
			m.Close()
			return fmt.Errorf("%s: %w", dir, err)
		}
	}
	return nil
}

// removeStale removes the empty cgroups of oracles that died without closing theirs
// (SIGKILL): layout-oracle-<pid> in parent whose pid is gone.
func removeStale(parent string) {
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		pid, ok := strings.CutPrefix(e.Name(), "layout-oracle-")
		if _, err := strconv.Atoi(pid); !ok || err != nil || !e.IsDir() {
			continue
		}
		if _, err := os.Stat("/proc/" + pid); err == nil {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		kids, _ := os.ReadDir(dir)
		for _, k := range kids {
			if k.IsDir() {
				os.Remove(filepath.Join(dir, k.Name())) // fails, and stays, while it holds processes
			}
		}
		os.Remove(dir)
	}
}

// Procs is the cgroup.procs file of engine's cgroup, or "" when there is none.
func (m *MemoryBounds) Procs(engine string) string {
	if m == nil || m.Dir == "" {
		return ""
	}
	p := filepath.Join(m.Dir, engine, "cgroup.procs")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// State is engine's bound now (ok false: none).
func (m *MemoryBounds) State(engine string) (MemoryState, bool) {
	procs := m.Procs(engine)
	if procs == "" {
		return MemoryState{}, false
	}
	dir := filepath.Dir(procs)
	st := MemoryState{Limit: m.Limit, Cgroup: dir}
	num := func(name string) int64 {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n
	}
	if m.Kind == "cgroup v2" {
		st.Usage = num("memory.current")
	} else {
		st.Usage = num("memory.usage_in_bytes")
	}
	st.OOMKills = m.OOMKills(engine)
	return st, true
}

// OOMKills is how many of engine's processes the kernel has killed at the bound (0
// when there is no bound).
func (m *MemoryBounds) OOMKills(engine string) int64 {
	procs := m.Procs(engine)
	if procs == "" {
		return 0
	}
	file := "memory.oom_control"
	if m.Kind == "cgroup v2" {
		file = "memory.events"
	}
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(procs), file))
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// PlaceTree moves roots and every descendant into the cgroup whose cgroup.procs is
// procs. Processes a root forks later are born inside; this catches those that
// already ran (a browser started by an unprivileged oracle, with no wrapper).
func PlaceTree(procs string, roots []int) error {
	if procs == "" {
		return nil
	}
	var errs []error
	for _, p := range ProcessTree(roots) {
		if err := writeFile(procs, strconv.Itoa(p.PID)); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("process %d: %w", p.PID, err))
		}
	}
	return errors.Join(errs...)
}

// Close removes the cgroups. A cgroup holding processes cannot be removed: those of
// a closed engine may take a moment to exit, and any left are moved to the oracle's
// own cgroup first.
func (m *MemoryBounds) Close() error {
	if m == nil || m.Dir == "" {
		return nil
	}
	ents, _ := os.ReadDir(m.Dir)
	var errs []error
	for _, e := range ents {
		if e.IsDir() {
			errs = append(errs, m.remove(filepath.Join(m.Dir, e.Name())))
		}
	}
	errs = append(errs, m.remove(m.Dir))
	return errors.Join(errs...)
}

func (m *MemoryBounds) remove(dir string) error {
	var err error
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			break
		}
	}
	if b, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs")); rerr == nil {
		for _, pid := range strings.Fields(string(b)) {
			writeFile(filepath.Join(m.home, "cgroup.procs"), pid)
		}
		if err = os.Remove(dir); err == nil {
			return nil
		}
	}
	return fmt.Errorf("remove cgroup %s: %w", dir, err)
}
