// Package browser keeps the three browsers open and runs in-page programs in them:
// the Engine interface every route implements (engine.go), with the case program
// (case.js) that every Load evaluates; the system Chromium over the oracle's own CDP
// client (cdp*.go) and the system Firefox over its own WebDriver BiDi client
// (bidi*.go), both on ownbrowser*.go; WebKitGTK over W3C WebDriver (webdriver*.go),
// on an Xvfb it owns; Chromium and Firefox over playwright-go
// (playwright*.go) under --chromium-route=playwright, --firefox-route=playwright, the
// emulation profile, Playwright's bundled builds and remote Playwright servers; the
// sandbox check (sandbox.go); the pinned
// environment given to browser processes (environment/environment.go); and launching one page of
// an engine by route with its launch settings (routes/routes.go, settings.go). The Xvfb and
// its dialogs closer, the browser user, the /proc process tree and the memory
// cgroups are package host's (oracle/browser/host).
//
// It knows nothing of the protocol, pools or the store: package oracle builds the
// service on top of it, and cmd/bench launches engines from it directly.
package browser
