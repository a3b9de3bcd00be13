package browser

// What every route shares beyond the Engine interface: the page contract's scripts
// and constants (a fresh page's check, the navigation to a document), the bounds on
// what a browser may send, and the small helpers each route's errors and logs use.
// Each route's package (cdp, bidi, webdriver, playwright) imports them from here, so
// no route reaches into another.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/inpage"
)

// ResetCheckJS is a reset's check of its about:blank: inpage.FreshCheck's (it
// clears window.name, which outlives navigations in the same window, and reads
// history.length) and document.hasFocus(), as a JSON array.
var ResetCheckJS = inpage.Fill(inpage.PlaywrightResetCheck, "FRESH_CHECK", inpage.FreshCheck)

// FirstHistoryLength is history.length on a fresh page's about:blank, in every engine
// (measured): what the first case the oracle ran saw, and every case must see.
const FirstHistoryLength = "1"

// ReplaceScript is the script that navigates a page to a url case's or trace's
// document: from a navBlank (fromNavBlank) it first gives that about:blank a
// no-referrer policy, since Firefox sends the origin it inherited as the referrer
// (TestACaseAfterATraceRunsInAFreshOpaqueDocument).
func ReplaceScript(fromNavBlank bool) string {
	if fromNavBlank {
		return inpage.ReplaceWithoutReferrer
	}
	return "u => { location.replace(u); }"
}

// RelaunchBackoff is the wait before each relaunch attempt of a crashed browser.
var RelaunchBackoff = []time.Duration{0, 500 * time.Millisecond, 2 * time.Second}

// DefaultMaxReply bounds a reply that carries a case's answer when the launch
// settings give no bound: MaxReplyFor the default --trace-max-bytes (64 MiB).
const DefaultMaxReply = 259 << 20

// MaxReplyFor is the bound of a reply carrying a case's answer (a dump, a trace:
// trace.go accepts 2x --trace-max-bytes plus 1 MiB, which JSON escaping may double
// again) for a --trace-max-bytes of traceBytes, never under DefaultMaxReply (a
// geometry dump has no bound of its own).
func MaxReplyFor(traceBytes int) int64 {
	return max(DefaultMaxReply, 2*(2*int64(traceBytes)+1<<20)+1<<20)
}

// maxVersionLen bounds a browser version string, which a remote endpoint supplies
// and every answer carries.
const maxVersionLen = 64

// CheckVersion accepts a version string of 1 to maxVersionLen printable ASCII
// characters.
func CheckVersion(v string) error {
	if v == "" {
		return errors.New("no browser version")
	}
	if len(v) > maxVersionLen {
		return fmt.Errorf("browser version of %d bytes (at most %d), starting %.64q", len(v), maxVersionLen, v)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return fmt.Errorf("browser version %q has a byte that is not printable ASCII", v)
		}
	}
	return nil
}

// ErrVersionChanged marks a reconnection (WebDriver restart, Playwright reconnect)
// that met another browser build than the page served before: a remote endpoint is
// then refused, never mixed in (oracle/remote.go).
var ErrVersionChanged = errors.New("browser version changed")

// ContextGone says an error message is the page's JavaScript context going away
// under a call, in V8's and the protocol's words: the CDP route reads it in CDP's
// generic server error, the Playwright route in its CDP session's error text.
func ContextGone(msg string) bool {
	return strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Inspected target navigated or closed") ||
		strings.Contains(msg, "Execution context was destroyed.")
}

// PlainJSON turns args into maps, slices and scalars by way of encoding/json:
// Playwright's argument serializer does not know Go structs or their JSON tags.
// Strings and string lists, the common arguments, pass through untouched: a case's
// script or markup can be megabytes.
func PlainJSON(args []any) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		switch a.(type) {
		case nil, string, []string, bool, float64, int:
			out[i] = a
			continue
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode argument %d: %w", i, err)
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// opKey carries what a route is doing, for its log lines: a case unless the
// context says otherwise (WithOp).
type opKey struct{}

// WithOp is ctx saying that what runs under it is op ("reset", "screenshot"), for
// the log lines of the route that runs it.
func WithOp(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, opKey{}, op)
}

// OpOf is what WithOp said ctx is for; "case" when nothing did.
func OpOf(ctx context.Context) string {
	if op, ok := ctx.Value(opKey{}).(string); ok {
		return op
	}
	return "case"
}

// FirstLine is err's message up to its first line break: what a log line or a
// health reason carries of a browser's multi-line error.
func FirstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
