// Package ownclient is what the oracle's two own-client routes (package cdp for
// Chromium, package bidi for Firefox) do alike, written once: the browser process,
// its connection and health, the relaunch with backoff and the page reset's
// relaunch rule (Browser), and the calls waiting on a wire, with every reason a
// connection ends (PendingCalls).
package ownclient
