// Package routes is the route table: every route the oracle drives a page over,
// named once (wptrunner's product files are the model). A route is a package that
// exports a browser.Route (cdp, bidi, webdriver, playwright); its row here is all
// the oracle needs to offer it: the --ENGINE-route flags, their help and validation,
// the launch, the build fingerprint and the endpoint protocols are read from the
// rows (browser.Routes). Only the programs' wiring imports this package; the routes
// know nothing of each other.
package routes

import (
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/bidi"
	"github.com/layout-oracle/oracle/oracle/browser/cdp"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"
)

// Table is the route table, in the order the auto choice takes (browser.Routes.Resolve):
// an engine's own client of its system build before Playwright, which also runs the
// bundled builds and serves a launch profile's emulated hardware.
var Table = browser.Routes{
	cdp.Route,
	bidi.Route,
	webdriver.Route,
	playwright.Route,
}
