package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle/answerbound"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/trace"
)

// traceKind answers a trace request: serve the page from the oracle's origin, visit
// it in every engine, and collect the recorder's records.
var traceKind = &kind[*trace.Trace]{
	desc: kinds.Trace,
	kindInfo: kindInfo{what: "trace", keysID: true,
		validate: func(r *Request) error {
			if r.Script == nil {
				return errors.New(`trace request needs "script"`)
			}
			return nil
		},
		limit: func(o *Oracle) int { return answerbound.Trace(o.traceLimits.Bytes) },
		// Past its limits a trace is an error (never stored); within them the answer
		// is the same, but a trace stored under looser limits must not answer a
		// request that would now fail.
		walkExtra: func(o *Oracle) string {
			return fmt.Sprintf("/limits-%d-%d", o.traceLimits.Records, o.traceLimits.Bytes)
		},
	},
	start: func(ctx context.Context, o *Oracle, req *Request) (context.Context, func(context.Context, browser.Engine) (*trace.Trace, error)) {
		host := o.origin.NewHost()
		if servedDocument(req) {
			return ctx, func(ctx context.Context, e browser.Engine) (*trace.Trace, error) {
				return o.traceDocument(ctx, e, host, req)
			}
		}
		return ctx, func(ctx context.Context, e browser.Engine) (*trace.Trace, error) {
			return o.trace(ctx, e, host, idText(req.ID), deref(req.HTML), *req.Script)
		}
	},
	// A trace that ended by its own timeout (timed_out) depends on timing, like any
	// timeout, and is never stored.
	storable: func(t *trace.Trace) bool { return !t.TimedOut },
	together: sameCase,
	fault: func(c SelfCheck, engine string, t *trace.Trace) string {
		if t.TimedOut {
			return "trace timed out: the check's script never called trace.done()"
		}
		if c.Expect != nil {
			return strings.Join(c.Expect(engine, t), "; ")
		}
		return ""
	},
}

// The oracle answers trace requests: its side of the kind, in the description.
func init() { traceKind.attach() }

// sameCase serves a trace from the store only whole: every engine asked was stored,
// all from one case (one origin). The engines of a live trace share the case's
// origin, so what a case records of location.origin is unanimous; stored traces of
// two runs would each carry their own.
func sameCase(hits map[string][]byte, asked int) bool {
	if len(hits) != asked {
		return false
	}
	origin := ""
	for _, b := range hits {
		var t struct {
			Origin string `json:"origin"`
		}
		if json.Unmarshal(b, &t) != nil || t.Origin == "" {
			return false
		}
		if origin == "" {
			origin = t.Origin
		}
		if t.Origin != origin {
			return false
		}
	}
	return true
}

// trace produces one engine's trace of one case, served on host (the case's origin,
// origin.Server.NewHost). The served page holds the case's
// html only, with the recorder first where the engine has no init script; the script
// never enters the markup (so nothing in the html can turn it into text), it goes to
// the recorder with the call that collects the trace, and runs once the document has
// loaded. The recorder seals what it hands back with its key, which Decode checks.
func (o *Oracle) trace(ctx context.Context, e browser.Engine, host, id, html, script string) (*trace.Trace, error) {
	key, recorder := trace.InitKey, ""
	if !hasRecorderInitScript(e) {
		// A copy for this page alone: its key is in the page's text (until the
		// recorder removes its element), so it must open nothing but this page.
		key = trace.NewKey()
		recorder = trace.Recorder(key, &o.traceLimits)
	}
	run := trace.NewRun(script, key, o.traceLimits)
	url, release := o.origin.Register(host, id, html, recorder)
	defer release()
	raw, err := e.Visit(ctx, url, collectAndClearJS, run.Args()...)
	if err != nil {
		return nil, err
	}
	return o.decodeTrace(e, run, raw)
}

// decodeTrace is the trace of run's collected result raw in e, naming what e's
// route emulated for the page it ran on (browser.Emulated).
func (o *Oracle) decodeTrace(e browser.Engine, run *trace.Run, raw json.RawMessage) (*trace.Trace, error) {
	t, err := run.Decode(raw, e.Name(), e.Version(), o.profile)
	if err == nil {
		t.Emulated = browser.Emulated(e)
	}
	return t, err
}

// idText is the request id as the trace page's title shows it: a string id unquoted.
func idText(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}

// collectAndClearJS runs the case and collects the trace, then clears the origin's
// storage, which every trace page shares: a case's localStorage must not reach the
// next case (inpage/trace/collect_and_clear.js).
var collectAndClearJS = inpage.Fill(inpage.TraceCollectAndClear, "RUN", trace.RunJS)

// hasRecorderInitScript says whether the engine installs the recorder itself, before
// any page script (CDP's Page.addScriptToEvaluateOnNewDocument, BiDi's
// script.addPreloadScript, Playwright's addInitScript); WebDriver classic has no such hook.
func hasRecorderInitScript(e browser.Engine) bool {
	i, ok := e.(interface{ RunsInitScripts() bool })
	return ok && i.RunsInitScripts()
}
