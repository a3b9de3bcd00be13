package origin

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/trace"
)

// The documents the origin serves on a case's host beyond its plain trace page: the
// docroot's files at /, a docroot document traced at /trace/<key>/<path> with the
// recorder inlined, inline documents of an XML type, and WPT's testharnessreport.js.

// withRecorder returns doc with the recorder inlined as its first script, for
// engines without init scripts: in HTML right after the doctype (before it would
// switch the document to quirks mode), in XML right after the root element's start
// tag, in a CDATA section (the recorder holds no "]]>").
func withRecorder(doc []byte, xml bool, recorder string) ([]byte, error) {
	if xml {
		if strings.Contains(recorder, "]]>") {
			return nil, errors.New("recorder holds ']]>'")
		}
		at := xmlRootStart(doc)
		if at < 0 {
			return nil, errors.New("no root element to inline the recorder into")
		}
		ins := `<script xmlns="http://www.w3.org/1999/xhtml"><![CDATA[` + recorder + `]]></script>`
		return splice(doc, at, ins), nil
	}
	at := 0
	if m := doctypeRE.FindIndex(doc); m != nil {
		at = m[1]
	}
	return splice(doc, at, "<script>"+recorder+"</script>"), nil
}

func splice(doc []byte, at int, ins string) []byte {
	out := make([]byte, 0, len(doc)+len(ins))
	out = append(out, doc[:at]...)
	out = append(out, ins...)
	return append(out, doc[at:]...)
}

// doctypeRE finds a leading doctype (after a BOM, whitespace and comments).
var doctypeRE = regexp.MustCompile(`(?is)^(?:\xEF\xBB\xBF)?(?:\s|<!--.*?-->)*<!doctype[^>]*>`)

// xmlRootStart is the offset just past the root element's start tag, or -1: the
// first '<' that opens no declaration, processing instruction, comment or doctype.
func xmlRootStart(doc []byte) int {
	i := 0
	for {
		j := bytes.IndexByte(doc[i:], '<')
		if j < 0 {
			return -1
		}
		i += j
		rest := doc[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<?")):
			k := bytes.Index(rest, []byte("?>"))
			if k < 0 {
				return -1
			}
			i += k + 2
		case bytes.HasPrefix(rest, []byte("<!--")):
			k := bytes.Index(rest, []byte("-->"))
			if k < 0 {
				return -1
			}
			i += k + 3
		case bytes.HasPrefix(rest, []byte("<!")):
			// A doctype, possibly with an internal subset in [...].
			depth := 0
			k := 2
			for ; k < len(rest); k++ {
				if rest[k] == '[' {
					depth++
				} else if rest[k] == ']' {
					depth--
				} else if rest[k] == '>' && depth <= 0 {
					break
				}
			}
			if k >= len(rest) {
				return -1
			}
			i += k + 1
		default:
			// The root's start tag: its end is the first '>' outside quotes.
			var quote byte
			for k := 1; k < len(rest); k++ {
				c := rest[k]
				switch {
				case quote != 0:
					if c == quote {
						quote = 0
					}
				case c == '"' || c == '\'':
					quote = c
				case c == '>':
					if rest[k-1] == '/' {
						return -1 // an empty root: nowhere to put a child
					}
					return i + k + 1
				}
			}
			return -1
		}
	}
}

// SetDocRoot makes the origin serve d at / on every case host.
func (o *Server) SetDocRoot(d *docRoot) {
	o.mu.Lock()
	o.docroot = d
	o.mu.Unlock()
}

// DocRoot is the docroot the origin serves, nil without --docroot.
func (o *Server) DocRoot() *docRoot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.docroot
}

// caseHostRE is a host NewHost makes; the docroot is served to case origins only.
var caseHostRE = regexp.MustCompile(`^c[0-9a-f]{20}\.localhost:[0-9]+$`)

func (o *Server) isCaseHost(host string) bool {
	host = strings.ToLower(host)
	return caseHostRE.MatchString(host) && strings.HasSuffix(host, fmt.Sprintf(":%d", o.port))
}

// serveDocRoot serves the docroot's files at / to case origins; without --docroot,
// or to any other host, every path is not found.
func (o *Server) serveDocRoot(w http.ResponseWriter, r *http.Request) {
	d := o.DocRoot()
	if d == nil || !o.isCaseHost(r.Host) || r.URL.Path == "/" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	d.serveFile(w, r, r.URL.EscapedPath())
}

// RegisterDoc serves the docroot document rel (DocURL.Rel) as a trace page of one
// engine of a case on host, at /trace/<key>/<rel>, with recorder inlined when not "".
// The rest of /trace/<key>/ serves the docroot (relative subresources).
func (o *Server) RegisterDoc(host, rel, recorder string) (pageURL string, release func()) {
	key, release := o.add(tracePage{host: host, recorder: recorder, docPath: rel})
	return "http://" + host + "/trace/" + key + "/" + escapeDocPath(rel), release
}

// RegisterInline serves body once, as contentType, at /inline/<key> on host.
func (o *Server) RegisterInline(host, body, contentType string) (pageURL string, release func()) {
	key, release := o.add(tracePage{host: host, body: body, contentType: contentType})
	return "http://" + host + "/inline/" + key, release
}

func (o *Server) serveInline(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/inline/")
	page, ok := o.takeOnce(key, r, func(p tracePage) bool { return p.contentType != "" && !p.traced })
	if !ok {
		http.Error(w, "no such page", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", page.contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(page.body))
}

// serveTraceDoc serves /trace/<key>/...: the page's document once (with the recorder
// inlined where the engine needs it), and every other path as the docroot's file,
// while the page is registered, to its own host only.
func (o *Server) serveTraceDoc(w http.ResponseWriter, r *http.Request, key string) {
	o.mu.Lock()
	page, ok := o.pages[key]
	d := o.docroot
	ok = ok && page.docPath != "" && d != nil && strings.EqualFold(r.Host, page.host)
	o.mu.Unlock()
	if !ok {
		http.Error(w, "no such trace page", http.StatusNotFound)
		return
	}
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/trace/"+key)
	rel, err := cleanDocPath(rest)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if rel == "resources/testharnessreport.js" { // the oracle's, wherever the test looks
		o.serveTestharnessReport(w, r)
		return
	}
	if rel != page.docPath || page.recorder == "" {
		d.serveFile(w, r, rest)
		return
	}
	release, ok := d.admit(w, r)
	if !ok {
		return
	}
	defer release()
	rec := page.recorder
	o.mu.Lock()
	cur, first := o.pages[key]
	first = first && cur.recorder != ""
	if first {
		cur.recorder = "" // the document is served with the recorder once
		o.pages[key] = cur
	}
	o.mu.Unlock()
	if !first {
		http.Error(w, "no such trace page", http.StatusNotFound)
		return
	}
	doc, ct, err := d.wrapper(rel, r.URL.EscapedPath(), r.URL.RawQuery)
	if errors.Is(err, errNoWrapper) {
		doc, err = d.read(rel)
		ct = mimeOf(rel)
	}
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if doc, err = withRecorder(doc, isXMLType(ct), rec); err != nil {
		http.Error(w, "cannot inline the recorder: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(doc)
}

// newPageKey is a random path key for one engine's page of a case.
func newPageKey() string { return trace.NewKey()[:32] }

// RegisterTraceInline serves body once as contentType (an XML type) at /trace/<key>
// on host, with recorder inlined when not "": a trace of an inline XML document.
func (o *Server) RegisterTraceInline(host, body, contentType, recorder string) (pageURL string, release func()) {
	key, release := o.add(tracePage{host: host, body: body, contentType: contentType, recorder: recorder, traced: true})
	return "http://" + host + "/trace/" + key, release
}

// serveTraceInline writes an inline XML trace page, the recorder first inside its
// root element where the engine needs it inlined.
func serveTraceInline(w http.ResponseWriter, page tracePage) {
	doc := []byte(page.body)
	if page.recorder != "" {
		var err error
		if doc, err = withRecorder(doc, true, page.recorder); err != nil {
			// Not well-formed enough to hold it: the engine's XML parser says why.
			doc = []byte(page.body)
		}
	}
	w.Header().Set("Content-Type", page.contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(doc)
}

// testharnessReportJS is served at /resources/testharnessreport.js on case origins:
// the hook WPT leaves for the system running its testharness.js tests
// (inpage/docroot/testharnessreport.js).
var testharnessReportJS = inpage.TestharnessReport

func (o *Server) serveTestharnessReport(w http.ResponseWriter, r *http.Request) {
	if !o.isCaseHost(r.Host) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/javascript")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(testharnessReportJS))
}
