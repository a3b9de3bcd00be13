// Package webdriver is the route of WebKitGTK (MiniBrowser) over W3C WebDriver
// classic: WebKitWebDriver on an Xvfb the engine owns, or a remote endpoint
// (--webdriver); one Execute Script per case (docs/architecture.md, "What the
// WebDriver route sends").
package webdriver
