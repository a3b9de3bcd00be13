package playwright

import (
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/mxschmitt/playwright-go"
)

// engineKnowledge is what the Playwright route knows of one engine: how Playwright
// launches its system build, locally and on a remote server, which of the launch
// settings are its, its reset quirks, and what it applies of a launch profile's
// emulated hardware. Local and remote launching both read it; what every route
// knows of an engine (its content processes, its sandbox) is package browser's.
type engineKnowledge struct {
	// systemExe is Debian's build that Playwright drives on the system route; ""
	// when that route is not Playwright's (stock WebKitGTK is driven over WebDriver).
	systemExe string
	// channel is Playwright's launch channel for the system build ("": none), and
	// routeNote what a system launch's route says after the binary.
	channel, routeNote string
	// launch sets the engine's own options of a local launch of opts (any build).
	launch func(l *playwright.BrowserTypeLaunchOptions, opts Options)
	// remoteLaunch sets them in the launch options sent to a Playwright server.
	remoteLaunch func(l map[string]any, opts Options)
	// settings copies the engine's share of the launch settings into opts.
	settings func(opts *Options, s browser.LaunchSettings)
	// newPageAfterNavigation: the driver never navigates a page back to about:blank
	// after a case left it (Gecko adds a history entry): the reset stops on the
	// about:blank the page's own replace reached (navBlank), where a url case or
	// trace navigates on, and an html case gets a new page first, as does a reset
	// whose replace failed (Reset and Load say why). Without it, the reset ends with
	// the driver's navigation to about:blank (no entry from about:blank).
	newPageAfterNavigation bool
	// emulation is what its Playwright route applies of a launch profile's
	// emulated hardware (playwright/emulation.go).
	emulation emulationKnowledge
	// evaluateWithoutGesture: Playwright's Evaluate runs with a user gesture
	// (Chromium's Runtime.callFunctionOn with userGesture), which gives the case a
	// user activation no loaded page has: a local engine evaluates over a CDP session
	// of the page instead (evaluate, playwright/playwright.go). A remote server's relay refuses
	// CDP sessions (relayRefusedTypes), so a remote engine keeps Evaluate.
	evaluateWithoutGesture bool
}

var engineKnowledgeOf = map[string]*engineKnowledge{browser.Chromium: &chromiumKnowledge, browser.Firefox: &firefoxKnowledge}

// knowledgeOf is engine's knowledge; an unknown engine's (WebKit's: Playwright's
// bundled build needs nothing of its own) is empty.
func knowledgeOf(engine string) *engineKnowledge {
	if k, ok := engineKnowledgeOf[engine]; ok {
		return k
	}
	return &engineKnowledge{}
}

var chromiumKnowledge = engineKnowledge{
	systemExe: browser.SystemChromium,
	launch: func(l *playwright.BrowserTypeLaunchOptions, opts Options) {
		l.Args = browser.ChromiumArgsWith(opts.Args)
		// Playwright adds --no-sandbox unless told the sandbox is wanted.
		l.ChromiumSandbox = playwright.Bool(!host.BrowserUser().Root())
	},
	remoteLaunch: func(l map[string]any, opts Options) {
		// The server's host decides the sandbox (Playwright adds --no-sandbox unless
		// chromiumSandbox is set): its user is not this process's to know.
		l["args"] = append(append([]string{}, browser.ChromiumArgs...), opts.Args...)
	},
	settings: func(opts *Options, s browser.LaunchSettings) { opts.Args = s.ChromiumArgs },
	// No navBlank (newPageAfterNavigation's): Chromium's was tried, and with it the
	// emulation profile's virtual authenticator no longer answered credentials.create
	// (TestProbeEmulationProfile); its 15 ms a url case did not pay for an unexplained
	// break (cmd/bench/HISTORY.md).
	// Everything, over CDP (measured on 156: docs/profiles.md). The sensors need
	// their permission, or a started sensor errors NotAllowedError.
	emulation: emulationKnowledge{geolocation: true,
		grants: []string{"accelerometer", "gyroscope", "magnetometer", "ambient-light-sensor"},
		page:   chromiumEmulation},
	evaluateWithoutGesture: true,
}

var firefoxKnowledge = engineKnowledge{
	systemExe: browser.SystemFirefox,
	channel:   "moz-firefox",
	routeNote: " (WebDriver BiDi, channel moz-firefox)",
	launch: func(l *playwright.BrowserTypeLaunchOptions, opts Options) {
		if len(opts.FirefoxPrefs) > 0 {
			l.FirefoxUserPrefs = opts.FirefoxPrefs
		}
	},
	remoteLaunch: func(l map[string]any, opts Options) {
		if len(opts.FirefoxPrefs) > 0 {
			l["firefoxUserPrefs"] = opts.FirefoxPrefs
		}
	},
	settings: func(opts *Options, s browser.LaunchSettings) {
		opts.FirefoxPrefs = s.FirefoxPrefs
		opts.Permissions = nil // Firefox's fake media comes from prefs; it has no camera grant
	},
	newPageAfterNavigation: true,
	// The position only (BiDi emulation.setGeolocationOverride and
	// permissions.setPermission): there is no CDP session on this route, Playwright
	// sends no other BiDi command of ours, and Accelerometer is not implemented
	// (docs/profiles.md).
	emulation: emulationKnowledge{geolocation: true},
}

// chromiumEmulation gives page the virtual sensors and authenticator, on a CDP
// session of its own that lives as long as the page: the overrides are the
// session's, and hold across the page's navigations (a trace's origin). Any sensor
// override failing fails "sensors" as a whole.
func chromiumEmulation(bctx playwright.BrowserContext, page playwright.Page, em *profiles.Emulation) ([]string, func() error, error) {
	cdp, err := bctx.NewCDPSession(page)
	if err != nil {
		return nil, nil, fmt.Errorf("CDP session: %w", err)
	}
	var applied []string
	var errs []error
	sensors := len(em.Sensors) > 0
	for _, s := range em.Sensors {
		reading := map[string]any{}
		switch {
		case s.XYZ != nil:
			reading["xyz"] = map[string]any{"x": s.XYZ[0], "y": s.XYZ[1], "z": s.XYZ[2]}
		case s.Quaternion != nil:
			q := s.Quaternion
			reading["quaternion"] = map[string]any{"x": q[0], "y": q[1], "z": q[2], "w": q[3]}
		case s.Single != nil:
			reading["single"] = map[string]any{"value": *s.Single}
		}
		if _, err := cdp.Send("Emulation.setSensorOverrideEnabled", map[string]any{"enabled": true, "type": s.Type}); err != nil {
			errs, sensors = append(errs, fmt.Errorf("sensor %s: %w", s.Type, err)), false
			continue
		}
		if _, err := cdp.Send("Emulation.setSensorOverrideReadings", map[string]any{"type": s.Type, "reading": reading}); err != nil {
			errs, sensors = append(errs, fmt.Errorf("sensor %s reading: %w", s.Type, err)), false
		}
	}
	if sensors {
		applied = append(applied, profiles.EmulateSensors)
	}
	a := em.Authenticator
	var clear func() error
	if _, err := cdp.Send("WebAuthn.enable", map[string]any{"enableUI": false}); err != nil {
		errs = append(errs, fmt.Errorf("WebAuthn.enable: %w", err))
	} else if r, err := cdp.Send("WebAuthn.addVirtualAuthenticator", map[string]any{"options": map[string]any{
		"protocol": a.Protocol, "transport": a.Transport, "hasResidentKey": a.ResidentKey,
		"hasUserVerification": a.UserVerification, "isUserVerified": a.UserVerified,
		"automaticPresenceSimulation": true}}); err != nil {
		errs = append(errs, fmt.Errorf("WebAuthn.addVirtualAuthenticator: %w", err))
	} else {
		m, _ := r.(map[string]any)
		id, _ := m["authenticatorId"].(string)
		applied = append(applied, profiles.EmulateAuthenticator)
		clear = func() error {
			_, err := cdp.Send("WebAuthn.clearCredentials", map[string]any{"authenticatorId": id})
			return err
		}
	}
	return applied, clear, errors.Join(errs...)
}
