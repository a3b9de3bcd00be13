// Package bidi is the route of the system Firefox ESR over WebDriver BiDi, with the
// oracle's own client on one loopback WebSocket (--firefox-route=bidi, the default):
// one script.callFunction per case, no injected script (docs/bidi-route.md).
package bidi
