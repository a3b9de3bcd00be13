package origin

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/trace"
	"github.com/rs/zerolog"
)

// Server is the oracle's one local HTTP server, alive for the process lifetime. It
// serves each trace page at http://<token>.localhost:<port>/trace/<key>, the token
// random per case (shared by the engines answering it) and the key random per page: *.localhost resolves to loopback and is a secure context without
// TLS in all three engines (checked by TestTraceEachCaseHasItsOwnOrigin), and a real
// origin unlocks APIs that about:blank does not. One origin per case means the
// same-origin policy keeps a case from reading another case's page, and storage and
// cookies are the case's own. The key is not the case id: any id works (.., /, ?, #,
// %, unicode). A page is served only to a request naming its own host, and only once:
// a second request (a case fetching its own URL to read an inlined recorder's key)
// gets 404. The zero Server registers pages but serves none (it listens nowhere).
type Server struct {
	srv  *http.Server
	port int
	log  zerolog.Logger

	mu      sync.Mutex
	pages   map[string]tracePage // by key
	docroot *docRoot             // --docroot, served at / on case hosts; nil without
}

type tracePage struct {
	host     string // <token>.localhost:<port>, the page's own origin
	title    string // the case id, shown as the document's title
	body     string // the case's html, placed in <body>
	recorder string // inlined first in <head> for engines without init scripts, else ""

	// docPath, for a trace of a docroot document ("url" request), is its path under
	// the root: the page is /trace/<key>/<docPath>, served from the file, and the
	// rest of /trace/<key>/ is the docroot, so its relative URLs resolve.
	docPath string
	// contentType, for an inline document of another type than text/html (an "html"
	// request's "content_type"), is its type: body is then served as it is.
	contentType string
	traced      bool // served at /trace/<key> (with the recorder), never at /inline/
}

// Start starts the server listening on addr (--origin-listen: an address remote
// browsers reach, docs/remote.md); "" is a free port on 127.0.0.1.
func Start(addr string, log zerolog.Logger) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("trace origin: %w", err)
	}
	o := &Server{port: ln.Addr().(*net.TCPAddr).Port, log: log, pages: map[string]tracePage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/trace/", o.serveTrace)
	mux.HandleFunc("/inline/", o.serveInline)
	mux.HandleFunc("/", o.serveDocRoot)
	mux.HandleFunc("/resources/testharnessreport.js", o.serveTestharnessReport)
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	o.srv = &http.Server{Handler: o.guard(refuseEscapes(mux)), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := o.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("trace origin stopped")
		}
	}()
	log.Info().Int("port", o.port).Str("addr", ln.Addr().String()).Msg("trace origin listening")
	return o, nil
}

// ParseListen checks an --origin-listen address: a host remote browsers can
// reach (an unspecified address such as 0.0.0.0 names no host to give them as their
// proxy) and a port (0: any free one).
func ParseListen(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--origin-listen %q: want HOST:PORT: %v", addr, err)
	}
	if host == "" {
		return "", fmt.Errorf("--origin-listen %q: name the host or address remote browsers reach this machine by", addr)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "", fmt.Errorf("--origin-listen %q: %s is every address, not one a remote browser can be told to use; name one", addr, host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("--origin-listen %q: bad port", addr)
	}
	return addr, nil
}

// Port is the port the server listens on (0 for the zero Server).
func (o *Server) Port() int { return o.port }

// NewHost is a fresh origin host for one case, <token>.localhost:<port>. The engines
// answering the same case share it, so what a case records of its own origin
// (location.origin, document.domain) is the same in every engine, as it was with one
// origin for all; no other case ever gets it.
func (o *Server) NewHost() string {
	return "c" + trace.NewKey()[:20] + ".localhost:" + strconv.Itoa(o.port)
}

// Register serves one engine's page of a case (body, the case's html, in a document
// titled id, with recorder inlined first when not ""), on the case's host, until the
// returned release is called. Its path key is random per page.
func (o *Server) Register(host, id, body, recorder string) (pageURL string, release func()) {
	key, release := o.add(tracePage{host: host, title: id, body: body, recorder: recorder})
	return "http://" + host + "/trace/" + key, release
}

// takeOnce hands out the page registered under key to r, once, and forgets it: only
// on the page's own host (another origin never gets it) and only when fits says it
// is the kind of page r's path serves.
func (o *Server) takeOnce(key string, r *http.Request, fits func(tracePage) bool) (tracePage, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	page, ok := o.pages[key]
	ok = ok && strings.EqualFold(r.Host, page.host) && fits(page)
	if ok {
		delete(o.pages, key) // served once
	}
	return page, ok
}

// add registers page under a new random key (newPageKey) until release is called.
func (o *Server) add(page tracePage) (key string, release func()) {
	key = newPageKey()
	o.mu.Lock()
	if o.pages == nil {
		o.pages = map[string]tracePage{}
	}
	o.pages[key] = page
	o.mu.Unlock()
	return key, func() {
		o.mu.Lock()
		delete(o.pages, key)
		o.mu.Unlock()
	}
}

func (o *Server) serveTrace(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/trace/")
	if k, _, found := strings.Cut(key, "/"); found {
		o.serveTraceDoc(w, r, k)
		return
	}
	page, ok := o.takeOnce(key, r, func(p tracePage) bool { return p.docPath == "" && (p.contentType == "" || p.traced) })
	if !ok {
		http.Error(w, "no such trace page", http.StatusNotFound)
		return
	}
	if page.contentType != "" {
		serveTraceInline(w, page)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	b.WriteString("<!doctype html><html><head>")
	if page.recorder != "" {
		// The recorder has no "</script", "<!--" or "<script" (trace.RecorderJS), so
		// it is inlined verbatim; it removes its own element as it runs.
		b.WriteString("<script>")
		b.WriteString(page.recorder)
		b.WriteString("</script>")
	}
	b.WriteString("<meta charset=utf-8><title>")
	b.WriteString(html.EscapeString(strings.ToValidUTF8(page.title, "\uFFFD")))
	b.WriteString("</title></head><body>")
	b.WriteString(page.body)
	b.WriteString("</body></html>")
	w.Write([]byte(b.String()))
}

// Close shuts the server down, waiting up to 2 s for requests under way.
func (o *Server) Close() error {
	if o.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return o.srv.Shutdown(ctx)
}
