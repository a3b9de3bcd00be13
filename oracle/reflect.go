package oracle

import (
	"context"
	"encoding/json"

	"github.com/layout-oracle/oracle/oracle/browser"
	reflection "github.com/layout-oracle/oracle/reflect"
)

// reflectCase answers a reflect request: load html, run script, read every probe.
func (o *Oracle) reflectCase(ctx context.Context, req *Request) ReflectResponse {
	if doc := o.caseDocument(req); doc != nil {
		// Served documents are answered live, never stored (docs/store.md).
		states, errs := fanOut(ctx, o, req.Engines, func(ctx context.Context, e browser.Engine) (*reflection.State, error) {
			url, release := doc()
			defer release()
			raw, err := runCaseURL(ctx, e, url, deref(req.Script), reflection.WalkJS, req.Probes, reflection.MaxStateBytes)
			return reflectState(e, raw, err)
		})
		return ReflectResponse{ID: req.ID, States: states, Errors: errs}
	}
	states, errs, stored, raw := storedFanOut(ctx, o, req, func(ctx context.Context, e browser.Engine) (*reflection.State, error) {
		return Reflect(ctx, e, deref(req.HTML), deref(req.Script), req.Probes)
	}, func(*reflection.State) bool { return true }, nil)
	return ReflectResponse{ID: req.ID, States: states, Errors: errs, Stored: stored, raw: raw}
}

// Reflect produces one engine's reflection dump of one case.
func Reflect(ctx context.Context, e browser.Engine, html, script string, probes []reflection.Probe) (*reflection.State, error) {
	raw, err := runCase(ctx, e, html, script, reflection.WalkJS, probes, reflection.MaxStateBytes)
	return reflectState(e, raw, err)
}

// reflectState reads one engine's reflection walk result.
func reflectState(e browser.Engine, raw json.RawMessage, err error) (*reflection.State, error) {
	if err != nil {
		return nil, err
	}
	obs, err := reflection.ParseWalk(raw)
	if err != nil {
		return nil, &caseError{msg: err.Error()}
	}
	return &reflection.State{Engine: e.Name(), EngineVersion: e.Version(), Observations: obs}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
