package browser

import (
	"context"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// OpenWindows counts what e's browser has open: pages and contexts (Playwright),
// window handles and one session (WebDriver), top-level browsing contexts and one
// session (BiDi), page targets and browser contexts (CDP). The oracle's isolation
// tests use it to see, from outside the page, what a case left behind. Each route
// counts its own (its engine's OpenWindows method).
func OpenWindows(ctx context.Context, e Engine) (pages, contexts int, err error) {
	if w, ok := e.(interface {
		OpenWindows(context.Context) (pages, contexts int, err error)
	}); ok {
		return w.OpenWindows(ctx)
	}
	return 0, 0, fmt.Errorf("%s: its route counts no windows (%T)", e.Name(), e)
}

// Emulated is what the launch profile's emulation applied to e's page in its last
// call (nil: nothing; an engine whose route emulates none), which a trace names and
// compare groups engines by. Each route that emulates says it (its engine's Emulated
// method).
func Emulated(e Engine) []string {
	if em, ok := e.(interface{ Emulated() []string }); ok {
		return em.Emulated()
	}
	return nil
}

// ContentProcesses are the pids of a Playwright, CDP or BiDi engine's content processes
// (Chromium's renderers, Firefox's web content; host.ProcessTree and contentProcess, as the
// sandbox check finds them); nil for WebDriver's. The oracle's process-model test counts them.
func ContentProcesses(e Engine) map[int]bool {
	r, ok := e.(interface{ ProcessRoots() []int })
	if !ok {
		return nil
	}
	out := map[int]bool{}
	for _, p := range host.ProcessTree(r.ProcessRoots()) {
		if contentProcess(e.Name(), p) {
			out[p.PID] = true
		}
	}
	return out
}

// BundledAbsent is, for an engine the auto route launched from the system build, a
// path whose absence made it so: Playwright's builds directory where that does not
// exist (playwright.NoBundledBuilds: no driver is started only to look), else the
// path where the Playwright driver looked for the bundled build and found none; ""
// for any other route. While that path does not exist, the auto route chooses the
// system build again (the oracle's warm start relies on it: oracle/warmstart.go).
func BundledAbsent(e Engine) string {
	if b, ok := e.(interface{ BundledAbsent() string }); ok {
		return b.BundledAbsent()
	}
	return ""
}
