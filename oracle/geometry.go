package oracle

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sync/atomic"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle/answerbound"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/inert"
)

// geometryKind answers a geometry request (no "op"): load html or navigate to url,
// run script, walk, in every engine.
var geometryKind = &kind[*dump.Dump]{
	desc: kinds.Geometry,
	kindInfo: kindInfo{what: "dump", screenshot: true,
		validate: func(r *Request) error {
			if r.HTML == nil && r.URL == nil {
				return errors.New(`geometry request needs "html" or "url" (or name an "op")`)
			}
			return nil
		},
		limit: func(o *Oracle) int { return answerbound.Geometry(o.dumpMaxNodes) },
	},
	start: func(ctx context.Context, o *Oracle, req *Request) (context.Context, func(context.Context, browser.Engine) (*dump.Dump, error)) {
		shot := func(ctx context.Context, e browser.Engine, d *dump.Dump, err error) (*dump.Dump, error) {
			if err == nil && req.Screenshot {
				// Before the pool's reset: the page is still the one the walk measured.
				err = attachScreenshot(ctx, e, d, o.artifacts, req.ID)
			}
			return d, err
		}
		if doc := o.caseDocument(req); doc != nil {
			return ctx, func(ctx context.Context, e browser.Engine) (*dump.Dump, error) {
				url, release := doc()
				defer release()
				d, err := geometryAt(ctx, e, url, deref(req.Script), o.dumpMaxNodes)
				return shot(ctx, e, d, err)
			}
		}
		var allowed []string
		if o.inertReuse && deref(req.Script) == "" {
			var why string
			if allowed, why = inert.Judge(*req.HTML); allowed != nil {
				ctx = withInert(ctx)
			} else {
				o.log.Trace().Str("why", why).Msg("not inert: a new document")
			}
		}
		return ctx, func(ctx context.Context, e browser.Engine) (*dump.Dump, error) {
			if isInert(ctx) {
				// The pool measures it again without the mark if the check fails.
				d, err := geometryInert(ctx, e, *req.HTML, allowed, o.dumpMaxNodes)
				return shot(ctx, e, d, err)
			}
			d, err := geometryLimited(ctx, e, *req.HTML, deref(req.Script), o.dumpMaxNodes)
			return shot(ctx, e, d, err)
		}
	},
}

// The oracle answers geometry requests: its side of the kind, in the description.
func init() { geometryKind.attach() }

// Geometry produces one engine's dump of one case. A dump whose viewport is not the
// spec's is withheld: ground truth measured in the wrong viewport is not ground truth.
func Geometry(ctx context.Context, e browser.Engine, html, script string) (*dump.Dump, error) {
	return geometryLimited(ctx, e, html, script, DefaultDumpMaxNodes)
}

// DefaultDumpMaxNodes is --dump-max-nodes' default (answerbound's, which bounds a
// candidate's dump by it too).
const DefaultDumpMaxNodes = answerbound.DefaultDumpMaxNodes

// geometryLimited is Geometry with the walk bounded by maxNodes elements (and 4 boxes
// and 512 bytes of style text per allowed element, inpage/dump/walk.js): past it, the
// engine's answer is an error naming the bound, and the page never sends the rest.
func geometryLimited(ctx context.Context, e browser.Engine, html, script string, maxNodes int) (*dump.Dump, error) {
	maxNodes, args := walkArgs(maxNodes)
	raw, err := runCase(ctx, e, html, script, dump.WalkJS, args...)
	return geometryDump(e, raw, err, maxNodes)
}

// walkArgs are the geometry walk's arguments for maxNodes (DefaultDumpMaxNodes when
// it is not positive), and that bound.
func walkArgs(maxNodes int) (int, []any) {
	if maxNodes <= 0 {
		maxNodes = DefaultDumpMaxNodes
	}
	return maxNodes, []any{dump.StyleProperties, maxNodes, answerbound.StyleBytesPerNode, answerbound.TagBytesPerNode}
}

// geometryInert is geometryLimited of an inert case, checked in the engine against
// allowed (runInertCase): a failed check is an *inertCheckFailed.
func geometryInert(ctx context.Context, e browser.Engine, html string, allowed []string, maxNodes int) (*dump.Dump, error) {
	maxNodes, args := walkArgs(maxNodes)
	raw, err := runInertCase(ctx, e, html, allowed, dump.WalkJS, args...)
	return geometryDump(e, raw, err, maxNodes)
}

// geometryAt is geometryLimited of the document at url (Engine.LoadURL): a docroot
// file or an inline document of another type, served by the oracle's origin.
func geometryAt(ctx context.Context, e browser.Engine, url, script string, maxNodes int) (*dump.Dump, error) {
	maxNodes, args := walkArgs(maxNodes)
	raw, err := runCaseURL(ctx, e, url, script, dump.WalkJS, args...)
	return geometryDump(e, raw, err, maxNodes)
}

// geometryDump checks and completes one engine's walk result.
func geometryDump(e browser.Engine, raw json.RawMessage, err error, maxNodes int) (*dump.Dump, error) {
	if err != nil {
		return nil, err
	}
	var over struct {
		What string `json:"overLimit"`
	}
	if json.Unmarshal(raw, &over) == nil && over.What != "" {
		switch over.What {
		case "nodes":
			return nil, caseErrorf("the dump exceeded --dump-max-nodes=%d elements", maxNodes)
		case "boxes":
			return nil, caseErrorf("the dump exceeded %d boxes (4 per --dump-max-nodes=%d)", 4*maxNodes, maxNodes)
		case "tag names":
			return nil, caseErrorf("the dump exceeded %d bytes of tag names (%d per --dump-max-nodes=%d)", answerbound.TagBytesPerNode*maxNodes, answerbound.TagBytesPerNode, maxNodes)
		default:
			return nil, caseErrorf("the dump exceeded %d bytes of %s (%d per --dump-max-nodes=%d)", answerbound.StyleBytesPerNode*maxNodes, over.What, answerbound.StyleBytesPerNode, maxNodes)
		}
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

// screenshotter is an Engine that can capture its viewport as a PNG, as the page
// is at the moment of the call: Geometry calls it right after the walk, before the
// pool's reset, so picture and boxes describe the same settled page.
type screenshotter interface {
	Screenshot(ctx context.Context) ([]byte, error)
}

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// screenshotSeq numbers the files under --screenshot-dir, so that two cases with the
// same id (or ids that sanitize alike) never share a file. A number whose file an
// earlier run (or another oracle) left is skipped, never written over.
var screenshotSeq atomic.Uint64

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// attachScreenshot takes e's screenshot and puts it into d: base64 in d.Screenshot,
// or, with an screenshot directory, a file there named in d.ScreenshotFile.
func attachScreenshot(ctx context.Context, e browser.Engine, d *dump.Dump, artifacts string, id json.RawMessage) error {
	s, ok := e.(screenshotter)
	if !ok {
		return fmt.Errorf("%s: this route cannot take screenshots", e.Name())
	}
	png, err := s.Screenshot(ctx)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if len(png) > answerbound.MaxScreenshot {
		return fmt.Errorf("screenshot: the PNG is %d bytes, over the %d a screenshot may have", len(png), answerbound.MaxScreenshot)
	}
	if !bytes.HasPrefix(png, pngMagic) {
		return errors.New("screenshot: the engine returned something that is not a PNG")
	}
	if artifacts == "" {
		d.Screenshot = base64.StdEncoding.EncodeToString(png)
		return nil
	}
	name := unsafeName.ReplaceAllString(string(id), "_")
	if len(name) > 64 {
		name = name[:64]
	}
	// Through package outdir: a name already in the directory that is a symlink or
	// not a regular file (the names are predictable) is refused, not written through.
	od, err := outdir.Open(artifacts)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	defer od.Close()
	var file string
	for {
		file = fmt.Sprintf("%06d-%s-%s.png", screenshotSeq.Add(1), name, e.Name())
		err := od.WriteNew(file, png)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("screenshot: %w", err)
		}
	}
	d.ScreenshotFile = od.Join(file)
	return nil
}
