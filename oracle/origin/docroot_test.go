package origin

// Tests of the docroot server over real HTTP on loopback (no browser): raw request
// lines, so no client library cleans a path before the server sees it. The engines'
// side (a page that tries to escape) is in cmd/oracle's webcontent tests.

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docRootOrigin starts an origin serving a fresh temporary docroot holding a few
// files, a directory, and symlinks pointing inside and outside it.
func docRootOrigin(t *testing.T) (*Server, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	files := map[string]string{
		"a.xht":           `<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>`,
		"b.xhtml":         `<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>`,
		"dir/c.html":      "<p>c",
		"dir/s.css":       "p{}",
		"dir/i.svg":       "<svg xmlns='http://www.w3.org/2000/svg'/>",
		"fonts/Ahem.ttf":  "ttf",
		"dir/space d.txt": "spaced",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(base, "secret.txt"), []byte("SECRET"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(root, "out.txt")))
	require.NoError(t, os.Symlink(base, filepath.Join(root, "outdir")))
	require.NoError(t, os.Symlink("dir/c.html", filepath.Join(root, "in.html")))
	o, err := Start("", zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	d, err := OpenDocRoot(root)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	o.SetDocRoot(d)
	return o, root
}

// rawGet sends "GET <target> HTTP/1.1" exactly as written, to host.
func rawGet(t *testing.T, o *Server, host, target string) (int, string, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", o.port), 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b.String()
}

func TestDocRootServesFilesByExtensionToCaseOriginsOnly(t *testing.T) {
	o, _ := docRootOrigin(t)
	host := o.NewHost()
	for path, want := range map[string]string{
		"/a.xht":             "application/xhtml+xml",
		"/b.xhtml":           "application/xhtml+xml",
		"/dir/c.html":        "text/html; charset=utf-8",
		"/dir/s.css":         "text/css",
		"/dir/i.svg":         "image/svg+xml",
		"/fonts/Ahem.ttf":    "font/ttf",
		"/in.html":           "text/html; charset=utf-8", // a symlink inside the root
		"/dir/space%20d.txt": "text/plain",
		"/dir/c.html?x=1":    "text/html; charset=utf-8",
	} {
		code, ct, _ := rawGet(t, o, host, path)
		assert.Equal(t, http.StatusOK, code, path)
		assert.Equal(t, want, ct, path)
	}
	// Another host than a case origin's gets nothing, even an existing file: the
	// origin's guard (network.go) refuses it before any route.
	for _, other := range []string{fmt.Sprintf("localhost:%d", o.port), fmt.Sprintf("127.0.0.1:%d", o.port), "example.com", "c0.localhost:1"} {
		code, _, _ := rawGet(t, o, other, "/a.xht")
		assert.Equal(t, http.StatusForbidden, code, other)
	}
}

func TestDocRootRefusesEscapesListingsAndWrites(t *testing.T) {
	o, _ := docRootOrigin(t)
	host := o.NewHost()
	refused := []string{
		"/../secret.txt", "/dir/../../secret.txt", "/dir/..", "/./a.xht", "//a.xht", "/dir//c.html",
		"/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/.%2e/secret.txt", "/dir%2f..%2f..%2fsecret.txt",
		"/dir%2Fc.html", "/..%5csecret.txt", "/dir\\..\\..\\secret.txt", "/a.xht%00", "/%252e%252e/secret.txt",
		"/trace/x/../../secret.txt", "/%", "/dir/",
	}
	for _, p := range refused {
		code, _, body := rawGet(t, o, host, p)
		assert.Equal(t, http.StatusBadRequest, code, p)
		assert.NotContains(t, body, "SECRET", p)
		// The same through the origin as the browsers' proxy: the absolute form.
		code, _, body = rawGet(t, o, host, "http://"+host+p)
		assert.Equal(t, http.StatusBadRequest, code, "proxy form of "+p)
		assert.NotContains(t, body, "SECRET", "proxy form of "+p)
	}
	code, ct, _ := rawGet(t, o, host, "http://"+host+"/a.xht")
	assert.Equal(t, http.StatusOK, code, "a file through the proxy form")
	assert.Equal(t, "application/xhtml+xml", ct)
	notFound := []string{"/out.txt", "/outdir/secret.txt", "/dir", "/", "/nope.html"}
	for _, p := range notFound {
		code, _, body := rawGet(t, o, host, p)
		assert.Equal(t, http.StatusNotFound, code, p)
		assert.NotContains(t, body, "SECRET", p)
		assert.NotContains(t, body, "c.html", p) // no listing
	}
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", o.port))
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /new.txt HTTP/1.1\r\nHost: %s\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx", host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestWithoutDocRootNothingIsServedAtTheRoot(t *testing.T) {
	o, err := Start("", zerolog.Nop())
	require.NoError(t, err)
	defer o.Close()
	code, _, _ := rawGet(t, o, o.NewHost(), "/a.xht")
	assert.Equal(t, http.StatusNotFound, code)
}

func TestTraceDocumentGetsTheRecorderOnceAndItsFolderIsTheDocRoot(t *testing.T) {
	o, _ := docRootOrigin(t)
	host := o.NewHost()
	pageURL, release := o.RegisterDoc(host, "a.xht", "/*REC*/")
	defer release()
	path := strings.TrimPrefix(pageURL, "http://"+host)
	code, ct, body := rawGet(t, o, strings.ToUpper(host), path)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "application/xhtml+xml", ct)
	assert.Equal(t, `<html xmlns="http://www.w3.org/1999/xhtml"><script xmlns="http://www.w3.org/1999/xhtml"><![CDATA[/*REC*/]]></script><body/></html>`, body)
	_, _, body = rawGet(t, o, host, path)
	assert.NotContains(t, body, "REC", "the recorder is inlined once")
	// Relative subresources resolve under the page's folder, which is the docroot.
	code, _, body = rawGet(t, o, host, strings.TrimSuffix(path, "a.xht")+"dir/c.html")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "<p>c", body)
	code, _, _ = rawGet(t, o, o.NewHost(), path)
	assert.Equal(t, http.StatusNotFound, code, "another case's host")
	release()
	code, _, _ = rawGet(t, o, host, path)
	assert.Equal(t, http.StatusNotFound, code, "after release")
}

func TestWithRecorderKeepsTheDoctypeFirst(t *testing.T) {
	got, err := withRecorder([]byte("<!-- c -->\n<!DOCTYPE html>\n<p>x"), false, "R")
	require.NoError(t, err)
	assert.Equal(t, "<!-- c -->\n<!DOCTYPE html><script>R</script>\n<p>x", string(got))
	got, err = withRecorder([]byte("<p>x"), false, "R")
	require.NoError(t, err)
	assert.Equal(t, "<script>R</script><p>x", string(got))
	got, err = withRecorder([]byte(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "b>">]><!-- > --><svg a='>'>x</svg>`), true, "R")
	require.NoError(t, err)
	assert.Equal(t, `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "b>">]><!-- > --><svg a='>'><script xmlns="http://www.w3.org/1999/xhtml"><![CDATA[R]]></script>x</svg>`, string(got))
	_, err = withRecorder([]byte(`<svg/>`), true, "R")
	assert.Error(t, err)
}

func TestSplitDocURL(t *testing.T) {
	cu, err := SplitDocURL("/css/CSS2/a%20b.xht?x=1#f")
	require.NoError(t, err)
	assert.Equal(t, docURL{Rel: "css/CSS2/a b.xht", Escape: "/css/CSS2/a%20b.xht", Tail: "?x=1#f"}, cu)
	for _, bad := range []string{"css/a.xht", "//host/a.xht", "http://x/a", "/a/../b", "/a/%2e%2e/b", "/", "/a\\b", "/a b"} {
		_, err := SplitDocURL(bad)
		assert.Error(t, err, bad)
	}
}

// getStatus is rawGet for use off the test's goroutine: the status, or an error.
func getStatus(port int, host, target string, within time.Duration) (int, error) {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), within)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(within))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// processThreadsAndFDs is this process's thread and open fd counts (Linux /proc).
func processThreadsAndFDs(t *testing.T) (threads, fds int) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			fmt.Sscan(v, &threads)
		}
	}
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return threads, len(ents)
}

// A FIFO under the docroot is refused at once, as the page's document and as a
// subresource, and parks nothing: open(2) of a FIFO blocks until a writer comes, so a
// server that opens before it checks holds a thread and an fd per request for good.
func TestDocRootRefusesAFIFOWithoutBlocking(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts threads and fds in /proc")
	}
	o, root := docRootOrigin(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo.html"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "dir", "fifo.css"), 0o644))
	host := o.NewHost()
	tracePage, release := o.RegisterDoc(host, "fifo.html", "/*REC*/")
	defer release()
	targets := []string{"/fifo.html", "/dir/fifo.css", strings.TrimPrefix(tracePage, "http://"+host),
		strings.TrimSuffix(strings.TrimPrefix(tracePage, "http://"+host), "fifo.html") + "dir/fifo.css"}
	// Warm up the server's goroutines and the client side before counting.
	_, err := getStatus(o.port, host, "/a.xht", 5*time.Second)
	require.NoError(t, err)
	threads0, fds0 := processThreadsAndFDs(t)

	const n = 300
	type result struct {
		target string
		code   int
		err    error
	}
	results := make(chan result, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		go func(target string) {
			code, err := getStatus(o.port, host, target, 5*time.Second)
			results <- result{target, code, err}
		}(targets[i%len(targets)])
	}
	for i := 0; i < n; i++ {
		r := <-results
		require.NoError(t, r.err, "%s: the request was not answered", r.target)
		assert.Equal(t, http.StatusNotFound, r.code, r.target)
	}
	t.Logf("%d requests for FIFOs answered in %v", n, time.Since(start))

	// Nothing is left behind: no thread parked in open(2), no fd held.
	deadline := time.Now().Add(5 * time.Second)
	for {
		threads, fds := processThreadsAndFDs(t)
		if threads <= threads0+8 && fds <= fds0+8 {
			t.Logf("threads %d before, %d after; fds %d before, %d after", threads0, threads, fds0, fds)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d requests for FIFOs: %d threads (was %d), %d fds (was %d)", n, threads, threads0, fds, fds0)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// And the server still serves.
	code, _, body := rawGet(t, o, host, "/dir/c.html")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "<p>c", body)
}

// Over docRootHandlers handlers at work, a request waits docRootWait for a slot and
// is then 503, not queued without bound. (A unit test of the bound: the slots are
// taken by the test, standing in for handlers whose clients stopped reading.)
func TestDocRootBoundsItsHandlersAtWork(t *testing.T) {
	o, _ := docRootOrigin(t)
	d := o.DocRoot()
	for i := 0; i < docRootHandlers; i++ {
		d.busy <- struct{}{}
	}
	host := o.NewHost()
	start := time.Now()
	code, _, body := rawGet(t, o, host, "/dir/c.html")
	took := time.Since(start)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "docroot busy")
	assert.GreaterOrEqual(t, took, docRootWait)
	assert.Less(t, took, docRootWait+3*time.Second)
	// A slot freed while a request waits is taken by it.
	go func() {
		time.Sleep(docRootWait / 4)
		<-d.busy
	}()
	code, _, body = rawGet(t, o, host, "/dir/c.html")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "<p>c", body)
	for i := 0; i < docRootHandlers-1; i++ {
		<-d.busy
	}
	assert.Len(t, d.busy, 0, "every handler gave its slot back")
}

// A url case's main document must be a file the docroot serves (or a wrapper it
// generates): a missing file, a directory, a FIFO or a symlink out of the root is a
// request error before any engine visits, never the 404 page measured unanimously.
// Document says why; package oracle's TestURLCaseOfADocumentTheDocRootDoesNotServeIsARequestError
// checks the request error it becomes, and cmd/oracle's TestURLOfADocumentNotServedIsAnError
// sends the same through the binary to the three engines.
func TestDocumentSaysWhyTheDocRootDoesNotServeIt(t *testing.T) {
	o, root := docRootOrigin(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo.html"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "t"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "t", "s.any.js"), []byte("// META: global=window\ntest(() => {});\n"), 0o644))
	check := func(url string) error {
		cu, err := SplitDocURL(url)
		require.NoError(t, err, url)
		return o.DocRoot().Document(cu.Rel)
	}
	for _, ok := range []string{"/a.xht", "/dir/c.html?x=1#y", "/in.html", "/t/s.any.html"} {
		assert.NoError(t, check(ok), ok)
	}
	for url, want := range map[string]string{
		"/nope.html":           "no such file under --docroot",
		"/dir/nope.html?x#y":   "no such file under --docroot",
		"/dir":                 "a directory, not a file",
		"/fifo.html":           "not a regular file",
		"/out.txt":             "not served by --docroot",
		"/outdir/secret.txt":   "not served by --docroot",
		"/t/nope.any.html":     "no script test to generate its wrapper from",
		"/t/s.any.worker.html": "wrapper is not generated",
	} {
		err := check(url)
		if assert.Error(t, err, url) {
			assert.Contains(t, err.Error(), want, url)
			assert.NotContains(t, err.Error(), root, "the docroot's own path is not told")
		}
	}
}
