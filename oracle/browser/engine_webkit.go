package browser

import "github.com/layout-oracle/oracle/oracle/browser/host"

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
