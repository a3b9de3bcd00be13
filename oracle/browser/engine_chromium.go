package browser

import (
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/mxschmitt/playwright-go"
)

// SystemChromium is Debian's Chromium, the route that works on machines without
// Playwright's browser downloads (docs/protocol.md, "Engines and routes").
const SystemChromium = "/usr/bin/chromium"

// ChromiumArgs are needed on a closed network: without the networking flags
// Chromium floods refused connections on a closed network. --no-sandbox is not among them:
// the browsers run as an unprivileged user with Chromium's sandbox on (sandbox.go),
// and only a Chromium left to run as root gets it (chromiumArgs).
var ChromiumArgs = []string{
	"--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
}

// chromiumArgs is ChromiumArgs plus extra, with --no-sandbox only where the browser
// runs as root (the browser user is missing), where Chromium refuses to start otherwise.
func chromiumArgs(extra []string) []string {
	args := append([]string{}, ChromiumArgs...)
	if host.BrowserUser().Root() {
		args = append(args, "--no-sandbox")
	}
	return append(args, extra...)
}

var chromiumKnowledge = engineKnowledge{
	systemExe: SystemChromium,
	launch: func(l *playwright.BrowserTypeLaunchOptions, opts PlaywrightOptions) {
		l.Args = chromiumArgs(opts.Args)
		// Playwright adds --no-sandbox unless told the sandbox is wanted.
		l.ChromiumSandbox = playwright.Bool(!host.BrowserUser().Root())
	},
	remoteLaunch: func(l map[string]any, opts PlaywrightOptions) {
		// The server's host decides the sandbox (Playwright adds --no-sandbox unless
		// chromiumSandbox is set): its user is not this process's to know.
		l["args"] = append(append([]string{}, ChromiumArgs...), opts.Args...)
	},
	settings: func(opts *PlaywrightOptions, s LaunchSettings) { opts.Args = s.ChromiumArgs },
	// No navBlank (newPageAfterNavigation's): Chromium's was tried, and with it the
	// emulation profile's virtual authenticator no longer answered credentials.create
	// (TestProbeEmulationProfile); its 15 ms a url case did not pay for an unexplained
	// break (cmd/bench/HISTORY.md).
	contentProcess: func(p host.ProcInfo) bool { return p.HasArg("--type=renderer") },
	sandbox: func(c, main host.ProcInfo) (string, string) {
		kind := "namespace sandbox (own user, pid and network namespaces) + seccomp-bpf"
		if c.UserNS == main.UserNS || c.PidNS == main.PidNS {
			return kind, "its renderer is in the browser's own user or pid namespace"
		}
		return kind, ""
	},
	// Everything, over CDP (measured on 156: docs/profiles.md). The sensors need
	// their permission, or a started sensor errors NotAllowedError.
	emulation: emulationKnowledge{geolocation: true,
		grants: []string{"accelerometer", "gyroscope", "magnetometer", "ambient-light-sensor"},
		page:   chromiumEmulation},
	evaluateWithoutGesture: true,
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
