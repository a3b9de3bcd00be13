// Package browser is the core every browser route is written against: the Engine
// interface (engine.go) with the case program (inpage/case.js) every Load evaluates;
// what every route shares of the page contract (route.go); the launch settings and
// route choices (settings.go); what the oracle knows of each engine whatever the
// route (engines.go, engine_*.go); the sandbox check (sandbox.go); and what the oracle
// asks of any engine from outside (windows.go).
//
// The routes are packages of their own, each importing this one and none importing
// another: cdp (the system Chromium over the oracle's own CDP client) and bidi (the
// system Firefox over its own WebDriver BiDi client), both on ownclient; webdriver
// (WebKitGTK over W3C WebDriver, on an Xvfb it owns); playwright (Chromium and
// Firefox over playwright-go, Playwright's bundled builds, remote Playwright
// servers). Package routes launches one page of an engine by route; package
// environment is the pinned environment; package host is what the browsers need of
// the machine (the browser user, /proc, memory cgroups, Xvfb).
//
// It knows nothing of the protocol, pools or the store: package oracle builds the
// service on top of it.
package browser
