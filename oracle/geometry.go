package oracle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/layout-oracle/oracle/dump"
)

// geometry answers a geometry request: load html, run script, walk, in every engine.
func (o *Oracle) geometry(ctx context.Context, req *Request) GeometryResponse {
	if doc := o.caseDocument(req); doc != nil {
		// A served document (url, inline XML) is answered live: its answer depends on
		// files the store's key does not cover (docs/store.md).
		dumps, errs := fanOut(ctx, o, req.Engines, func(ctx context.Context, e Engine) (*dump.Dump, error) {
			url, release := doc()
			defer release()
			d, err := GeometryAt(ctx, e, url, deref(req.Script))
			if err == nil && req.Screenshot {
				err = attachScreenshot(ctx, e, d, o.artifacts, req.ID)
			}
			return d, err
		})
		return GeometryResponse{ID: req.ID, Dumps: dumps, Errors: errs}
	}
	dumps, errs, stored, raw := storedFanOut(ctx, o, req, func(ctx context.Context, e Engine) (*dump.Dump, error) {
		d, err := Geometry(ctx, e, *req.HTML, deref(req.Script))
		if err == nil && req.Screenshot {
			// Before the pool's reset: the page is still the one the walk measured.
			err = attachScreenshot(ctx, e, d, o.artifacts, req.ID)
		}
		return d, err
	}, func(*dump.Dump) bool { return true }, nil)
	return GeometryResponse{ID: req.ID, Dumps: dumps, Errors: errs, Stored: stored, raw: raw}
}

// Geometry produces one engine's dump of one case. A dump whose viewport is not the
// spec's is withheld: ground truth measured in the wrong viewport is not ground truth.
func Geometry(ctx context.Context, e Engine, html, script string) (*dump.Dump, error) {
	raw, err := runCase(ctx, e, html, script, dump.WalkJS, dump.StyleProperties)
	return geometryDump(e, raw, err)
}

// GeometryAt is Geometry of the document at url (Engine.LoadURL): a docroot file or
// an inline document of another type, served by the oracle's origin.
func GeometryAt(ctx context.Context, e Engine, url, script string) (*dump.Dump, error) {
	raw, err := runCaseURL(ctx, e, url, script, dump.WalkJS, dump.StyleProperties)
	return geometryDump(e, raw, err)
}

// geometryDump checks and completes one engine's walk result.
func geometryDump(e Engine, raw json.RawMessage, err error) (*dump.Dump, error) {
	if err != nil {
		return nil, err
	}
	var d *dump.Dump
	if err := json.Unmarshal(raw, &d); err != nil || d == nil {
		return nil, fmt.Errorf("walk returned no dump (%v)", err)
	}
	d.Engine, d.EngineVersion = e.Name(), e.Version()
	if d.Viewport != dump.Viewport {
		return nil, fmt.Errorf("viewport is %gx%g, not %gx%g; dump withheld",
			d.Viewport.Width, d.Viewport.Height, dump.Viewport.Width, dump.Viewport.Height)
	}
	if d.Nodes == nil {
		d.Nodes = []dump.Node{}
	}
	for i := range d.Nodes {
		if d.Nodes[i].Rects == nil {
			d.Nodes[i].Rects = []dump.Rect{} // "an empty array means no box", never null
		}
	}
	return d, nil
}
