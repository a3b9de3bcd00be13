package webdriver

import (
	"cmp"
	"context"
	"embed"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// Route is the WebDriver route's row in the route table (package routes): the
// system WebKitGTK, and remote W3C WebDriver endpoints (--webdriver).
var Route browser.Connector = route{}

type route struct{}

func (route) Name() string      { return "webdriver" }
func (route) Engines() []string { return []string{browser.WebKit} }
func (route) Help() string      { return "W3C WebDriver to WebKitWebDriver" }
func (route) Emulates() bool    { return false }

func (route) Launch(ctx context.Context, _ string, l browser.RouteLaunch, log zerolog.Logger) (browser.Engine, error) {
	s := l.Settings
	return Launch(ctx, Options{DriverPath: l.Exe, BrowserArgs: s.WebKitArgs, Capabilities: s.WebDriverCaps,
		Env: host.WithEnv(s.Env, s.WebKitEnv), MaxReply: s.MaxReply, MemoryCgroup: s.MemoryCgroup, BundledAbsent: l.Absent}, log)
}

// remoteLaunchWithin bounds opening one page on a remote WebDriver endpoint.
const remoteLaunchWithin = 2 * time.Minute

// Connect opens a session on a remote endpoint. A remote driver may never answer (a
// bare WebKitWebDriver asked for a second session was seen to leave the request
// hanging): the launch has a bound.
func (route) Connect(ctx context.Context, _ string, r browser.RemoteLaunch, log zerolog.Logger) (browser.Engine, error) {
	lctx, cancel := context.WithTimeout(ctx, remoteLaunchWithin)
	defer cancel()
	return Launch(lctx, Options{RemoteURL: r.URL, BrowserArgs: r.Settings.WebKitArgs,
		Capabilities: r.Settings.WebDriverCaps, MaxReply: r.Settings.MaxReply}, log)
}

// BuildFiles: the driver starts MiniBrowser, which reports the build of the
// libwebkit2gtk (and its JavaScriptCore) it loads from its library directory.
func (route) BuildFiles(_, exe string) ([]string, bool) {
	driver := cmp.Or(exe, browser.SystemWebKitWebDriver)
	lib := filepath.Dir(filepath.Dir(browser.SystemMiniBrowser))
	return []string{driver, browser.SystemMiniBrowser, filepath.Join(lib, "libwebkit2gtk-4.1.so.0"),
		filepath.Join(lib, "libjavascriptcoregtk-4.1.so.0")}, host.IsELF(driver)
}

// programs are the in-page programs only this route runs, one file each under
// inpage/ (scripts.go, window.go and reset.go read them).
//
//go:embed inpage/*.js
var programs embed.FS

func (route) Programs() fs.FS { return programs }
