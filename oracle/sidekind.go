package oracle

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// sideKind is the oracle's side of a kind written beside its description
// (kinds.Oracle, kinds.Side), as one of the oracle's kinds whose answers are JSON
// text: validated, answered live or from the store, verified, bounded and checked as
// every kind is.
func sideKind(k kinds.Kind, side *kinds.Side) *kind[json.RawMessage] {
	return &kind[json.RawMessage]{
		desc: &kinds.Of[json.RawMessage]{Info: k.About(), Runs: func(runs []json.RawMessage) ([]string, error) {
			answers := make([][]byte, len(runs))
			for i, r := range runs {
				answers[i] = r
			}
			return k.Unstable(answers)
		}},
		kindInfo: kindInfo{what: side.What,
			validate: func(r *Request) error {
				if side.Validate == nil {
					return nil
				}
				return side.Validate(kinds.Case{HTML: r.HTML, URL: r.URL, Script: deref(r.Script)})
			},
			limit: func(*Oracle) int { return side.Limit },
		},
		start: func(ctx context.Context, o *Oracle, req *Request) (context.Context, func(context.Context, browser.Engine) (json.RawMessage, error)) {
			doc := o.caseDocument(req)
			return ctx, func(ctx context.Context, e browser.Engine) (json.RawMessage, error) {
				p := &sidePage{e: e, req: req, doc: doc}
				v, err := side.Run(ctx, p)
				if err != nil && (p.err == nil || !errors.Is(err, p.err)) {
					return nil, &caseError{msg: err.Error()} // the kind's reading of its result
				}
				return v, err
			}
		},
	}
}

// sidePage is one engine's page as a kind's Run sees it (kinds.Page).
type sidePage struct {
	e   browser.Engine
	req *Request
	doc func() (string, func())
	err error // Run's last error, the engine's or the case's
}

func (p *sidePage) Engine() string  { return p.e.Name() }
func (p *sidePage) Version() string { return p.e.Version() }

func (p *sidePage) Run(ctx context.Context, fn string, args ...any) (raw json.RawMessage, err error) {
	defer func() { p.err = err }()
	if p.doc != nil {
		url, release := p.doc()
		defer release()
		return runCaseURL(ctx, p.e, url, deref(p.req.Script), fn, args...)
	}
	if p.req.HTML == nil {
		return nil, caseErrorf("%s request needs \"html\" or \"url\"", p.req.Op)
	}
	return runCase(ctx, p.e, *p.req.HTML, deref(p.req.Script), fn, args...)
}
