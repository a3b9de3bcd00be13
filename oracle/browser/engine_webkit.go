package browser

import "github.com/layout-oracle/oracle/oracle/browser/host"

// Debian's WebKitGTK (docs/protocol.md, "Engines and routes"): WebKitWebDriver from
// webkit2gtk-driver, driving the MiniBrowser of libwebkit2gtk-4.1-0.
const (
	SystemWebKitWebDriver = "/usr/bin/WebKitWebDriver"
	SystemMiniBrowser     = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
)

// WebKit has no system route through Playwright: stock WebKitGTK is driven over
// WebDriver (webdriver/webdriver.go), and Playwright's own build only where it is installed.
var webkitKnowledge = engineKnowledge{
	contentProcess: func(p host.ProcInfo) bool { return p.Cmdline0 == "WebKitWebProcess" },
	sandbox: func(c, main host.ProcInfo) (string, string) {
		kind := "bubblewrap sandbox (own user, pid and network namespaces) + seccomp-bpf"
		if c.UserNS == main.UserNS || c.PidNS == main.PidNS || c.NetNS == main.NetNS {
			return kind, "its web process is not in namespaces of its own (WebKitGTK's bubblewrap sandbox is off)"
		}
		return kind, ""
	},
}
