package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procStatus is one field of /proc/<pid>/status ("" when gone).
func procStatus(pid int, key string) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func nsOf(pid int, ns string) string {
	l, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", ns))
	return l
}

// browserUID is oracle-browser's uid; the tests that need it skip when the oracle
// would not drop to it (not root) and fail when setup did not create it.
func browserUID(t *testing.T) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the oracle runs the browsers as itself when it is not root")
	}
	u, err := user.Lookup("oracle-browser")
	if err != nil {
		t.Fatalf("user oracle-browser is missing (scripts/setup.sh creates it): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	return uid
}

// TestBrowsersRunUnprivilegedInTheirOwnSandboxes: as root, every browser
// process the oracle starts runs as oracle-browser, no command line says
// --no-sandbox, each engine's content processes are confined as /proc shows it
// (read here independently of the oracle's own check), and ping says the same.
// On the old code every process ran as root and Chromium had --no-sandbox.
func TestBrowsersRunUnprivilegedInTheirOwnSandboxes(t *testing.T) {
	uid := browserUID(t)
	c := gtOracle(t) // every process below it is checked, whatever cases it served
	ping := c.send(t, map[string]any{"op": "ping"})
	oracle := c.pid()

	sandbox, _ := ping["sandbox"].(map[string]any)
	for _, e := range engines {
		st, _ := sandbox[e].(map[string]any)
		if st["on"] != true || st["user"] != "oracle-browser" {
			t.Errorf("ping says %s's sandbox is %v, want on as oracle-browser (stderr: %s)", e, st, c.stderr.String())
		}
	}

	content := map[string][]int{}
	for _, pid := range descendants(oracle) {
		args := cmdline(pid)
		if len(args) == 0 {
			continue
		}
		joined := strings.Join(args, " ")
		if strings.Contains(joined, " run-driver") {
			continue // Playwright's node driver: it runs as the oracle (docs/sandbox.md)
		}
		if ids := strings.Fields(procStatus(pid, "Uid")); len(ids) < 2 || ids[0] != strconv.Itoa(uid) || ids[1] != strconv.Itoa(uid) {
			if len(ids) > 0 { // still alive
				t.Errorf("process %d (%s) runs as uid %v, want oracle-browser (%d)", pid, args[0], ids, uid)
			}
		}
		if strings.Contains(joined, "--no-sandbox") {
			t.Errorf("process %d was started with --no-sandbox: %.200s", pid, joined)
		}
		exe := filepath.Base(args[0])
		switch {
		case exe == "chromium" && strings.Contains(joined, "--type=renderer"):
			content["chromium"] = append(content["chromium"], pid)
		case exe == "firefox-esr" && strings.Contains(joined, "-contentproc") && strings.Contains(joined, "-isForBrowser"):
			content["firefox"] = append(content["firefox"], pid)
		case exe == "WebKitWebProcess":
			content["webkit"] = append(content["webkit"], pid)
		}
	}
	for _, e := range engines {
		if len(content[e]) == 0 {
			t.Errorf("%s: no content process found under the oracle", e)
		}
		for _, pid := range content[e] {
			// A content process sets up its filter just after it starts: wait a moment.
			for deadline := time.Now().Add(5 * time.Second); procStatus(pid, "Seccomp") == "0" && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			if got := procStatus(pid, "Seccomp"); got != "2" && got != "" {
				t.Errorf("%s content process %d: Seccomp %q, want 2 (a seccomp-bpf filter)", e, pid, got)
			}
			switch e {
			case "chromium", "webkit":
				if nsOf(pid, "user") == nsOf(oracle, "user") || nsOf(pid, "pid") == nsOf(oracle, "pid") {
					t.Errorf("%s content process %d shares the host's user or pid namespace: its namespace sandbox is off", e, pid)
				}
			}
		}
	}
}

// TestRequireSandboxRefusesWhenASandboxIsOff: a Chromium whose sandbox
// is really off (its binary is a script adding --no-sandbox, so /proc shows a
// renderer in the browser's namespaces) is reported off by ping and logged at
// startup, and --require-sandbox then refuses to start, exit 1, saying why on stderr.
func TestRequireSandboxRefusesWhenASandboxIsOff(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	browserUID(t)
	dir, err := os.MkdirTemp("", "oracle-nosandbox-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755) // the browser user runs the script
	script := filepath.Join(dir, "chromium")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec /usr/bin/chromium --no-sandbox \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	c := startOracle(t, "--pages=1", "--self-check=false", "--engines=chromium", "--chromium-path="+script)
	ping := c.send(t, map[string]any{"op": "ping"})
	st, _ := ping["sandbox"].(map[string]any)["chromium"].(map[string]any)
	if st["on"] != false || !strings.Contains(fmt.Sprint(st["reason"]), "--no-sandbox") {
		t.Errorf("ping says chromium's sandbox is %v, want off naming --no-sandbox", st)
	}
	if !strings.Contains(c.stderr.String(), `"sandbox unavailable"`) {
		t.Errorf("no startup log line says the sandbox is unavailable:\n%s", c.stderr.String())
	}
	c.close()

	r := startOracle(t, "--pages=1", "--self-check=false", "--engines=chromium", "--chromium-path="+script, "--require-sandbox")
	if code := r.exitCode(t, 120*time.Second); code == 0 {
		t.Fatalf("--require-sandbox started without Chromium's sandbox")
	}
	if out := r.stderr.String(); !strings.Contains(out, "oracle: refusing to start: --require-sandbox: no sandbox for chromium") {
		t.Errorf("stderr does not say plainly why it refused:\n%s", out)
	}
}

// listeners is every TCP port listening under pid (its descendants included), with
// the name of the process holding it, from /proc/net/tcp and each process's fds.
func listeners(t *testing.T, pid int) map[int]string {
	t.Helper()
	inodes := map[string]int{} // socket inode -> port
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(fs[1], ":")
			port, _ := strconv.ParseInt(hexPort, 16, 32)
			inodes[fs[9]] = int(port)
		}
	}
	out := map[int]string{}
	for _, p := range append([]int{pid}, descendants(pid)...) {
		fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(p), "fd"))
		for _, fd := range fds {
			l, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(p), "fd", fd.Name()))
			if ino, ok := strings.CutPrefix(l, "socket:["); ok {
				if port, ok := inodes[strings.TrimSuffix(ino, "]")]; ok {
					if args := cmdline(p); len(args) > 0 {
						out[port] = filepath.Base(args[0])
					}
				}
			}
		}
	}
	return out
}

// TestLocalUsersCannotDriveTheBrowsers: the real user nobody, in a
// process of its own, tries every TCP port the oracle's processes listen on and the
// oracle's X display. It may connect to the TCP ports (docs/sandbox.md says which
// remain reachable), but it can neither open a WebDriver session on WebKitWebDriver
// nor a BiDi session on Firefox, nor read a trace page, nor talk X to the display.
// On the old code the X display accepted any local client.
func TestLocalUsersCannotDriveTheBrowsers(t *testing.T) {
	browserUID(t)
	c := gtOracle(t) // its ports and display; a session nobody opened would fail here first
	c.send(t, map[string]any{"op": "ping"})

	ports := listeners(t, c.pid())
	// The display the oracle's Xvfb took, from its log line.
	var display string
	for _, line := range strings.Split(c.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["message"] == "xvfb started" {
			display = "/tmp/.X11-unix/X" + strings.TrimPrefix(fmt.Sprint(m["display"]), ":")
		}
	}
	if display == "" {
		t.Fatal("the oracle's Xvfb display not found in its log")
	}

	// The probe runs as nobody: this test binary, copied where nobody can run it.
	dir, err := os.MkdirTemp("", "oracle-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, _ := os.Executable()
	bin := filepath.Join(dir, "probe")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	nuid, _ := strconv.Atoi(nobody.Uid)
	nogid, _ := strconv.Atoi(nobody.Gid)
	probe := func(kind, target string) string {
		cmd := exec.Command(bin, "-test.run=^TestNobodyProbe$")
		cmd.Env = []string{"ORACLE_NOBODY_PROBE=" + kind, "ORACLE_NOBODY_TARGET=" + target, "HOME=/"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(nuid), Gid: uint32(nogid), Groups: []uint32{}}}
		out, _ := cmd.CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if r, ok := strings.CutPrefix(line, "PROBE: "); ok {
				return r
			}
		}
		t.Fatalf("probe %s %s printed no result: %s", kind, target, out)
		return ""
	}

	seen := map[string]bool{}
	for port, proc := range ports {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		switch proc {
		case "WebKitWebDriver":
			seen[proc] = true
			if r := probe("webdriver", addr); !strings.Contains(r, "session not created") {
				t.Errorf("nobody on WebKitWebDriver %s: %s", addr, r)
			}
		case "firefox-esr":
			seen[proc] = true
			if r := probe("bidi", addr); !strings.Contains(r, "session not created") {
				t.Errorf("nobody on Firefox's BiDi port %s: %s", addr, r)
			}
		case "oracle":
			seen[proc] = true
			// The origin's guard refuses every host but a case's (oracle/origin/network.go): 403.
			if r := probe("http", addr); !strings.HasPrefix(r, "403") {
				t.Errorf("nobody on the trace origin %s: %s", addr, r)
			}
		}
		t.Logf("port %d (%s) is reachable over loopback", port, proc)
	}
	for _, want := range []string{"WebKitWebDriver", "firefox-esr", "oracle"} {
		if !seen[want] {
			t.Errorf("no listening port of %s found (ports: %v)", want, ports)
		}
	}
	if r := probe("x11", display); !strings.HasPrefix(r, "refused") {
		t.Errorf("nobody on the X display %s: %s", display, r)
	}
}

// TestNobodyProbe is not a test on its own: TestLocalUsersCannotDriveTheBrowsers
// runs this binary as nobody with ORACLE_NOBODY_PROBE set, and it prints one
// "PROBE: <result>" line saying what nobody got.
func TestNobodyProbe(t *testing.T) {
	kind, target := os.Getenv("ORACLE_NOBODY_PROBE"), os.Getenv("ORACLE_NOBODY_TARGET")
	if kind == "" {
		t.Skip("helper process of TestLocalUsersCannotDriveTheBrowsers")
	}
	fmt.Println("PROBE: " + nobodyProbe(kind, target))
}

func nobodyProbe(kind, target string) string {
	hc := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: nil}}
	switch kind {
	case "webdriver":
		// A session whose "browser" is a shell would be code execution as the browser user.
		body := `{"capabilities":{"alwaysMatch":{"webkitgtk:browserOptions":{"binary":"/bin/sh","args":["-c","id"]}}}}`
		resp, err := hc.Post("http://"+target+"/session", "application/json", strings.NewReader(body))
		if err != nil {
			return "error: " + err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(b)
	case "http":
		resp, err := hc.Get("http://" + target + "/trace/x")
		if err != nil {
			return "error: " + err.Error()
		}
		resp.Body.Close()
		return resp.Status
	case "bidi":
		conn, err := net.DialTimeout("tcp", target, 10*time.Second)
		if err != nil {
			return "error: " + err.Error()
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(conn, "GET /session HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
			target, base64.StdEncoding.EncodeToString([]byte("0123456789abcdef")))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return "error: " + err.Error()
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			return "handshake: " + resp.Status
		}
		msg, _ := json.Marshal(map[string]any{"id": 1, "method": "session.new", "params": map[string]any{"capabilities": map[string]any{}}})
		frame := []byte{0x81, 0x80 | byte(len(msg)), 1, 2, 3, 4} // short masked text frame
		for i, b := range msg {
			frame = append(frame, b^[]byte{1, 2, 3, 4}[i%4])
		}
		conn.Write(frame)
		hdr := make([]byte, 2)
		if _, err := io.ReadFull(br, hdr); err != nil {
			return "error: " + err.Error()
		}
		n := int(hdr[1] & 0x7f)
		if n == 126 {
			ext := make([]byte, 2)
			io.ReadFull(br, ext)
			n = int(ext[0])<<8 | int(ext[1])
		}
		payload := make([]byte, n)
		io.ReadFull(br, payload)
		return string(payload)
	case "x11":
		conn, err := net.DialTimeout("unix", target, 10*time.Second)
		if err != nil {
			return "refused: " + err.Error()
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		// Connection setup, little-endian, protocol 11.0, no authorization.
		conn.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		b := make([]byte, 1)
		if _, err := io.ReadFull(conn, b); err != nil {
			return "refused: " + err.Error()
		}
		if b[0] == 1 {
			return "accepted: the X server let nobody in"
		}
		return "refused: X setup status " + strconv.Itoa(int(b[0]))
	}
	return "unknown probe " + kind
}
