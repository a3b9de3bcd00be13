// The launch profile's emulated hardware (profiles.Emulation) on the Playwright
// route: the context takes the position and the permission grants, each new page its
// engine's page-level emulation (Chromium's CDP), and the engine reports what its
// current page got, for the trace's "emulated". What each engine applies is its
// knowledge (engine_<name>.go); docs/profiles.md has the table.

package playwright

import (
	"slices"

	"github.com/layout-oracle/oracle/profiles"
	"github.com/mxschmitt/playwright-go"
)

// emulationKnowledge is what one engine's Playwright route can emulate.
type emulationKnowledge struct {
	// geolocation: the context's geolocation option and grant reach the page.
	geolocation bool
	// grants are the permissions the page-level emulation needs.
	grants []string
	// page applies the page-level emulation to a new page and returns what it
	// applied, and a function that clears what a case left in it (nil: nothing).
	page func(bctx playwright.BrowserContext, p playwright.Page, em *profiles.Emulation) (applied []string, clear func() error, err error)
}

// pageEmulation is what the emulation applied to one page.
type pageEmulation struct {
	applied []string // sorted
	clear   func() error
}

// contextEmulation is the geolocation option and the permission grants of the
// engine's context under its launch profile (none without an emulation).
func (e *playwrightEngine) contextEmulation() (*playwright.Geolocation, []string) {
	em, k := e.opts.Emulation, knowledgeOf(e.name).emulation
	if em == nil {
		return nil, nil
	}
	grants := append([]string(nil), k.grants...)
	if !k.geolocation {
		return nil, grants
	}
	g := em.Geolocation
	return &playwright.Geolocation{Latitude: g.Latitude, Longitude: g.Longitude, Accuracy: playwright.Float(g.Accuracy)},
		append(grants, "geolocation")
}

// newPage opens a page in bctx, tracks it, and applies the page-level emulation. A
// page whose emulation failed still serves, and says so: its trace lists only what
// it got.
func (e *playwrightEngine) newPage(bctx playwright.BrowserContext) (playwright.Page, error) {
	p, err := bctx.NewPage()
	if err != nil {
		return nil, err
	}
	e.trackPage(p)
	em, k := e.opts.Emulation, knowledgeOf(e.name).emulation
	if em == nil {
		return p, nil
	}
	pe := &pageEmulation{}
	if k.geolocation {
		pe.applied = append(pe.applied, profiles.EmulateGeolocation)
	}
	if k.page != nil {
		applied, clear, err := k.page(bctx, p, em)
		if err != nil {
			e.log.Warn().Str("engine", e.name).Err(err).Msg("page emulation failed; this page's traces do not list it")
		}
		pe.applied, pe.clear = append(pe.applied, applied...), clear
	}
	slices.Sort(pe.applied)
	e.pages.emulated.Store(p, pe)
	return p, nil
}

// currentEmulation is what the emulation applied to the page the last call ran on
// (nil: no page, or nothing applied).
func (e *playwrightEngine) currentEmulation() *pageEmulation {
	page := e.currentPage()
	if page == nil {
		return nil
	}
	if v, ok := e.pages.emulated.Load(page); ok {
		return v.(*pageEmulation)
	}
	return nil
}

// Emulated is what the launch profile's emulation applied to the page the last
// call ran on (nil: nothing), for that call's trace.
func (e *playwrightEngine) Emulated() []string {
	if pe := e.currentEmulation(); pe != nil {
		return slices.Clone(pe.applied)
	}
	return nil
}

// clearCredentials removes what a case stored in the page's virtual authenticator,
// so that each case meets it as the first did and credentials do not pile up over
// the process lifetime. No later case could use them anyway: rp.id is the case's own
// host, and Chromium refuses the shared "localhost" (TestEmulationProfileAppliesFixedValues).
func (e *playwrightEngine) clearCredentials() {
	if pe := e.currentEmulation(); pe != nil && pe.clear != nil {
		if err := pe.clear(); err != nil {
			e.log.Warn().Str("engine", e.name).Err(err).Msg("clear the virtual authenticator's credentials")
		}
	}
}
