package browser

import (
	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// SystemFirefox is Debian's Firefox ESR, driven over WebDriver BiDi (Playwright's
// channel moz-firefox): the route that works on machines without Playwright's
// browser downloads (docs/protocol.md, "Engines and routes").
const SystemFirefox = "/usr/bin/firefox-esr"

var firefoxKnowledge = engineKnowledge{
	contentProcess: func(p host.ProcInfo) bool { return p.HasArg("-contentproc") && p.HasArg("-isForBrowser") },
	sandbox: func(c, main host.ProcInfo) (string, string) {
		kind := "content sandbox: seccomp-bpf"
		if c.UserNS != main.UserNS {
			kind += " + own user namespace"
		}
		if c.NetNS != main.NetNS {
			kind += " + own network namespace"
		}
		return kind, ""
	},
}
