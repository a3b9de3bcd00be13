package browser

import "github.com/mxschmitt/playwright-go"

// SystemChromium is Debian's Chromium, the route that works on machines without
// Playwright's browser downloads (../shared/ENGINES.md).
const SystemChromium = "/usr/bin/chromium"

// ChromiumArgs are needed on a closed network: without the networking flags
// Chromium floods refused connections (ENGINES.md). --no-sandbox is not among them:
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
	if browserUser().root() {
		args = append(args, "--no-sandbox")
	}
	return append(args, extra...)
}

var chromiumKnowledge = engineKnowledge{
	systemExe: SystemChromium,
	launch: func(l *playwright.BrowserTypeLaunchOptions, opts PlaywrightOptions) {
		l.Args = chromiumArgs(opts.Args)
		// Playwright adds --no-sandbox unless told the sandbox is wanted.
		l.ChromiumSandbox = playwright.Bool(!browserUser().root())
	},
	remoteLaunch: func(l map[string]any, opts PlaywrightOptions) {
		// The server's host decides the sandbox (Playwright adds --no-sandbox unless
		// chromiumSandbox is set): its user is not this process's to know.
		l["args"] = append(append([]string{}, ChromiumArgs...), opts.Args...)
	},
	settings:       func(opts *PlaywrightOptions, s LaunchSettings) { opts.Args = s.ChromiumArgs },
	contentProcess: func(p procInfo) bool { return p.hasArg("--type=renderer") },
	sandbox: func(c, main procInfo) (string, string) {
		kind := "namespace sandbox (own user, pid and network namespaces) + seccomp-bpf"
		if c.userNS == main.userNS || c.pidNS == main.pidNS {
			return kind, "its renderer is in the browser's own user or pid namespace"
		}
		return kind, ""
	},
}
