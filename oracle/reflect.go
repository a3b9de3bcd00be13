package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle/answerbound"
	"github.com/layout-oracle/oracle/oracle/browser"
	reflection "github.com/layout-oracle/oracle/reflect"
)

// reflectKind answers a reflect request: load html, run script, read every probe.
var reflectKind = &kind[*reflection.State]{
	desc: kinds.Reflect,
	kindInfo: kindInfo{what: "reflection state",
		validate: func(r *Request) error {
			if len(r.Probes) == 0 {
				return errors.New(`reflect request needs a non-empty "probes" array`)
			}
			for i, p := range r.Probes {
				if p.Selector == "" || p.Attr == "" {
					return fmt.Errorf("probes[%d] needs \"selector\" and \"attr\"", i)
				}
				if err := reflection.CheckSelector(p.Selector); err != nil {
					return fmt.Errorf("probes[%d]: %v", i, err)
				}
			}
			return nil
		},
		limit: func(*Oracle) int { return answerbound.Reflect() },
	},
	start: func(ctx context.Context, o *Oracle, req *Request) (context.Context, func(context.Context, browser.Engine) (*reflection.State, error)) {
		if doc := o.caseDocument(req); doc != nil {
			return ctx, func(ctx context.Context, e browser.Engine) (*reflection.State, error) {
				url, release := doc()
				defer release()
				raw, err := runCaseURL(ctx, e, url, deref(req.Script), reflection.WalkJS, req.Probes, reflection.MaxStateBytes)
				return reflectState(e, raw, err)
			}
		}
		return ctx, func(ctx context.Context, e browser.Engine) (*reflection.State, error) {
			return reflectCase(ctx, e, deref(req.HTML), deref(req.Script), req.Probes)
		}
	},
}

// The oracle answers reflect requests: its side of the kind, in the description.
func init() { reflectKind.attach() }

// reflectCase produces one engine's reflection dump of one case.
func reflectCase(ctx context.Context, e browser.Engine, html, script string, probes []reflection.Probe) (*reflection.State, error) {
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
