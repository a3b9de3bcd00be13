package bidi

import (
	"context"
	"embed"
	"io/fs"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/rs/zerolog"
)

// Route is the BiDi route's row in the route table (package routes).
var Route browser.Route = route{}

type route struct{}

func (route) Name() string      { return "bidi" }
func (route) Engines() []string { return []string{browser.Firefox} }
func (route) Help() string {
	return "the oracle's own WebDriver BiDi client, docs/bidi-route.md"
}
func (route) Emulates() bool { return false }

func (route) Launch(ctx context.Context, engine string, l browser.RouteLaunch, log zerolog.Logger) (browser.Engine, error) {
	s := l.Settings
	if s.Emulation != nil {
		return nil, browser.EngineErrorf(engine, "the launch profile's emulated hardware: %w", errNotOnRoute)
	}
	return launch(ctx, options{ExecutablePath: l.Exe, Prefs: s.FirefoxPrefs, Env: s.Env,
		MemoryCgroup: s.MemoryCgroup, MaxReply: s.MaxReply, InitScripts: s.InitScripts, BundledAbsent: l.Absent}, log)
}

func (route) BuildFiles(_, exe string) ([]string, bool) { return browser.FirefoxBuildFiles(exe) }

// programs are the in-page programs only this route runs, one file each under
// inpage/.
//
//go:embed inpage/*.js
var programs embed.FS

var (
	// preloadJS is a launch's init script as a preload function (@@SRC@@ its text).
	preloadJS = inpage.Read(programs, "inpage/preload.js")
	// locationStateJS reads the navigation's state from a sandbox (waitFor).
	locationStateJS = inpage.Read(programs, "inpage/location_state.js")
	// resetCheckJS is the reset's check: the core's, filled in (freshAndFocused).
	resetCheckJS = inpage.Fill(inpage.Read(programs, "inpage/reset_check.js"), "RESET_CHECK", browser.ResetCheckJS)
	hasFocusJS   = inpage.Read(programs, "inpage/has_focus.js")
)

func (route) Programs() fs.FS { return programs }
