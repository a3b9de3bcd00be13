package bidi

import (
	"context"

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
