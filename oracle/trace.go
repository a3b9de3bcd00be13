package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/layout-oracle/oracle/trace"
)

// traceCase answers a trace request: serve the page from the oracle's origin, visit
// it in every engine, and collect the recorder's records.
func (o *Oracle) traceCase(ctx context.Context, req *Request) TraceResponse {
	traces, errs := fanOut(ctx, o, req.Engines, func(ctx context.Context, e Engine) (*trace.Trace, error) {
		return o.Trace(ctx, e, idText(req.ID), deref(req.HTML), *req.Script)
	})
	return TraceResponse{ID: req.ID, Traces: traces, Errors: errs}
}

// Trace produces one engine's trace of one case. The page is the case's html with its
// script as the last element of <body>, so the script runs after the html has been
// parsed, and after the recorder, which comes first: by init script where the engine
// has one, else inlined as the document's first script.
func (o *Oracle) Trace(ctx context.Context, e Engine, id, html, script string) (*trace.Trace, error) {
	recorder := trace.RecorderJS
	if hasRecorderInitScript(e) {
		recorder = ""
	}
	body := html + "<script>" + escapeScriptText(script) + "</script>"
	url, release := o.origin.register(id, body, recorder)
	defer release()
	raw, err := e.Visit(ctx, url, collectAndClearJS)
	if err != nil {
		return nil, err
	}
	t, err := trace.Decode(raw, e.Name(), e.Version(), o.profile)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return t, nil
}

// idText is the request id as the trace page's path names it: a string id unquoted.
func idText(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}

// collectAndClearJS collects the trace, then clears the origin's storage, which every
// trace page shares: a case's localStorage must not reach the next case.
var collectAndClearJS = `async function () {
  const result = await (` + trace.CollectJS + `)();
  try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}
  try { for (const c of document.cookie.split(';')) { const k = c.split('=')[0].trim(); if (k) document.cookie = k + '=; max-age=0; path=/'; } } catch (e) {}
  try { if (indexedDB.databases) for (const d of await indexedDB.databases()) indexedDB.deleteDatabase(d.name); } catch (e) {}
  return result;
}`

// escapeScriptText keeps a script's text from ending its element early: "</script"
// inside it becomes "<\/script", which means the same in every JavaScript context a
// case can put it in (strings, templates, regular expressions, comments).
func escapeScriptText(s string) string {
	return closingScript.ReplaceAllString(s, `<\/$1`)
}

var closingScript = regexp.MustCompile(`(?i)</(script)`)

// hasRecorderInitScript says whether the engine installs the recorder itself, before
// any page script (Playwright's addInitScript); WebDriver classic has no such hook.
func hasRecorderInitScript(e Engine) bool {
	i, ok := e.(interface{ RunsInitScripts() bool })
	return ok && i.RunsInitScripts()
}
