package oracle

import (
	"context"
	"errors"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/layout-oracle/oracle/trace"
)

// Web content: cases whose document is not written into about:blank but navigated
// to on the case's own origin (docs/web-content.md): a "url" under --docroot, or an
// "html" case with an XML "content_type", served as that type so the engine's XML
// parser reads it.

// isXMLInline says whether an html request asks for its document to be served as
// XML rather than written as HTML.
func isXMLInline(req *Request) bool {
	return req.HTML != nil && req.ContentType != nil && *req.ContentType != "text/html"
}

// servedDocument says whether the case's document is navigated to (a "url", or
// inline XML) rather than written: such an answer is live only, never stored, since
// it depends on files the store's key does not cover (docs/store.md).
func servedDocument(req *Request) bool { return req.URL != nil || isXMLInline(req) }

// errNoDocRoot answers a "url" request to an oracle started without --docroot.
var errNoDocRoot = errors.New(`"url" needs the oracle started with --docroot DIR (the directory the url's path is under)`)

// checkDocument refuses what only the running oracle can know is wrong.
func (o *Oracle) checkDocument(req *Request) error {
	if req.URL == nil {
		return nil
	}
	if o.origin == nil || o.origin.DocRoot() == nil {
		return errNoDocRoot
	}
	// The main document must be one the docroot serves: else every engine would
	// measure (or trace) the 404 page, unanimously.
	cu, err := origin.SplitDocURL(*req.URL)
	if err == nil {
		err = o.origin.DocRoot().Document(cu.Rel)
	}
	if err != nil {
		return fmt.Errorf(`"url": %q: %v`, *req.URL, err)
	}
	return nil
}

// caseDocument, for a request whose document is navigated to, returns what gives
// each engine's page its URL (and a release for after the case), all on one fresh
// case origin; nil for a plain html case. A docroot file is on the case's host at its
// own path; an inline XML document is registered once per engine.
func (o *Oracle) caseDocument(req *Request) func() (string, func()) {
	if !servedDocument(req) {
		return nil
	}
	host := o.origin.NewHost()
	if req.URL != nil {
		cu, _ := origin.SplitDocURL(*req.URL) // checked when parsed
		url := "http://" + host + cu.Escape + cu.Tail
		return func() (string, func()) { return url, func() {} }
	}
	return func() (string, func()) {
		return o.origin.RegisterInline(host, *req.HTML, *req.ContentType)
	}
}

// traceDocument is Trace of a docroot document (at /trace/<key>/<path>, so the
// recorder's /trace/ gate holds and relative URLs still resolve in the docroot) or
// of an inline XML document, with the recorder inlined where the engine has no init
// scripts.
func (o *Oracle) traceDocument(ctx context.Context, e browser.Engine, host string, req *Request) (*trace.Trace, error) {
	key, recorder := trace.InitKey, ""
	if !hasRecorderInitScript(e) {
		key = trace.NewKey()
		recorder = trace.Recorder(key, &o.traceLimits)
	}
	run := trace.NewRun(*req.Script, key, o.traceLimits)
	var url string
	var release func()
	if req.URL != nil {
		cu, _ := origin.SplitDocURL(*req.URL)
		url, release = o.origin.RegisterDoc(host, cu.Rel, recorder)
		url += cu.Tail
	} else {
		url, release = o.origin.RegisterTraceInline(host, *req.HTML, *req.ContentType, recorder)
	}
	defer release()
	raw, err := e.Visit(ctx, url, collectAndClearJS, run.Args()...)
	if err != nil {
		return nil, err
	}
	return o.decodeTrace(e, run, raw)
}
