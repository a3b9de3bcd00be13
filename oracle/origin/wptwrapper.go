package origin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/layout-oracle/oracle/inpage"
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
	template             string // an inpage file: @@META@@, @@SCRIPT@@, @@PATH@@, @@QUERY@@
	js                   bool   // a worker script (META scripts by importScripts), not HTML
}

// sfx is a file name suffix, "." + the parts joined by ".": sfx("any", "js").
func sfx(parts ...string) string { return "." + strings.Join(parts, ".") }

var wptWrappers = []wptWrapper{
	{suffix: sfx("any", "html"), source: sfx("any", "js"), load: sfx("any", "js"), global: "window", template: inpage.WPTAnyHTML},
	{suffix: sfx("any", "worker", "html"), source: sfx("any", "js"), load: sfx("any", "worker", "js"), global: "dedicatedworker", template: inpage.WPTWorker},
	{suffix: sfx("any", "sharedworker", "html"), source: sfx("any", "js"), load: sfx("any", "worker", "js"), global: "sharedworker", template: inpage.WPTSharedWorker},
	{suffix: sfx("any", "worker", "js"), source: sfx("any", "js"), load: sfx("any", "js"), template: inpage.WPTAnyWorkerJS, js: true},
	{suffix: sfx("window", "html"), source: sfx("window", "js"), load: sfx("window", "js"), template: inpage.WPTWindow},
	{suffix: sfx("worker", "html"), source: sfx("worker", "js"), load: sfx("worker", "js"), global: "dedicatedworker", template: inpage.WPTWorker},
}

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
	f, _, err := d.open(strings.TrimSuffix(rel, h.suffix) + h.source)
	if err != nil {
		return nil, "", fs.ErrNotExist
	}
	// Only the leading "// META:" lines count: a prefix bounds the read of a large
	// script (wptmeta.Read stops at the first other line, or one over 1 MiB).
	src, err := io.ReadAll(io.LimitReader(f, 4<<20))
	f.Close()
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
	var pairs []string
	for _, p := range [][2]string{
		{"META", strings.Join(metas, "\n")},
		{"SCRIPT", strings.Join(scripts, "\n")},
		{"PATH", strings.TrimSuffix(escapedPath, h.suffix) + h.load},
		{"QUERY", query},
	} {
		if strings.Contains(h.template, "@@"+p[0]+"@@") {
			pairs = append(pairs, p[0], p[1])
		}
	}
	out := inpage.Fill(h.template, pairs...)
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
