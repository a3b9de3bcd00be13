package browser

import (
	"cmp"
	"path/filepath"

	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// SystemFirefox is Debian's Firefox ESR, driven over WebDriver BiDi (Playwright's
// channel moz-firefox): the route that works on machines without Playwright's
// browser downloads (docs/protocol.md, "Engines and routes").
const SystemFirefox = "/usr/bin/firefox-esr"

// FirefoxBuildFiles are the files a Firefox build's version comes from, on every
// route: the launcher exe ("": SystemFirefox), the libxul.so it loads beside it and
// its application.ini; ok is false when the launcher is not an ELF file.
func FirefoxBuildFiles(exe string) (files []string, ok bool) {
	exe = cmp.Or(exe, SystemFirefox)
	real, err := filepath.EvalSymlinks(exe)
	if err != nil || !host.IsELF(real) {
		return nil, false
	}
	dir := filepath.Dir(real)
	return []string{exe, filepath.Join(dir, "libxul.so"), filepath.Join(dir, "application.ini")}, true
}

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
