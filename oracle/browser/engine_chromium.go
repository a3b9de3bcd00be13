package browser

import (
	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// SystemChromium is Debian's Chromium, the route that works on machines without
// Playwright's browser downloads (docs/protocol.md, "Engines and routes").
const SystemChromium = "/usr/bin/chromium"

// ChromiumArgs are needed on a closed network: without the networking flags
// Chromium floods refused connections on a closed network. --no-sandbox is not among them:
// the browsers run as an unprivileged user with Chromium's sandbox on (sandbox.go),
// and only a Chromium left to run as root gets it (ChromiumArgsWith).
var ChromiumArgs = []string{
	"--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
}

// ChromiumArgsWith is ChromiumArgs plus extra, with --no-sandbox only where the browser
// runs as root (the browser user is missing), where Chromium refuses to start otherwise.
func ChromiumArgsWith(extra []string) []string {
	args := append([]string{}, ChromiumArgs...)
	if host.BrowserUser().Root() {
		args = append(args, "--no-sandbox")
	}
	return append(args, extra...)
}

var chromiumKnowledge = engineKnowledge{
	contentProcess: func(p host.ProcInfo) bool { return p.HasArg("--type=renderer") },
	sandbox: func(c, main host.ProcInfo) (string, string) {
		kind := "namespace sandbox (own user, pid and network namespaces) + seccomp-bpf"
		if c.UserNS == main.UserNS || c.PidNS == main.PidNS {
			return kind, "its renderer is in the browser's own user or pid namespace"
		}
		return kind, ""
	},
}
