package oracle

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/layout-oracle/oracle/internal/wptmeta"
)

// WPT's script tests (.any.js, .window.js, .worker.js) run in HTML wrappers that WPT's
// server generates on request from the script's "// META:" lines (tools/serve/serve.py,
// WrapperHandler and its subclasses, at WPT 20574795). The docroot generates the same
// documents, byte for byte, for a wrapper path whose file does not exist and whose
// script does (docs/web-content.md, "Script tests").

// wptWrapper is one of WPT's wrapper handlers: a request path ending in suffix is
// generated from the file ending in source, and loads the resource ending in load.
type wptWrapper struct {
	suffix, source, load string
	global               string // the global the script must be exposed to; "" for any
	template             string // %(meta)s, %(script)s, %(path)s, %(query)s
	js                   bool   // a worker script (META scripts by importScripts), not HTML
}

var wptWrappers = []wptWrapper{
	{suffix: ".any.html", source: ".any.js", load: ".any.js", global: "window", template: anyHTMLWrapper},
	{suffix: ".any.worker.html", source: ".any.js", load: ".any.worker.js", global: "dedicatedworker", template: workerWrapper},
	{suffix: ".any.sharedworker.html", source: ".any.js", load: ".any.worker.js", global: "sharedworker", template: sharedWorkerWrapper},
	{suffix: ".any.worker.js", source: ".any.js", load: ".any.js", template: classicWorkerWrapper, js: true},
	{suffix: ".window.html", source: ".window.js", load: ".window.js", template: windowWrapper},
	{suffix: ".worker.html", source: ".worker.js", load: ".worker.js", global: "dedicatedworker", template: workerWrapper},
}

const anyHTMLWrapper = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script>
self.GLOBAL = {
  isWindow: function() { return true; },
  isWorker: function() { return false; },
};
</script>
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
%(script)s
<div id=log></div>
<script src="%(path)s"></script>
`

const windowWrapper = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
%(script)s
<div id=log></div>
<script src="%(path)s"></script>
`

const workerWrapper = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<div id=log></div>
<script>
fetch_tests_from_worker(new Worker("%(path)s%(query)s"));
</script>
`

const sharedWorkerWrapper = `<!doctype html>
<meta charset=utf-8>
%(meta)s
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<div id=log></div>
<script>
fetch_tests_from_worker(new SharedWorker("%(path)s%(query)s"));
</script>
`

const classicWorkerWrapper = `%(meta)s
self.GLOBAL = {
  isWindow: function() { return false; },
  isWorker: function() { return true; },
};
importScripts("/resources/testharness.js");
%(script)s
importScripts("%(path)s");
done();
`

// wptRewrites are wptserve's path rewrites (serve.py's rewrites).
var wptRewrites = map[string]string{"resources/WebIDLParser.js": "resources/webidl2/lib/webidl2.js"}

// errNoWrapper: the path is no wrapper the docroot generates.
var errNoWrapper = errors.New("not a wrapper")

// wrapper generates the wrapper document at rel (a cleanDocPath result) when rel ends
// in a wrapper suffix, has no file of its own, and its script exists. escapedPath is
// the request's path as sent (the wrapper loads its script by it, as wptserve does)
// and rawQuery its query. The error is errNoWrapper when rel is no wrapper, else
// fs.ErrNotExist when the script is absent or not exposed to the wrapper's global.
func (d *docRoot) wrapper(rel, escapedPath, rawQuery string) (body []byte, contentType string, err error) {
	var h *wptWrapper
	for i := range wptWrappers {
		if strings.HasSuffix(rel, wptWrappers[i].suffix) {
			h = &wptWrappers[i]
			break
		}
	}
	if h == nil {
		return nil, "", errNoWrapper
	}
	if f, _, err := d.open(rel); err == nil {
		f.Close()
		return nil, "", errNoWrapper // a file of that name is served as it is
	}
	src, err := d.read(strings.TrimSuffix(rel, h.suffix) + h.source)
	if err != nil {
		return nil, "", fs.ErrNotExist
	}
	meta := wptmeta.Read(src)
	if h.global != "" {
		if !wptmeta.Globals(wptmeta.First(meta, "global"))[h.global] {
			return nil, "", fmt.Errorf("%w: this test cannot be loaded in %s mode", fs.ErrNotExist, h.global)
		}
	}
	var metas, scripts []string
	for _, m := range meta {
		if h.js {
			q := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
			switch m.Key {
			case "script":
				scripts = append(scripts, `importScripts("`+q.Replace(m.Value)+`")`)
			case "title":
				scripts = append(scripts, `self.META_TITLE = "`+q.Replace(m.Value)+`";`)
			}
			continue
		}
		switch m.Key {
		case "timeout":
			if m.Value == "long" {
				metas = append(metas, `<meta name="timeout" content="long">`)
			}
		case "title":
			metas = append(metas, "<title>"+strings.NewReplacer("&", "&amp;", "<", "&lt;").Replace(m.Value)+"</title>")
		case "script":
			scripts = append(scripts, `<script src="`+strings.NewReplacer("&", "&amp;", `"`, "&quot;").Replace(m.Value)+`"></script>`)
		}
	}
	query := ""
	if rawQuery != "" {
		query = "?" + rawQuery
	}
	out := strings.NewReplacer(
		"%(meta)s", strings.Join(metas, "\n"),
		"%(script)s", strings.Join(scripts, "\n"),
		"%(path)s", strings.TrimSuffix(escapedPath, h.suffix)+h.load,
		"%(query)s", query,
	).Replace(h.template)
	if h.js {
		return []byte(out), "text/javascript", nil
	}
	return []byte(out), "text/html", nil
}

// serveGenerated answers a wrapper request: the document, or 404 (as wptserve does
// for a script that is absent or not exposed to the wrapper's global).
func serveGenerated(w http.ResponseWriter, body []byte, contentType string, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(body)
}
