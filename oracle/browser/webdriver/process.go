package webdriver

// The WebKitWebDriver process (with MiniBrowser and its web processes in its process
// group): its environment, start, watchdog, readiness and kill, and its log tail.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// wdProc is one driver process and its session.
type wdProc struct {
	group    *host.Group // the driver, reaped in the background; nil: a remote endpoint
	watchdog *exec.Cmd
	watchW   *os.File // the watchdog kills the driver's group when this closes
	base     string   // http://127.0.0.1:port
	session  string   // guarded by the engine's mu
	out      *host.TailLog
	// endRemote, for a remote endpoint (cmd nil), deletes the session (kill).
	endRemote func()
}

// startDriver runs the driver on a free loopback port, in its own process group, and
// waits until /status says ready.
func (e *webDriverEngine) startDriver(ctx context.Context) (*wdProc, error) {
	if e.opts.RemoteURL != "" {
		return e.remoteDriver(ctx) // webdriver/remote.go
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	out := host.NewTailLog(e.log.With().Str("proc", "webkitwebdriver").Logger())
	cmd := exec.Command(e.opts.DriverPath, "--port="+strconv.Itoa(port), "--host=127.0.0.1")
	cmd.Env = e.driverEnv()
	cmd.Stdout = out // never the oracle's stdout: that is the protocol channel
	cmd.Stderr = out
	// The driver, MiniBrowser and its web and network processes run as the browser
	// user (host/user.go); WebKitGTK's bubblewrap sandbox then confines the web process.
	cmd.SysProcAttr = host.BrowserUser().SysProcAttr(proctree.WithParentDeath(&syscall.SysProcAttr{Setpgid: true}, syscall.SIGKILL))
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &wdProc{group: host.Reap(cmd), base: "http://127.0.0.1:" + strconv.Itoa(port), out: out}
	// No session yet, so no MiniBrowser: all it starts inherits the cgroup.
	if err := host.PlaceTree(e.opts.MemoryCgroup, []int{cmd.Process.Pid}); err != nil {
		e.log.Warn().Err(err).Msg("WebKitWebDriver left outside the engine's memory cgroup")
	}
	if err := p.startWatchdog(); err != nil {
		p.kill()
		return nil, fmt.Errorf("watchdog: %w", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ready, err := p.status(ctx, e.client)
		if ready {
			e.log.Debug().Int("pid", cmd.Process.Pid).Int("port", port).Msg("driver ready")
			return p, nil
		}
		select {
		case <-p.exited():
			return nil, fmt.Errorf("%s exited: %s", e.opts.DriverPath, out.Tail())
		case <-ctx.Done():
			p.kill()
			return nil, ctx.Err()
		case <-time.After(15 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("driver not ready within 20s (last: %v): %s", err, out.Tail())
		}
	}
}

// driverEnv is the process environment with the browser's display; the oracle's own
// environment is never changed.
func (e *webDriverEngine) driverEnv() []string {
	e.mu.Lock()
	ownX, display, authority := e.xvfb != nil, e.display, ""
	if ownX {
		authority = e.xvfb.Authority
	}
	e.mu.Unlock()
	env := make([]string, 0, len(os.Environ())+3)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "DISPLAY":
			continue
		case "WAYLAND_DISPLAY", "GDK_BACKEND":
			if ownX {
				continue // our Xvfb, not a compositor GTK would otherwise prefer
			}
		}
		env = append(env, kv)
	}
	env = host.WithEnv(env, e.opts.Env)
	env = host.WithEnv(env, host.BrowserUser().Env())
	env = append(env, "DISPLAY="+display)
	if ownX {
		env = host.WithEnv(env, []string{"GDK_BACKEND=x11", "XAUTHORITY=" + authority})
	}
	if os.Getenv("NO_AT_BRIDGE") == "" {
		env = append(env, "NO_AT_BRIDGE=1") // no accessibility bus to wait for
	}
	return env
}

// startWatchdog puts a shell into the driver's process group that kills the group
// when its stdin (a pipe only this process holds) reaches EOF, that is when the oracle
// dies by any means. Pdeathsig alone ends only the driver: MiniBrowser, its child,
// would be reparented and live on.
func (p *wdProc) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	wd := exec.Command("/bin/sh", "-c", "read x; kill -KILL 0")
	wd.Stdin = r
	// As the browser user, like the group it kills: no root process in that group.
	wd.SysProcAttr = host.BrowserUser().SysProcAttr(&syscall.SysProcAttr{Setpgid: true, Pgid: p.group.PID()})
	err = wd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return err
	}
	go func() { _ = wd.Wait() }()
	p.watchdog, p.watchW = wd, w
	return nil
}

// kill ends the driver's whole process group (driver, MiniBrowser, its web and
// network processes, the watchdog) and waits for the driver to be reaped.
func (p *wdProc) kill() {
	if p.group == nil { // a remote endpoint: end the session, nothing to kill here
		if p.endRemote != nil {
			p.endRemote()
		}
		return
	}
	p.group.Signal(syscall.SIGKILL, 5*time.Second)
	if p.watchW != nil {
		p.watchW.Close()
	}
}

// exited is closed once the driver has been reaped; nil (never ready) for a remote
// endpoint, which has no process here.
func (p *wdProc) exited() <-chan struct{} {
	if p.group == nil {
		return nil
	}
	return p.group.Exited()
}

func (p *wdProc) status(ctx context.Context, c *http.Client) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/status", nil)
	if err != nil {
		return false, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	var s struct {
		Value struct {
			Ready bool `json:"ready"`
		} `json:"value"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, commandReplyLimit)).Decode(&s); err != nil {
		return false, err
	}
	return s.Value.Ready, nil
}

// freeLoopbackPort asks the kernel for a free TCP port on 127.0.0.1. The driver binds
// it a moment later; a lost race shows as the driver exiting, and start retries.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
