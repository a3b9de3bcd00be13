package browser

import (
	"fmt"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// SandboxState is one engine's sandbox as /proc shows it, reported by ping and
// logged at startup.
type SandboxState struct {
	// User is who every browser process of the engine runs as.
	User string `json:"user"`
	// On says every content process (Chromium renderer, Firefox web content process,
	// WebKitGTK web process) runs in the engine's sandbox.
	On bool `json:"on"`
	// Sandbox says which sandbox is on, as observed, e.g. "namespace sandbox (own
	// user, pid and network namespaces) + seccomp-bpf".
	Sandbox string `json:"sandbox,omitempty"`
	// Reason says why it is off (or could not be seen).
	Reason string `json:"reason,omitempty"`

	transient bool // off for a reason a moment may change (a process just starting)
}

// SandboxReporter is implemented by engines whose processes the oracle can inspect.
type SandboxReporter interface{ Sandbox() SandboxState }

// contentProcess says whether p runs web content for engine: the processes the
// engine's sandbox exists for.
func contentProcess(engine string, p host.ProcInfo) bool {
	k := knowledgeOf(engine)
	return k.contentProcess != nil && k.contentProcess(p)
}

// inspectSandbox reads engine's sandbox from its processes under roots (the browser's
// main process, or WebKitWebDriver): every process must run as the browser user, no
// command line may say --no-sandbox, and every content process must be confined as
// the engine's sandbox confines it:
//   - Chromium renderer: its own user and pid namespace (the namespace sandbox) and
//     a seccomp-bpf filter;
//   - Firefox content process: a seccomp-bpf filter (the content sandbox), reported
//     with the namespaces it got;
//   - WebKitGTK web process: started by bubblewrap, so in its own user, pid and
//     network namespaces, with a seccomp-bpf filter.
//
// A content process sets up its filter a moment after it starts (a new Firefox
// content process was seen unfiltered at first): a state off for that reason alone is
// looked at again for up to 2 s before it is reported.
func InspectSandbox(engine string, roots []int) SandboxState {
	st := inspectSandboxOnce(engine, roots)
	for deadline := time.Now().Add(2 * time.Second); !st.On && st.transient && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		st = inspectSandboxOnce(engine, roots)
	}
	return st
}

func inspectSandboxOnce(engine string, roots []int) SandboxState {
	u := host.BrowserUser()
	st := SandboxState{User: u.Name}
	if u.Problem != "" {
		st.Reason = u.Problem
		return st
	}
	procs := host.ProcessTree(roots)
	if len(procs) == 0 {
		st.Reason = "no browser process to inspect (being relaunched?)"
		return st
	}
	main := procs[0]
	for _, p := range procs {
		if p.PID == roots[0] {
			main = p
		}
	}
	var content []host.ProcInfo
	for _, p := range procs {
		if p.UID != int(u.UID) || p.EUID != int(u.UID) {
			st.Reason = fmt.Sprintf("process %d (%s) runs as uid %d, not %s (%d)", p.PID, p.Cmdline0, p.EUID, u.Name, u.UID)
			return st
		}
		if p.HasArg("--no-sandbox") {
			st.Reason = fmt.Sprintf("process %d (%s) was started with --no-sandbox", p.PID, p.Cmdline0)
			return st
		}
		if contentProcess(engine, p) {
			content = append(content, p)
		}
	}
	if len(content) == 0 {
		st.transient = true
		st.Reason = "no content process to inspect (being replaced?)"
		return st
	}
	var kind string
	for _, c := range content {
		var why string
		kind, why = knowledgeOf(engine).sandbox(c, main) // engine_*.go
		if why == "" && c.Seccomp != 2 {
			why, st.transient = "its content process has no seccomp filter", true
		}
		if why != "" {
			st.Reason = fmt.Sprintf("%s (process %d)", why, c.PID)
			return st
		}
	}
	st.On, st.Sandbox = true, kind
	return st
}

// RequireSandboxes is --require-sandbox's decision: nil when every engine launched
// has its sandbox on, else an error naming each that has not and why.
func RequireSandboxes(states map[string]SandboxState) error {
	var off []string
	for _, name := range AllEngines {
		if st, ok := states[name]; ok && !st.On {
			off = append(off, fmt.Sprintf("%s: %s", name, st.Reason))
		}
	}
	if len(off) == 0 {
		return nil
	}
	return fmt.Errorf("--require-sandbox: no sandbox for %s", strings.Join(off, "; "))
}
