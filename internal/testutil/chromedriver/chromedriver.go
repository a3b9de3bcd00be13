// Package chromedriver starts Debian's ChromeDriver for tests that score a
// WebDriver candidate (a package of its own: testutil is imported by the route
// packages' own tests, which this imports).
package chromedriver

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/browser/environment"
)

// path is Debian's chromium-driver, a WebDriver server separate from the
// oracle (scripts/setup.sh installs it).
const path = "/usr/bin/chromedriver"

// Start runs ChromeDriver on a free loopback port in the pinned
// environment (the browsers' fontconfig, locale and time zone: what a candidate
// engine gets), ended with the test, and returns its URL. It skips the test when
// ChromeDriver is not installed.
func Start(tb testing.TB) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("%s: %v (apt-get install chromium-driver)", path, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s, err := environment.Settings()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(path, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	cmd.Env = append(os.Environ(), s.Env...)
	out := &testutil.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its Chromiums with it
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if resp, err := http.Get(url + "/status"); err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not answer /status within 20s: %s", path, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Capabilities are the W3C capabilities that make ChromeDriver's Chromium
// the oracle's: Debian's Chromium with the switches the oracle's own Chromium
// launch gives (cdp.PlaywrightChromiumSwitches, browser.ChromiumArgsWith), headless
// as --headless=new, and --no-sandbox where it runs as root.
func Capabilities() string {
	var args []string
	for _, a := range append(append([]string{}, cdp.PlaywrightChromiumSwitches...), browser.ChromiumArgsWith(nil)...) {
		if a == "--headless" {
			a = "--headless=new"
		}
		args = append(args, a)
	}
	if os.Geteuid() == 0 && !strings.Contains(strings.Join(args, " "), "--no-sandbox") {
		args = append(args, "--no-sandbox")
	}
	b, _ := json.Marshal(map[string]any{"goog:chromeOptions": map[string]any{
		"binary": browser.SystemChromium, "args": args}})
	return string(b)
}
