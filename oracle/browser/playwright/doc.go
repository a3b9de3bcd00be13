// Package playwright is the route over playwright-go: Chromium and Firefox under
// --chromium-route=playwright and --firefox-route=playwright, the emulation profile,
// Playwright's bundled builds of all three engines, and remote Playwright servers
// (--connect, through a relay that checks every server message: docs/remote.md).
// Each local page has a Playwright driver of its own.
package playwright
