package oracle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/trace"
)

// docRoot is the directory --docroot serves read-only at / on every case origin of
// the oracle (c<token>.localhost:<port>, origin.newHost), so a WPT checkout's tests
// find /resources/, /fonts/ and their relative support files as under WPT's own
// server. It is opened as an os.Root: no path, symlink or ".." resolves outside it,
// whatever the request spells.
type docRoot struct {
	dir  string // as given, for messages
	root *os.Root
	busy chan struct{} // a slot per handler at work on the root's files (admit)
}

// docRootHandlers bounds the docroot's handlers at work at once, each holding at most
// one open file: a request over the bound waits docRootWait for a slot, then is 503,
// so no client can make the origin hold open files (or memory, for the documents it
// rewrites) without bound. Browsers keep at most a few dozen requests in flight per
// page, and a handler of a regular file is done in microseconds unless its client
// stops reading, which docRootWriteTimeout bounds.
const (
	docRootHandlers     = 128
	docRootWait         = 2 * time.Second
	docRootWriteTimeout = 30 * time.Second
)

func openDocRoot(dir string) (*docRoot, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--docroot: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--docroot: %s is not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("--docroot: %w", err)
	}
	return &docRoot{dir: dir, root: root, busy: make(chan struct{}, docRootHandlers)}, nil
}

// admit takes a handler slot for r, waiting at most docRootWait; false when none
// came free (or r was cancelled), and then w has its 503. The returned release gives
// the slot back.
func (d *docRoot) admit(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	select {
	case d.busy <- struct{}{}:
	default:
		t := time.NewTimer(docRootWait)
		defer t.Stop()
		select {
		case d.busy <- struct{}{}:
		case <-t.C:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "docroot busy: too many requests at once", http.StatusServiceUnavailable)
			return nil, false
		case <-r.Context().Done():
			http.Error(w, "docroot busy: request cancelled", http.StatusServiceUnavailable)
			return nil, false
		}
	}
	// A client that stops reading must not keep the slot (and the file) for good.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(docRootWriteTimeout))
	return func() { <-d.busy }, true
}

func (d *docRoot) Close() error { return d.root.Close() }

// docMIME maps extensions to the types WPT's server gives them; anything not here
// goes to mime.TypeByExtension, then application/octet-stream. XHTML and SVG must be
// XML types: the engine then parses them with its XML parser, as WPT intends.
var docMIME = map[string]string{
	".html":  "text/html; charset=utf-8",
	".htm":   "text/html; charset=utf-8",
	".xht":   "application/xhtml+xml",
	".xhtml": "application/xhtml+xml",
	".xml":   "application/xml",
	".svg":   "image/svg+xml",
	".css":   "text/css",
	".js":    "text/javascript",
	".mjs":   "text/javascript",
	".json":  "application/json",
	".txt":   "text/plain",
	".png":   "image/png",
	".gif":   "image/gif",
	".jpg":   "image/jpeg",
	".jpeg":  "image/jpeg",
	".webp":  "image/webp",
	".avif":  "image/avif",
	".bmp":   "image/bmp",
	".ico":   "image/x-icon",
	".ttf":   "font/ttf",
	".otf":   "font/otf",
	".woff":  "font/woff",
	".woff2": "font/woff2",
	".wasm":  "application/wasm",
}

func mimeOf(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := docMIME[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// isXMLType says whether a document of this type is parsed as XML.
func isXMLType(contentType string) bool {
	t, _, _ := mime.ParseMediaType(contentType)
	return t == "application/xhtml+xml" || t == "image/svg+xml" || t == "application/xml" || t == "text/xml"
}

// errBadPath is a request path the docroot refuses outright.
var errBadPath = errors.New("path refused")

// cleanDocPath checks a docroot path as a client (a "url" request) or a browser
// (a subresource) spells it, escaped or not, and returns it relative to the root
// ("css/CSS2/a.xht"). Refused: anything not absolute, any "." or ".." segment, an
// escaped "/", "\", "." or NUL, a backslash, a NUL, and an empty segment. Refusing
// rather than cleaning means no spelling of an escape reaches the file system.
func cleanDocPath(escaped string) (string, error) {
	if !strings.HasPrefix(escaped, "/") {
		return "", fmt.Errorf("%w: %q is not an absolute path", errBadPath, escaped)
	}
	low := strings.ToLower(escaped)
	for _, enc := range []string{"%2f", "%5c", "%2e", "%00", "%25"} {
		if strings.Contains(low, enc) {
			return "", fmt.Errorf("%w: %q holds an escaped '/', '\\', '.', '%%' or NUL", errBadPath, escaped)
		}
	}
	p, err := pathUnescape(escaped)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", errBadPath, escaped, err)
	}
	if strings.ContainsAny(p, "\\\x00") {
		return "", fmt.Errorf("%w: %q holds a backslash or NUL", errBadPath, escaped)
	}
	rel := p[1:]
	if rel == "" {
		return "", fmt.Errorf("%w: %q names the root directory", errBadPath, escaped)
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("%w: %q has an empty, '.' or '..' segment", errBadPath, escaped)
		}
	}
	return rel, nil
}

var escapeRE = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

// pathUnescape decodes %XX escapes; a '%' not followed by two hex digits is an error.
func pathUnescape(s string) (string, error) {
	if strings.Count(s, "%") != len(escapeRE.FindAllStringIndex(s, -1)) {
		return "", errors.New("malformed % escape")
	}
	return pathUnescaper.Replace(s), nil
}

var pathUnescaper = func() *strings.Replacer {
	var pairs []string
	for i := 0; i < 256; i++ {
		c := string([]byte{byte(i)})
		pairs = append(pairs, fmt.Sprintf("%%%02x", i), c, fmt.Sprintf("%%%02X", i), c)
	}
	return strings.NewReplacer(pairs...)
}()

// errNotRegular is a path under the root that names something other than a regular
// file (a directory, FIFO, socket or device): it is not served, as if absent.
var errNotRegular = fmt.Errorf("%w: not a regular file", fs.ErrNotExist)

// open opens a regular file under the root (symlinks followed inside it only);
// anything else is not found (no listing). It stats before opening, and opens
// non-blocking: open(2) of a FIFO blocks until a writer comes, and of a device may
// act on it. The file is checked again once open, in case it was replaced between.
func (d *docRoot) open(rel string) (*os.File, fs.FileInfo, error) {
	if st, err := d.root.Stat(rel); err != nil {
		return nil, nil, err
	} else if !st.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	f, err := d.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotRegular
	}
	return f, st, nil
}

// read returns a regular file's bytes (for documents the oracle rewrites).
func (d *docRoot) read(rel string) ([]byte, error) {
	f, _, err := d.open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 256<<20))
}

// serveFile answers GET/HEAD of the root's file at escapedPath (the request's path
// as sent). Nothing is written but the file: no listing, no redirect.
func (d *docRoot) serveFile(w http.ResponseWriter, r *http.Request, escapedPath string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "read-only", http.StatusMethodNotAllowed)
		return
	}
	rel, err := cleanDocPath(escapedPath)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if to, ok := wptRewrites[rel]; ok {
		rel = to
	}
	release, ok := d.admit(w, r)
	if !ok {
		return
	}
	defer release()
	if body, ct, err := d.wrapper(rel, r.URL.EscapedPath(), r.URL.RawQuery); !errors.Is(err, errNoWrapper) {
		serveGenerated(w, body, ct, err)
		return
	}
	f, _, err := d.open(rel)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", mimeOf(rel))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, f)
}

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

// refuseEscapes answers 400 to a request whose path, as sent, has a ".", ".." or
// empty segment or an escaped '/', '\', '.', '%' or NUL, before the mux (which would
// clean and redirect it) sees it: no spelling of an escape is followed, even within
// the root.
func refuseEscapes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.URL.EscapedPath()
		if r.RequestURI != "" && r.RequestURI != "*" {
			raw, _, _ = strings.Cut(r.RequestURI, "?")
			raw = originForm(raw)
		}
		if raw != "/" {
			if _, err := cleanDocPath(raw); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// originForm is the path of a request target: the browsers reach the origin as their
// proxy (network.go), so they send the absolute form "http://host:port/path", which
// the path checks must see as "/path".
func originForm(target string) string {
	if len(target) < 7 || !strings.EqualFold(target[:7], "http://") {
		return target
	}
	if i := strings.IndexByte(target[7:], '/'); i >= 0 {
		return target[7+i:]
	}
	return "/"
}

// setDocRoot makes the origin serve d at / on every case host.
func (o *origin) setDocRoot(d *docRoot) {
	o.mu.Lock()
	o.docroot = d
	o.mu.Unlock()
}

func (o *origin) docRoot() *docRoot {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.docroot
}

// caseHostRE is a host newHost makes; the docroot is served to case origins only.
var caseHostRE = regexp.MustCompile(`^c[0-9a-f]{20}\.localhost:[0-9]+$`)

func (o *origin) isCaseHost(host string) bool {
	host = strings.ToLower(host)
	return caseHostRE.MatchString(host) && strings.HasSuffix(host, fmt.Sprintf(":%d", o.port))
}

// serveDocRoot serves the docroot's files at / to case origins; without --docroot,
// or to any other host, every path is not found.
func (o *origin) serveDocRoot(w http.ResponseWriter, r *http.Request) {
	d := o.docRoot()
	if d == nil || !o.isCaseHost(r.Host) || r.URL.Path == "/" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	d.serveFile(w, r, r.URL.EscapedPath())
}

// registerDoc serves the docroot document rel (cleanDocPath's result) as a trace page
// of one engine of a case on host, at /trace/<key>/<rel>, with recorder inlined when
// not "". The rest of /trace/<key>/ serves the docroot (relative subresources).
func (o *origin) registerDoc(host, rel, recorder string) (pageURL string, release func()) {
	key := newPageKey()
	o.mu.Lock()
	o.pages[key] = tracePage{host: host, recorder: recorder, docPath: rel}
	o.mu.Unlock()
	return "http://" + host + "/trace/" + key + "/" + escapeDocPath(rel), func() {
		o.mu.Lock()
		delete(o.pages, key)
		o.mu.Unlock()
	}
}

// registerInline serves body once, as contentType, at /inline/<key> on host.
func (o *origin) registerInline(host, body, contentType string) (pageURL string, release func()) {
	key := newPageKey()
	o.mu.Lock()
	o.pages[key] = tracePage{host: host, body: body, contentType: contentType}
	o.mu.Unlock()
	return "http://" + host + "/inline/" + key, func() {
		o.mu.Lock()
		delete(o.pages, key)
		o.mu.Unlock()
	}
}

// escapeDocPath escapes each segment of a docroot path for a URL.
func escapeDocPath(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func (o *origin) serveInline(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/inline/")
	o.mu.Lock()
	page, ok := o.pages[key]
	ok = ok && page.contentType != "" && !page.traced && strings.EqualFold(r.Host, page.host)
	if ok {
		delete(o.pages, key) // served once
	}
	o.mu.Unlock()
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
func (o *origin) serveTraceDoc(w http.ResponseWriter, r *http.Request, key string) {
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

// registerTraceInline serves body once as contentType (an XML type) at /trace/<key>
// on host, with recorder inlined when not "": a trace of an inline XML document.
func (o *origin) registerTraceInline(host, body, contentType, recorder string) (pageURL string, release func()) {
	key := newPageKey()
	o.mu.Lock()
	o.pages[key] = tracePage{host: host, body: body, contentType: contentType, recorder: recorder, traced: true}
	o.mu.Unlock()
	return "http://" + host + "/trace/" + key, func() {
		o.mu.Lock()
		delete(o.pages, key)
		o.mu.Unlock()
	}
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

func (o *origin) serveTestharnessReport(w http.ResponseWriter, r *http.Request) {
	if !o.isCaseHost(r.Host) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/javascript")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(testharnessReportJS))
}
