package origin

// The wrappers the docroot generates for WPT's script tests, over raw HTTP (no
// browser), against the text wptserve generates for the same script (tools/serve/
// serve.py at WPT 20574795, its templates filled in by hand here).

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocRootGeneratesWPTWrappersAsWptserve(t *testing.T) {
	o, root := docRootOrigin(t)
	files := map[string]string{
		"t/a.any.js":                       "// META: title=A & <b>\n// META: script=/common/x.js?a&b=\"1\"\n// META: timeout=long\n// META: variant=?1\n\n// META: script=ignored.js\ntest(() => {});\n",
		"t/w.any.js":                       "// META: global=worker\ntest(() => {});\n",
		"t/v.window.js":                    "test(() => {});\n",
		"t/d.worker.js":                    "importScripts('/resources/testharness.js'); test(() => {}); done();\n",
		"t/own.any.html":                   "<p>a file of that name",
		"resources/webidl2/lib/webidl2.js": "webidl2",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	host := o.NewHost()
	get := func(target string) (int, string, string) { return rawGet(t, o, host, target) }

	code, ct, body := get("/t/a.any.html?1")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "text/html", ct)
	assert.Equal(t, `<!doctype html>
<meta charset=utf-8>
<title>A &amp; &lt;b></title>
<meta name="timeout" content="long">
<script>
self.GLOBAL = {
  isWindow: function() { return true; },
  isWorker: function() { return false; },
};
</script>
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<script src="/common/x.js?a&amp;b=&quot;1&quot;"></script>
<div id=log></div>
<script src="/t/a.any.js"></script>
`, body)

	code, _, body = get("/t/a.any.worker.html?1")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, `<!doctype html>
<meta charset=utf-8>
<title>A &amp; &lt;b></title>
<meta name="timeout" content="long">
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<div id=log></div>
<script>
fetch_tests_from_worker(new Worker("/t/a.any.worker.js?1"));
</script>
`, body)

	code, ct, body = get("/t/a.any.worker.js?1")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "text/javascript", ct)
	assert.Equal(t, `
self.GLOBAL = {
  isWindow: function() { return false; },
  isWorker: function() { return true; },
};
importScripts("/resources/testharness.js");
self.META_TITLE = "A & <b>";
importScripts("/common/x.js?a&b=\"1\"")
importScripts("/t/a.any.js");
done();
`, body)

	code, _, body = get("/t/v.window.html")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, `<!doctype html>
<meta charset=utf-8>

<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>

<div id=log></div>
<script src="/t/v.window.js"></script>
`, body)

	code, _, body = get("/t/d.worker.html")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `fetch_tests_from_worker(new Worker("/t/d.worker.js"));`)

	// global=worker: no window wrapper (404, as wptserve's exposure check), a
	// dedicated and a shared worker one.
	code, _, _ = get("/t/w.any.html")
	assert.Equal(t, http.StatusNotFound, code)
	code, _, _ = get("/t/w.any.worker.html")
	assert.Equal(t, http.StatusOK, code)
	code, _, body = get("/t/w.any.sharedworker.html")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `new SharedWorker("/t/w.any.worker.js")`)

	// No script: 404. A real file of a wrapper's name is served as it is.
	code, _, _ = get("/t/none.any.html")
	assert.Equal(t, http.StatusNotFound, code)
	_, _, body = get("/t/own.any.html")
	assert.Equal(t, "<p>a file of that name", body)
	// wptserve's rewrite of the WebIDL parser's old path.
	code, _, body = get("/resources/WebIDLParser.js")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "webidl2", body)
}
