package browser

import (
	"maps"

	"github.com/layout-oracle/oracle/profiles"
)

// LaunchSettings is everything one engine's launch adds beyond its route: the launch
// profile's arguments and grants, the pinned environment (the same fonts, scrollbars
// and media features in every engine), the network guard, and the init scripts. Each
// concern contributes its own LaunchSettings from its own file; settingsFor merges
// them, so Launch has one place to read them from.
type LaunchSettings struct {
	ChromiumArgs  []string       // Chromium command-line flags
	FirefoxPrefs  map[string]any // Firefox user prefs
	WebKitArgs    []string       // MiniBrowser arguments (WebKitSettings properties), after --automation
	WebDriverCaps map[string]any // extra W3C capabilities of every WebKitGTK session
	Env           []string       // KEY=VALUE set for the browser processes (never the oracle's own)
	WebKitEnv     []string       // KEY=VALUE for WebKitGTK only, after Env (replacing its keys)
	Permissions   []string       // permission grants (Chromium, Playwright's WebKit)
	InitScripts   []string       // Playwright: run before any page script in every document
	MaxReply      int64          // WebDriver: Execute Script reply bound in bytes; 0: defaultMaxReply
	// Emulation is the launch profile's emulated hardware (nil: none); each engine
	// applies what its route can (playwright/emulation.go).
	Emulation *profiles.Emulation
	// MemoryCgroup is the cgroup.procs file of the engine's memory cgroup
	// (host/memlimit.go); "": unbounded.
	MemoryCgroup string
}

// Merge adds o to s: lists append, maps are joined (o wins on a repeated key).
func (s *LaunchSettings) Merge(o LaunchSettings) {
	s.ChromiumArgs = append(s.ChromiumArgs, o.ChromiumArgs...)
	s.WebKitArgs = append(s.WebKitArgs, o.WebKitArgs...)
	s.Env = append(s.Env, o.Env...)
	s.WebKitEnv = append(s.WebKitEnv, o.WebKitEnv...)
	s.Permissions = append(s.Permissions, o.Permissions...)
	s.InitScripts = append(s.InitScripts, o.InitScripts...)
	if o.MaxReply > 0 {
		s.MaxReply = o.MaxReply
	}
	if o.MemoryCgroup != "" {
		s.MemoryCgroup = o.MemoryCgroup
	}
	if o.Emulation != nil {
		s.Emulation = o.Emulation
	}
	if len(o.FirefoxPrefs) > 0 {
		if s.FirefoxPrefs == nil {
			s.FirefoxPrefs = map[string]any{}
		}
		maps.Copy(s.FirefoxPrefs, o.FirefoxPrefs)
	}
	if len(o.WebDriverCaps) > 0 {
		if s.WebDriverCaps == nil {
			s.WebDriverCaps = map[string]any{}
		}
		maps.Copy(s.WebDriverCaps, o.WebDriverCaps)
	}
}

// ProfileSettings is what the launch profile adds.
func ProfileSettings(p profiles.Profile) LaunchSettings {
	return LaunchSettings{ChromiumArgs: p.ChromiumArgs, FirefoxPrefs: p.FirefoxPrefs,
		WebKitArgs: p.WebKitGTKArgs, Permissions: p.Permissions, Emulation: p.Emulation}
}

// Browser routes, chosen by --browsers.
const (
	RouteSystem     = "system"     // Debian's builds, each over its route (Routes.Resolve: --chromium-route, --firefox-route)
	RoutePlaywright = "playwright" // the Bundler's builds of all three: Playwright's (needs `playwright install`)
	RouteAuto       = "auto"       // per engine, the bundled build where installed, else the system one
)
