// Package testutil is what the tests against the real browsers share: one way to
// honour -short. `make unit` runs every package with -short, so a browser test
// that does not call NeedsBrowsers shows up there as a slow or failing test.
package testutil

import "testing"

// SkipMessage is the one message every browser test skips with under -short.
const SkipMessage = "drives the real browsers; -short runs the pure tests only"

// NeedsBrowsers skips tb under -short: tb drives the real browsers (or an oracle
// that does). Call it first, before anything is launched.
func NeedsBrowsers(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip(SkipMessage)
	}
}
