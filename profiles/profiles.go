// Package profiles holds the launch profiles of docs/dump-format.md
// ("Launch profiles"): chosen once at startup, applied to every engine.
package profiles

import (
	"fmt"
	"sort"
	"strings"
)

// Profile is what one launch profile adds to each engine's launch.
type Profile struct {
	Name string
	// ChromiumArgs are extra Chromium command-line flags.
	ChromiumArgs []string
	// FirefoxPrefs are Firefox user prefs.
	FirefoxPrefs map[string]any
	// WebKitGTKArgs are extra MiniBrowser arguments (WebKitSettings properties) for
	// the WebDriver route; Playwright's WebKit build takes Permissions instead.
	WebKitGTKArgs []string
	// Permissions are granted to every page (Chromium and Playwright's WebKit; WebDriver
	// classic has no grant call, see docs/profiles.md).
	Permissions []string
	// Emulation is the hardware emulated where an engine's route can (nil: none);
	// which engine applies what is the engine's knowledge (oracle/browser).
	Emulation *Emulation
}

// Default adds nothing: exactly what geometry dumps have always used, so cached ground
// truth keeps its meaning.
var Default = Profile{Name: "default"}

// media makes hardware-backed APIs deterministic (fake camera and microphone).
var media = Profile{
	Name: "media",
	ChromiumArgs: []string{
		"--use-fake-device-for-media-stream",
		"--use-fake-ui-for-media-stream",
		"--enable-unsafe-swiftshader",
	},
	FirefoxPrefs: map[string]any{
		"media.navigator.streams.fake":        true,
		"media.navigator.permission.disabled": true,
		// Known gap (spec): not enough for WebGL on software rendering; harmless.
		"webgl.disable-fail-if-major-performance-caveat": true,
	},
	// WebKitGTK's mock capture devices; the spec's WebKit row names Playwright's
	// build, which has no launch args for this and takes the permission grant.
	WebKitGTKArgs: []string{"--enable-media-stream=true", "--enable-mock-capture-devices=true"},
	// Needed even with the fake-device flags, or getUserMedia rejects NotAllowedError.
	Permissions: []string{"camera", "microphone"},
}

// EmulationProfile emulates sensors, a WebAuthn authenticator and a position with
// FixedEmulation's values, in each engine whose route offers them; every trace names
// what its engine applied ("emulated").
var EmulationProfile = Profile{Name: "emulation", Emulation: &FixedEmulation}

var byName = map[string]Profile{Default.Name: Default, media.Name: media, EmulationProfile.Name: EmulationProfile}

// Lookup returns the named profile or an error listing the known names.
func Lookup(name string) (Profile, error) {
	if p, ok := byName[name]; ok {
		return p, nil
	}
	return Profile{}, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the profiles, sorted.
func Names() []string {
	var names []string
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
