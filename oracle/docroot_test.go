package oracle

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
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docRootOrigin starts an origin serving a fresh temporary docroot holding a few
// files, a directory, and symlinks pointing inside and outside it.
func docRootOrigin(t *testing.T) (*origin, string) {
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
	o, err := startOrigin(zerolog.Nop())
	require.NoError(t, err)
	t.Cleanup(func() { o.Close() })
	d, err := openDocRoot(root)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	o.setDocRoot(d)
	return o, root
}

// rawGet sends "GET <target> HTTP/1.1" exactly as written, to host.
func rawGet(t *testing.T, o *origin, host, target string) (int, string, string) {
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
	host := o.newHost()
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
	host := o.newHost()
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
	o, err := startOrigin(zerolog.Nop())
	require.NoError(t, err)
	defer o.Close()
	code, _, _ := rawGet(t, o, o.newHost(), "/a.xht")
	assert.Equal(t, http.StatusNotFound, code)
}

func TestTraceDocumentGetsTheRecorderOnceAndItsFolderIsTheDocRoot(t *testing.T) {
	o, _ := docRootOrigin(t)
	host := o.newHost()
	pageURL, release := o.registerDoc(host, "a.xht", "/*REC*/")
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
	code, _, _ = rawGet(t, o, o.newHost(), path)
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

func TestSplitCaseURL(t *testing.T) {
	cu, err := splitCaseURL("/css/CSS2/a%20b.xht?x=1#f")
	require.NoError(t, err)
	assert.Equal(t, caseURL{Rel: "css/CSS2/a b.xht", Escape: "/css/CSS2/a%20b.xht", Tail: "?x=1#f"}, cu)
	for _, bad := range []string{"css/a.xht", "//host/a.xht", "http://x/a", "/a/../b", "/a/%2e%2e/b", "/", "/a\\b", "/a b"} {
		_, err := splitCaseURL(bad)
		assert.Error(t, err, bad)
	}
}
