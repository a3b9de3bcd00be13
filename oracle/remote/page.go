package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// StateOutOfService is a page's (and its endpoint's) state once the endpoint was
// taken out of service (ping's "endpoints"); its reason says why.
const StateOutOfService = "out-of-service"

// endpointStanding is the standing of the endpoint a Page is on, which all its pages share.
type endpointStanding interface {
	// Refuse takes the endpoint out of service for reason; the first reason stays.
	Refuse(reason string)
	// Refused is why the endpoint is out of service, "" while it may serve.
	Refused() string
}

// page is a page on a remote endpoint: the backend's Engine, plus the standing of
// the endpoint it belongs to, which a version change on reconnection takes out of
// service. It has no Sandbox: a remote host's processes are not in this /proc.
type page struct {
	browser.Engine
	ep endpointStanding
}

// NewPage is e, a page opened on the endpoint whose standing is ep.
func NewPage(e browser.Engine, ep endpointStanding) *page { return &page{Engine: e, ep: ep} }

// note refuses the endpoint when err says its build changed.
func (p *page) note(err error) error {
	if err != nil && errors.Is(err, browser.ErrVersionChanged) {
		p.ep.Refuse("refused on reconnection: " + browser.FirstLine(err))
	}
	return err
}

// Load, LoadURL, Visit and Reset are the backend's; a build change refuses the
// endpoint.
func (p *page) Load(ctx context.Context, html, fn string, args ...any) (json.RawMessage, error) {
	r, err := p.Engine.Load(ctx, html, fn, args...)
	return r, p.note(err)
}

func (p *page) LoadURL(ctx context.Context, u, fn string, args ...any) (json.RawMessage, error) {
	r, err := p.Engine.LoadURL(ctx, u, fn, args...)
	return r, p.note(err)
}

func (p *page) Visit(ctx context.Context, u, fn string, args ...any) (json.RawMessage, error) {
	r, err := p.Engine.Visit(ctx, u, fn, args...)
	return r, p.note(err)
}

func (p *page) Reset(ctx context.Context) error { return p.note(p.Engine.Reset(ctx)) }

// Health is the backend's, out of service once the endpoint is.
func (p *page) Health() browser.Health {
	refused := p.ep.Refused()
	if refused != "" {
		h := p.Engine.Health()
		h.State, h.Reason = StateOutOfService, refused
		return h
	}
	return p.Engine.Health()
}

// Prepare checks the page before a case as the backend does.
func (p *page) Prepare(ctx context.Context) error {
	if pr, ok := p.Engine.(interface{ Prepare(context.Context) error }); ok {
		return p.note(pr.Prepare(ctx))
	}
	return nil
}

// RunsInitScripts is the backend's: Playwright's pages get the recorder by init script.
func (p *page) RunsInitScripts() bool {
	i, ok := p.Engine.(interface{ RunsInitScripts() bool })
	return ok && i.RunsInitScripts()
}

// Keep is the backend's (browser.Keeper): false where its route keeps no page. The
// embedded Engine alone would hide it, and every remote page would reset after
// every inert case.
func (p *page) Keep() bool {
	k, ok := p.Engine.(browser.Keeper)
	return ok && k.Keep()
}

// Emulated is what the backend's route emulated for its page
// (browser.Emulated), which a trace names and compare groups engines by.
func (p *page) Emulated() []string { return browser.Emulated(p.Engine) }

// OpenWindows is the backend's (browser.OpenWindows).
func (p *page) OpenWindows(ctx context.Context) (pages, contexts int, err error) {
	return browser.OpenWindows(ctx, p.Engine)
}

// Screenshot is the backend's.
func (p *page) Screenshot(ctx context.Context) ([]byte, error) {
	if s, ok := p.Engine.(interface {
		Screenshot(context.Context) ([]byte, error)
	}); ok {
		return s.Screenshot(ctx)
	}
	return nil, fmt.Errorf("%s: this route takes no screenshots", p.Name())
}

// OutOfService says whether a page left service for good (it is a Page whose
// endpoint was refused): the pool then drops it instead of handing it out again.
func OutOfService(e browser.Engine) bool {
	p, ok := e.(*page)
	return ok && p.ep.Refused() != ""
}
