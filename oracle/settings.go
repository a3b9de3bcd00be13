package oracle

import (
	"maps"
	"strings"

	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/trace"
)

// launchSettings is everything one engine's launch adds beyond its route: the launch
// profile's arguments and grants, the pinned environment (the same fonts, scrollbars
// and media features in every engine), the network guard, and the init scripts. Each
// concern contributes its own launchSettings from its own file; settingsFor merges
// them, so launchEngine has one place to read them from.
type launchSettings struct {
	ChromiumArgs  []string       // Chromium command-line flags
	FirefoxPrefs  map[string]any // Firefox user prefs
	WebKitArgs    []string       // MiniBrowser arguments (WebKitSettings properties), after --automation
	WebDriverCaps map[string]any // extra W3C capabilities of every WebKitGTK session
	Env           []string       // KEY=VALUE set for the browser processes (never the oracle's own)
	WebKitEnv     []string       // KEY=VALUE for WebKitGTK only, after Env (replacing its keys)
	Permissions   []string       // permission grants (Chromium, Playwright's WebKit)
	InitScripts   []string       // Playwright: run before any page script in every document
}

// merge adds o to s: lists append, maps are joined (o wins on a repeated key).
func (s *launchSettings) merge(o launchSettings) {
	s.ChromiumArgs = append(s.ChromiumArgs, o.ChromiumArgs...)
	s.WebKitArgs = append(s.WebKitArgs, o.WebKitArgs...)
	s.Env = append(s.Env, o.Env...)
	s.WebKitEnv = append(s.WebKitEnv, o.WebKitEnv...)
	s.Permissions = append(s.Permissions, o.Permissions...)
	s.InitScripts = append(s.InitScripts, o.InitScripts...)
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

// settingsFor is the merged launch settings every engine of this process gets.
func settingsFor(cfg Config) (launchSettings, error) {
	var s launchSettings
	env, err := environmentSettings()
	if err != nil {
		return s, err
	}
	s.merge(env) // first: a launch profile may still override a pinned pref
	s.merge(profileSettings(cfg.Profile))
	s.merge(launchSettings{InitScripts: []string{trace.RecorderJS}})
	s.merge(networkSettings(cfg.originHost, cfg.originPort)) // last: nothing may loosen the allowlist
	return s, nil
}

// profileSettings is what the launch profile adds.
func profileSettings(p profiles.Profile) launchSettings {
	return launchSettings{ChromiumArgs: p.ChromiumArgs, FirefoxPrefs: p.FirefoxPrefs,
		WebKitArgs: p.WebKitGTKArgs, Permissions: p.Permissions}
}

// withEnv is base with every KEY=VALUE of extra set, replacing base's own KEY.
func withEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	set := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}
