package cdp

import (
	"context"
	"embed"
	"io/fs"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// Route is the CDP route's row in the route table (package routes).
var Route browser.Route = route{}

type route struct{}

func (route) Name() string      { return "cdp" }
func (route) Engines() []string { return []string{browser.Chromium} }
func (route) Help() string {
	return "the oracle's own Chrome DevTools Protocol client, docs/cdp-route.md"
}
func (route) Emulates() bool { return false }

func (route) Launch(ctx context.Context, engine string, l browser.RouteLaunch, log zerolog.Logger) (browser.Engine, error) {
	s := l.Settings
	if s.Emulation != nil {
		return nil, browser.EngineErrorf(engine, "the launch profile's emulated hardware: %w", errNotOnRoute)
	}
	return launch(ctx, options{ExecutablePath: l.Exe, Args: s.ChromiumArgs, Env: s.Env, Permissions: s.Permissions,
		InitScripts: s.InitScripts, MemoryCgroup: s.MemoryCgroup, MaxReply: s.MaxReply, BundledAbsent: l.Absent}, log)
}

// BuildFiles: the route runs Debian's browser itself, never its wrapper script.
func (route) BuildFiles(_, exe string) ([]string, bool) {
	run := Executable(exe)
	return []string{run}, host.IsELF(run)
}

// programs are the in-page programs only this route runs, one file each under
// inpage/.
//
//go:embed inpage/*.js
var programs embed.FS

// netErrorJS answers the network error's name on Chromium's error page of a
// navigation that failed ("" when it shows none).
var netErrorJS = inpage.Read(programs, "inpage/net_error.js")

func (route) Programs() fs.FS { return programs }
