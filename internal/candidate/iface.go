package candidate

import (
	"context"
	"errors"
	"time"

	"github.com/layout-oracle/oracle/dump"
)

// Candidate is the engine under test however it is run: a command per case
// (Command, --candidate-cmd), one long-lived process answering NDJSON requests
// (Server, --candidate-server), or a W3C WebDriver endpoint (WebDriver,
// --candidate-webdriver). triage and reduce call this and nothing else. Dump is
// safe to call from several goroutines at once; an error is an *Error.
type Candidate interface {
	// Dump is the candidate's dump of one case's HTML, decoded and checked
	// against the contract (docs/dump-format.md).
	Dump(ctx context.Context, html string) (*dump.Dump, error)
	// Describe names the candidate for a report, e.g. "server: CMD".
	Describe() string
	// Close ends whatever the candidate started.
	Close() error
}

// caseBoundKey carries a per-call bound on one case (WithCaseBound).
type caseBoundKey struct{}

// WithCaseBound returns ctx under which a Dump gives its case at most d, when d is
// below the candidate's own Timeout, and past it ends the case as a timeout does
// (a command's processes killed, a server killed and restarted). Reducing a hang
// uses it: each variant that still hangs costs this bound, not the full timeout.
func WithCaseBound(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, caseBoundKey{}, d)
}

// caseTimeout is own (a candidate's Timeout, 0: none) lowered to ctx's WithCaseBound.
func caseTimeout(ctx context.Context, own time.Duration) time.Duration {
	if d, ok := ctx.Value(caseBoundKey{}).(time.Duration); ok && d > 0 && (own <= 0 || d < own) {
		return d
	}
	return own
}

// Spec is how a candidate is chosen on a command line: exactly one of Cmd, Server
// and WebDriver is set.
type Spec struct {
	Cmd       string        // --candidate-cmd: run by sh -c once per case
	Server    string        // --candidate-server: run by sh -c once, NDJSON requests on stdin
	WebDriver string        // --candidate-webdriver: a W3C WebDriver endpoint's URL
	Caps      string        // --candidate-capabilities: JSON object of W3C capabilities (WebDriver only)
	Timeout   time.Duration // bound on one case
	Env       []string      // added to the command's environment (Cmd and Server)
	// Parallel is how many cases are in flight at once (WebDriver: sessions).
	Parallel int
}

// Set says how many of Cmd, Server and WebDriver are set.
func (s Spec) Set() int {
	n := 0
	for _, v := range []string{s.Cmd, s.Server, s.WebDriver} {
		if v != "" {
			n++
		}
	}
	return n
}

// Open starts the candidate s names (a WebDriver candidate opens its sessions
// now; a server starts with its first case).
func Open(ctx context.Context, s Spec) (Candidate, error) {
	if s.Set() != 1 {
		return nil, errors.New("name exactly one of --candidate-cmd, --candidate-server and --candidate-webdriver")
	}
	if s.Caps != "" && s.WebDriver == "" {
		return nil, errors.New("--candidate-capabilities goes with --candidate-webdriver")
	}
	switch {
	case s.Server != "":
		return &Server{Cmd: s.Server, Timeout: s.Timeout, Env: s.Env}, nil
	case s.WebDriver != "":
		return openWebDriver(ctx, s.WebDriver, s.Caps, s.Timeout, s.Parallel)
	}
	return &Command{Cmd: s.Cmd, Timeout: s.Timeout, Env: s.Env}, nil
}

// Describe is the command, as the report names it.
func (c *Command) Describe() string { return c.Cmd }

// Close does nothing: each run ended with its case.
func (c *Command) Close() error { return nil }
