package origin

import (
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
)

// docRoot is the directory --docroot serves read-only at / on every case origin of
// the oracle (c<token>.localhost:<port>, Server.NewHost), so a WPT checkout's tests
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

// OpenDocRoot opens dir as the docroot; its errors name --docroot.
func OpenDocRoot(dir string) (*docRoot, error) {
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

// Close closes the root's directory.
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

// escapeDocPath escapes each segment of a docroot path for a URL.
func escapeDocPath(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// docURL is a "url" request's document: its path under the docroot and what
// follows the path (?query#fragment), kept for the navigation.
type docURL struct {
	Rel    string // the path under the root, "css/CSS2/a.xht"
	Escape string // the path as it goes into the navigation URL, "/css/CSS2/a.xht"
	Tail   string // "?query#fragment" as given, or ""
}

// SplitDocURL checks a "url" field: an absolute path under the docroot, no
// scheme or host, no "..", no escaped separators (cleanDocPath).
func SplitDocURL(u string) (docURL, error) {
	if !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
		return docURL{}, fmt.Errorf("%q must be a path under --docroot starting with a single '/' (no scheme or host)", u)
	}
	p, tail := u, ""
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		p, tail = u[:i], u[i:]
	}
	for _, r := range u {
		if r < 0x21 || r == 0x7f {
			return docURL{}, fmt.Errorf("%q holds a space or control character (escape it)", u)
		}
	}
	rel, err := cleanDocPath(p)
	if err != nil {
		return docURL{}, err
	}
	return docURL{Rel: rel, Escape: "/" + escapeDocPath(rel), Tail: tail}, nil
}

// Document says why the root does not serve rel as a case's main document, nil when
// it does: a regular file (symlinks followed inside the root only), or a wrapper the
// docroot generates for a script test. Checked before any engine visits, so a "url"
// the root cannot serve is a request error, never a dump of the 404 page.
func (d *docRoot) Document(rel string) error {
	st, err := d.root.Stat(rel)
	if err == nil && st.Mode().IsRegular() {
		return nil
	}
	if _, _, werr := d.wrapper(rel, "/"+escapeDocPath(rel), ""); !errors.Is(werr, errNoWrapper) {
		switch {
		case werr == nil:
			return nil
		case werr == fs.ErrNotExist: // no script to generate the wrapper from
			return errors.New("no such file under --docroot, and no script test to generate its wrapper from")
		}
		return fmt.Errorf("no such file under --docroot, and its script test's wrapper is not generated (%v)", werr)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file under --docroot")
	case err != nil:
		return fmt.Errorf("not served by --docroot: %v", err)
	case st.IsDir():
		return errors.New("a directory, not a file (--docroot lists no directory)")
	}
	return errors.New("not a regular file (a FIFO, socket or device): --docroot serves regular files only")
}
