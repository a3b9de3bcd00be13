package candidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	neturl "net/url"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"
)

// webDriver is --candidate-webdriver URL: any engine with a W3C WebDriver endpoint,
// scored with no adapter. It is the oracle's own WebDriver route
// (oracle/browser/webdriver, in its remote mode) on that endpoint: each session's
// window is set so the viewport is the contract's 800x600 (the window chrome
// measured and corrected), each case is written into about:blank by the oracle's
// case program and walked by the oracle's own walk (dump.WalkJS, oracle.Geometry),
// the page is checked before and reset after every case, and a wedged or lost
// session is replaced. The dump names the session's browserName and browserVersion.
// Up to Parallel sessions are open at once, the first at Open, the others when
// every open one is busy.
type webDriver struct {
	url     string
	opts    webdriver.Options
	timeout time.Duration
	max     int

	name, version string // the first session's browserName and browserVersion

	mu      sync.Mutex
	idle    []browser.Engine
	all     []browser.Engine
	opening int // sessions being opened
	closed  bool
	free    chan struct{} // a session was handed back
}

// webDriverLog is the route's log (its restarts, its dialogs); tests set it.
var webDriverLog = zerolog.Nop()

// openWebDriver opens the first session on the endpoint at url, with caps (a
// JSON object of W3C capabilities, "" for none) added to the route's own
// (unhandledPromptBehavior dismiss, pageLoadStrategy normal).
func openWebDriver(ctx context.Context, url, caps string, timeout time.Duration, parallel int) (*webDriver, error) {
	// Refused now, not after the launch's minutes of retries on a scheme-less URL.
	if u, err := neturl.Parse(url); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, &Error{Kind: "start", Msg: fmt.Sprintf("--candidate-webdriver %q: want an http:// or https:// URL with a host", url)}
	}
	opts := webdriver.Options{RemoteURL: url, AnyEngine: true}
	if caps != "" {
		if err := json.Unmarshal([]byte(caps), &opts.Capabilities); err != nil || opts.Capabilities == nil {
			return nil, fmt.Errorf("--candidate-capabilities: want a JSON object of W3C capabilities: %v", err)
		}
	}
	w := &webDriver{url: url, opts: opts, timeout: timeout, max: max(parallel, 1), free: make(chan struct{}, 1)}
	e, err := w.launch(ctx)
	if err != nil {
		return nil, err
	}
	w.idle, w.all = []browser.Engine{e}, []browser.Engine{e}
	w.name, w.version = e.Name(), e.Version()
	return w, nil
}

func (w *webDriver) launch(ctx context.Context) (browser.Engine, error) {
	lctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	e, err := webdriver.Launch(lctx, w.opts, webDriverLog)
	if err != nil {
		return nil, &Error{Kind: "start", Msg: fmt.Sprintf("a session on %s: %v", w.url, err)}
	}
	return e, nil
}

// Describe names the endpoint and the engine it serves.
func (w *webDriver) Describe() string {
	return fmt.Sprintf("webdriver: %s (%s %s)", w.url, w.name, w.version)
}

// Engine is the engine as its dumps name it: the first session's browserName and
// browserVersion.
func (w *webDriver) Engine() (name, version string) { return w.name, w.version }

// acquire is an idle session, a new one while fewer than max are open, or the
// next one handed back.
func (w *webDriver) acquire(ctx context.Context) (browser.Engine, error) {
	for {
		w.mu.Lock()
		switch {
		case w.closed:
			w.mu.Unlock()
			return nil, &Error{Kind: "start", Msg: "the WebDriver candidate is closed"}
		case len(w.idle) > 0:
			e := w.idle[len(w.idle)-1]
			w.idle = w.idle[:len(w.idle)-1]
			w.mu.Unlock()
			return e, nil
		case len(w.all)+w.opening < w.max:
			w.opening++
			w.mu.Unlock()
			e, err := w.launch(ctx)
			w.mu.Lock()
			w.opening--
			if err == nil {
				w.all = append(w.all, e)
			}
			w.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return e, nil
		}
		w.mu.Unlock()
		select {
		case <-w.free:
		case <-ctx.Done():
			return nil, &Error{Kind: "timeout", Msg: ctx.Err().Error()}
		}
	}
}

func (w *webDriver) release(e browser.Engine) {
	w.mu.Lock()
	w.idle = append(w.idle, e)
	w.mu.Unlock()
	select {
	case w.free <- struct{}{}:
	default:
	}
}

// Dump loads html in a session and walks it as the oracle walks its engines.
func (w *webDriver) Dump(ctx context.Context, html string) (*dump.Dump, error) {
	e, err := w.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer w.release(e)
	timeout := caseTimeout(ctx, w.timeout)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	// As the oracle's pool runs a case: the page checked before, reset after.
	if p, ok := e.(interface{ Prepare(context.Context) error }); ok {
		if err := p.Prepare(ctx); err != nil {
			return nil, w.caseError(ctx, timeout, err)
		}
	}
	d, err := oracle.Geometry(ctx, e, html, "")
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if rerr := e.Reset(rctx); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return nil, w.caseError(ctx, timeout, err)
	}
	// Through the contract's check, as every candidate's dump goes.
	b, err := json.Marshal(d)
	if err != nil {
		return nil, &Error{Kind: "dump", Msg: err.Error()}
	}
	return Decode(b)
}

func (w *webDriver) caseError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return &Error{Kind: "timeout", Msg: fmt.Sprintf("no dump within %v: %v", timeout, err)}
	}
	return &Error{Kind: "dump", Msg: "the WebDriver engine gave no dump: " + err.Error()}
}

// Close ends every session.
func (w *webDriver) Close() error {
	w.mu.Lock()
	w.closed = true
	all := w.all
	w.all = nil
	w.mu.Unlock()
	var errs []error
	for _, e := range all {
		if e != nil {
			errs = append(errs, e.Close())
		}
	}
	return errors.Join(errs...)
}
