package oracle

import "github.com/layout-oracle/oracle/oracle/browser"

// processSettings keeps a page's cases in the content process it has, instead of a
// new process per case. Every trace case runs on an origin of its own
// (<token>.localhost, oracle/origin), which for Chromium's site isolation and Firefox's
// Fission is a new site: each trace navigation started or took another renderer or
// content process (Firefox: realms destroyed and created twice, the navigation
// committing about 0.4 s after the response on the loaded machine), which made a
// trace cost 2-3x a geometry case in both engines (cmd/bench/HISTORY.md, "Trace: a new process per case").
//
// The per-case guarantees of docs/untrusted.md do not rest on processes: storage,
// cookies, caches and service workers are keyed by origin, which stays one per case,
// history and window.name are reset, and cases run one after another in a page,
// never at once. What is given up is the process boundary between two cases that
// follow each other in one page (a defence against a case reading another's memory
// through a side channel); the browsers' own sandboxes stay on (docs/sandbox.md).
// WebKitGTK has no per-site processes to turn off.
func processSettings() browser.LaunchSettings {
	return browser.LaunchSettings{
		// Chromium: no process per site (its field-trial switch; --site-per-process
		// is not on the command line).
		ChromiumArgs: []string{"--disable-site-isolation-trials"},
		// Firefox: Fission keeps its frame model, web content is not split by site
		// (0 = IsolateNothing).
		// One web content process per browser (a browser is one oracle page): the new
		// page Firefox gets after a trace or url case (playwright/playwright.go, Reset) then
		// reuses it instead of starting one (3 new processes for 3 traces without).
		FirefoxPrefs: map[string]any{"fission.webContentIsolationStrategy": 0,
			"dom.ipc.processCount": 1, "dom.ipc.processCount.webIsolated": 1},
	}
}
