package browser

import (
	"github.com/mxschmitt/playwright-go"

	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// engineKnowledge is what the oracle knows of one engine beyond its protocol name:
// how Playwright launches its system build, locally and on a remote server, which
// of the launch settings are its, its reset quirks, and what its sandbox looks like.
// Each engine's value is in a file of its own (engine_chromium.go,
// engine_firefox.go, engine_webkit.go); local and remote launching both read it.
type engineKnowledge struct {
	// systemExe is Debian's build that Playwright drives on the system route; ""
	// when that route is not Playwright's (stock WebKitGTK is driven over WebDriver).
	systemExe string
	// channel is Playwright's launch channel for the system build ("": none), and
	// routeNote what a system launch's route says after the binary.
	channel, routeNote string
	// launch sets the engine's own options of a local launch of opts (any build).
	launch func(l *playwright.BrowserTypeLaunchOptions, opts PlaywrightOptions)
	// remoteLaunch sets them in the launch options sent to a Playwright server.
	remoteLaunch func(l map[string]any, opts PlaywrightOptions)
	// settings copies the engine's share of the launch settings into opts.
	settings func(opts *PlaywrightOptions, s LaunchSettings)
	// newPageAfterNavigation: the driver never navigates a page back to about:blank
	// after a case left it (Gecko adds a history entry): the reset stops on the
	// about:blank the page's own replace reached (navBlank), where a url case or
	// trace navigates on, and an html case gets a new page first, as does a reset
	// whose replace failed (Reset and Load say why). Without it, the reset ends with
	// the driver's navigation to about:blank (no entry from about:blank).
	newPageAfterNavigation bool
	// contentProcess says whether p runs web content: the processes the engine's
	// sandbox exists for.
	contentProcess func(p host.ProcInfo) bool
	// sandbox names the sandbox the content process c is in, and why it does not
	// count when it does not ("" when it does); main is the browser's main process.
	sandbox func(c, main host.ProcInfo) (kind, why string)
	// emulation is what its Playwright route applies of a launch profile's
	// emulated hardware (emulation.go).
	emulation emulationKnowledge
	// evaluateWithoutGesture: Playwright's Evaluate runs with a user gesture
	// (Chromium's Runtime.callFunctionOn with userGesture), which gives the case a
	// user activation no loaded page has: a local engine evaluates over a CDP session
	// of the page instead (evaluate, playwright.go). A remote server's relay refuses
	// CDP sessions (relayRefusedTypes), so a remote engine keeps Evaluate.
	evaluateWithoutGesture bool
}

var engineKnowledgeOf = map[string]*engineKnowledge{Chromium: &chromiumKnowledge, Firefox: &firefoxKnowledge, WebKit: &webkitKnowledge}

// knowledgeOf is engine's knowledge; an unknown engine's is empty.
func knowledgeOf(engine string) *engineKnowledge {
	if k, ok := engineKnowledgeOf[engine]; ok {
		return k
	}
	return &engineKnowledge{}
}
