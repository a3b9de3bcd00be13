package trace_test

// The recorder against the real engines: no mocks. One Chromium and one Firefox with
// the recorder as a Playwright init script, WebKitGTK over WebDriver with the recorder
// inlined as the first <script> of the served page, and a second Chromium without the
// init script, to run the inline route in Chromium too. All launched once for the test
// binary (TestMain); pages come from an httptest server on 127.0.0.1, visited as
// http://localhost:<port>/trace/<id> so that isSecureContext is true.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"

	"github.com/google/go-cmp/cmp"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/trace"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// engine is one launched browser and the route by which the recorder reaches its pages.
type engine struct {
	name   string
	e      browser.Engine
	inline bool // serve the recorder as the page's first <script> (WebDriver route)
	err    error
}

var (
	srv      *httptest.Server
	base     string // http://localhost:<port>
	engines  []*engine
	chromeIn *engine // Chromium without the init script: the inline route

	pagesMu sync.Mutex
	pages   = map[string]*page{}
	pageSeq int
)

type page struct {
	html, script string
	inline       bool   // the recorder first in <head>, keyed with key
	key          string // set by register for inline pages
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // the pure Go tests only; every engine test skips
	}
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).Level(zerolog.WarnLevel)
	srv = httptest.NewServer(http.HandlerFunc(serve))
	base = "http://localhost:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)

	d, err := playwright.Start(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "playwright:", err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	launch := func(en *engine, f func() (browser.Engine, error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			en.e, en.err = f()
		}()
	}
	init := []string{trace.RecorderJS}
	chromium := &engine{name: browser.Chromium}
	firefox := &engine{name: browser.Firefox}
	webkit := &engine{name: browser.WebKit, inline: true}
	chromeIn = &engine{name: browser.Chromium, inline: true}
	launch(chromium, func() (browser.Engine, error) {
		return d.Launch(playwright.Options{Engine: browser.Chromium, InitScripts: init}, log)
	})
	launch(firefox, func() (browser.Engine, error) {
		return d.Launch(playwright.Options{Engine: browser.Firefox, InitScripts: init}, log)
	})
	launch(chromeIn, func() (browser.Engine, error) {
		return d.Launch(playwright.Options{Engine: browser.Chromium}, log)
	})
	launch(webkit, func() (browser.Engine, error) {
		return webdriver.Launch(context.Background(), webdriver.Options{}, log)
	})
	wg.Wait()
	engines = []*engine{chromium, firefox, webkit}

	code := m.Run()

	for _, en := range append(engines, chromeIn) {
		if en.e != nil {
			en.e.Close()
		}
	}
	d.Stop()
	srv.Close()
	os.Exit(code)
}

// serve answers /trace/<key> with the registered page, and /plain/... with a
// page that is not a trace page.
func serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if strings.HasPrefix(r.URL.Path, "/plain/") {
		w.Write([]byte("<!doctype html><title>plain</title><p>not a trace page"))
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/trace/") {
		http.NotFound(w, r)
		return
	}
	pagesMu.Lock()
	p, ok := pages[strings.TrimPrefix(r.URL.Path, "/trace/")]
	pagesMu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	// As the oracle's origin serves it: the html only, the recorder first in <head>
	// on the inline route; the script comes with the run.
	var b strings.Builder
	b.WriteString("<!doctype html><html><head>")
	if p.inline {
		b.WriteString("<script>" + trace.Recorder(p.key, &trace.DefaultLimits) + "</script>")
	}
	b.WriteString("<meta charset=utf-8><title>trace</title></head><body>" + p.html + "</body></html>")
	w.Write([]byte(b.String()))
}

// register serves p at a fresh /trace/<key> URL and returns it with the key of the
// recorder copy that installs first on en.
func register(en *engine, p *page) (string, string) {
	pagesMu.Lock()
	defer pagesMu.Unlock()
	pageSeq++
	key := fmt.Sprintf("p%d", pageSeq)
	p.key = trace.NewKey()
	pages[key] = p
	if !en.inline { // the init script installs first
		return base + "/trace/" + key, trace.InitKey
	}
	return base + "/trace/" + key, p.key
}

// run serves html and script on en's route and collects the trace.
func run(t *testing.T, en *engine, html, script string) (*trace.Trace, error) {
	return runPage(t, en, page{html: html, script: script, inline: en.inline})
}

func runPage(t *testing.T, en *engine, p page) (*trace.Trace, error) {
	t.Helper()
	testutil.NeedsBrowsers(t)
	if en.err != nil {
		return nil, fmt.Errorf("%s did not launch: %w", en.name, en.err)
	}
	u, key := register(en, &p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := trace.NewRun(p.script, key, trace.DefaultLimits)
	raw, err := en.e.Visit(ctx, u, trace.RunJS, run.Args()...)
	if err != nil {
		return nil, err
	}
	return run.Decode(raw, en.name, en.e.Version(), "default")
}

// runAll runs the case in all three engines at once and requires every trace.
func runAll(t *testing.T, html, script string) map[string]*trace.Trace {
	t.Helper()
	testutil.NeedsBrowsers(t)
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]*trace.Trace{}
	errs := map[string]error{}
	for _, en := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := run(t, en, html, script)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[en.name] = err
			} else {
				out[en.name] = tr
			}
		}()
	}
	wg.Wait()
	for name, err := range errs {
		t.Errorf("%s: %v", name, err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	for name, tr := range out {
		assert.True(t, tr.IsSecureContext, "%s: isSecureContext", name)
		assert.Equal(t, base, tr.Origin, "%s: origin", name)
	}
	return out
}

// wantRecords requires tr's records to equal want (a JSON array of records),
// compared as decoded JSON.
func wantRecords(t *testing.T, engine string, tr *trace.Trace, want string) {
	t.Helper()
	got, err := json.Marshal(tr.Records)
	require.NoError(t, err)
	var g, w any
	require.NoError(t, json.Unmarshal(got, &g))
	require.NoError(t, json.Unmarshal([]byte(want), &w), "the test's own want JSON")
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("%s: records differ (-want +got):\n%s\ngot: %s", engine, d, got)
	}
}

// wantAll requires every engine's records to equal want, and the trace not timed out.
func wantAll(t *testing.T, traces map[string]*trace.Trace, want string) {
	t.Helper()
	for _, name := range []string{browser.Chromium, browser.Firefox, browser.WebKit} {
		tr := traces[name]
		assert.False(t, tr.TimedOut, "%s: timed out", name)
		wantRecords(t, name, tr, want)
	}
}

// valueOf decodes the value of the record labeled label.
func valueOf(t *testing.T, tr *trace.Trace, label string) map[string]any {
	t.Helper()
	for _, r := range tr.Records {
		if r.Label == label {
			var v map[string]any
			require.NoError(t, json.Unmarshal(r.Value, &v), "%s: %s", tr.Engine, r.Value)
			return v
		}
	}
	t.Fatalf("%s: no record %q", tr.Engine, label)
	return nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func f32bytes(vs ...float32) []byte {
	out := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		u := math.Float32bits(v)
		out = append(out, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return out
}

func TestScalars(t *testing.T) {
	traces := runAll(t, "", `
trace.value('nan', NaN);
trace.value('inf', Infinity);
trace.value('-inf', -Infinity);
trace.value('-0', -0);
trace.value('0', 0);
trace.value('undefined', undefined);
trace.value('null', null);
trace.value('bigint', 12345678901234567890n);
trace.value('-bigint', -5n);
trace.value('bool', true);
trace.value('string', 'h\u00e9 <b>');
trace.value('number', 0.1 + 0.2);
trace.value('symbol', Symbol('s'));
trace.value('function', function named() {});
trace.value('arrow', () => 1);
trace.done();
`)
	wantAll(t, traces, `[
{"seq":0,"kind":"value","label":"nan","value":{"$num":"NaN"}},
{"seq":1,"kind":"value","label":"inf","value":{"$num":"Infinity"}},
{"seq":2,"kind":"value","label":"-inf","value":{"$num":"-Infinity"}},
{"seq":3,"kind":"value","label":"-0","value":{"$num":"-0"}},
{"seq":4,"kind":"value","label":"0","value":0},
{"seq":5,"kind":"value","label":"undefined","value":{"$undefined":true}},
{"seq":6,"kind":"value","label":"null","value":null},
{"seq":7,"kind":"value","label":"bigint","value":{"$bigint":"12345678901234567890"}},
{"seq":8,"kind":"value","label":"-bigint","value":{"$bigint":"-5"}},
{"seq":9,"kind":"value","label":"bool","value":true},
{"seq":10,"kind":"value","label":"string","value":"hé <b>"},
{"seq":11,"kind":"value","label":"number","value":0.30000000000000004},
{"seq":12,"kind":"value","label":"symbol","value":{"$symbol":"s"}},
{"seq":13,"kind":"value","label":"function","value":{"$function":true,"name":"named"}},
{"seq":14,"kind":"value","label":"arrow","value":{"$function":true,"name":""}}
]`)
}

// TestValueMessage: trace.value's third argument travels as the record's "message",
// a string; null and undefined leave it out; the value is canonicalized as ever.
func TestValueMessage(t *testing.T) {
	traces := runAll(t, "", `
trace.value('text', 'FAIL', 'assert_equals: expected 1 but got 2');
trace.value('null', 'PASS', null);
trace.value('undefined', 'PASS', undefined);
trace.value('number', 1, 5);
trace.value('html', 2, '<b>&');
trace.value('empty', 3, '');
trace.done();
`)
	wantAll(t, traces, `[
{"seq":0,"kind":"value","label":"text","value":"FAIL","message":"assert_equals: expected 1 but got 2"},
{"seq":1,"kind":"value","label":"null","value":"PASS"},
{"seq":2,"kind":"value","label":"undefined","value":"PASS"},
{"seq":3,"kind":"value","label":"number","value":1,"message":"5"},
{"seq":4,"kind":"value","label":"html","value":2,"message":"<b>&"},
{"seq":5,"kind":"value","label":"empty","value":3}
]`)
}

func TestErrors(t *testing.T) {
	traces := runAll(t, "", `
try { null.x; } catch (e) { trace.error('type', e); }
try { undefinedName; } catch (e) { trace.error('reference', e); }
try { document.createElement('a b'); } catch (e) { trace.error('dom', e); }
trace.error('thrown-string', 'oops');
trace.value('error-as-value', new RangeError('m'));
trace.value('nested', {e: new SyntaxError('m')});
trace.settle('rejected', Promise.reject(new TypeError('m')));
trace.settle('rejected-plain', Promise.reject(42));
trace.event(null, 'click');
setTimeout(() => trace.done(), 0);
`)
	wantAll(t, traces, `[
{"seq":0,"kind":"error","label":"type","value":{"$error":true,"name":"TypeError"}},
{"seq":1,"kind":"error","label":"reference","value":{"$error":true,"name":"ReferenceError"}},
{"seq":2,"kind":"error","label":"dom","value":{"$error":true,"name":"InvalidCharacterError"}},
{"seq":3,"kind":"error","label":"thrown-string","value":"oops"},
{"seq":4,"kind":"value","label":"error-as-value","value":{"$error":true,"name":"RangeError"}},
{"seq":5,"kind":"value","label":"nested","value":{"$shape":"object","keys":["e"],"props":{"e":{"type":"object","value":{"$error":true,"name":"SyntaxError"}}}}},
{"seq":6,"kind":"error","label":"trace.event","value":{"$error":true,"name":"TypeError"}},
{"seq":7,"kind":"settle","label":"rejected","state":"rejected","value":{"$error":true,"name":"TypeError"}},
{"seq":8,"kind":"settle","label":"rejected-plain","state":"rejected","value":42}
]`)
}

func TestBuffers(t *testing.T) {
	traces := runAll(t, "", `
trace.value('f32', new Float32Array([1.5, -2]));
const ab = new ArrayBuffer(8);
new Uint8Array(ab).set([1, 2, 3, 4, 5, 6, 7, 8]);
trace.value('dataview', new DataView(ab, 2, 4));
trace.value('arraybuffer', ab.slice(0, 3));
trace.value('subarray', new Uint8Array(ab).subarray(5));
trace.value('u8c', new Uint8ClampedArray([300, -1, 7]));
trace.value('i16', new Int16Array([-2]));
trace.value('f64', new Float64Array([Math.PI]));
trace.value('big64', new BigInt64Array([-1n]));
trace.value('empty', new Float32Array(0));
trace.value('in-object', {buf: new Uint8Array([9])});
trace.done();
`)
	pi := math.Float64bits(math.Pi)
	var piBytes []byte
	for i := 0; i < 8; i++ {
		piBytes = append(piBytes, byte(pi>>(8*i)))
	}
	want := fmt.Sprintf(`[
{"seq":0,"kind":"value","label":"f32","value":{"$buffer":true,"elementType":"Float32Array","length":2,"base64":%q}},
{"seq":1,"kind":"value","label":"dataview","value":{"$buffer":true,"elementType":"DataView","length":4,"base64":%q}},
{"seq":2,"kind":"value","label":"arraybuffer","value":{"$buffer":true,"elementType":"ArrayBuffer","length":3,"base64":%q}},
{"seq":3,"kind":"value","label":"subarray","value":{"$buffer":true,"elementType":"Uint8Array","length":3,"base64":%q}},
{"seq":4,"kind":"value","label":"u8c","value":{"$buffer":true,"elementType":"Uint8ClampedArray","length":3,"base64":%q}},
{"seq":5,"kind":"value","label":"i16","value":{"$buffer":true,"elementType":"Int16Array","length":1,"base64":%q}},
{"seq":6,"kind":"value","label":"f64","value":{"$buffer":true,"elementType":"Float64Array","length":1,"base64":%q}},
{"seq":7,"kind":"value","label":"big64","value":{"$buffer":true,"elementType":"BigInt64Array","length":1,"base64":%q}},
{"seq":8,"kind":"value","label":"empty","value":{"$buffer":true,"elementType":"Float32Array","length":0,"base64":""}},
{"seq":9,"kind":"value","label":"in-object","value":{"$shape":"object","keys":["buf"],"props":{"buf":{"type":"object","value":{"$buffer":true,"elementType":"Uint8Array","length":1,"base64":"CQ=="}}}}}
]`, b64(f32bytes(1.5, -2)), b64([]byte{3, 4, 5, 6}), b64([]byte{1, 2, 3}), b64([]byte{6, 7, 8}),
		b64([]byte{255, 0, 7}), b64([]byte{0xfe, 0xff}), b64(piBytes), b64([]byte{255, 255, 255, 255, 255, 255, 255, 255}))
	wantAll(t, traces, want)
}

func TestImageData(t *testing.T) {
	traces := runAll(t, `<canvas id=c width=16 height=8></canvas>`, `
const ctx = document.getElementById('c').getContext('2d');
ctx.fillStyle = 'rgb(10, 20, 30)';
ctx.fillRect(0, 0, 16, 8);
ctx.fillStyle = 'rgba(200, 100, 50, 0.5)';
ctx.beginPath(); ctx.arc(8, 4, 3.3, 0, 2 * Math.PI); ctx.fill();
trace.value('image', ctx.getImageData(0, 0, 16, 8));
trace.value('solid', ctx.getImageData(0, 0, 1, 1));
trace.value('created', new ImageData(new Uint8ClampedArray([1, 2, 3, 4]), 1, 1));
trace.done();
`)
	for name, tr := range traces {
		img := valueOf(t, tr, "image")
		assert.Equal(t, true, img["$imageData"], name)
		assert.Equal(t, true, img["$buffer"], name)
		assert.Equal(t, "Uint8ClampedArray", img["elementType"], name)
		assert.EqualValues(t, 16, img["width"], name)
		assert.EqualValues(t, 8, img["height"], name)
		assert.EqualValues(t, 16*8*4, img["length"], name)
		solid := valueOf(t, tr, "solid")
		assert.Equal(t, b64([]byte{10, 20, 30, 255}), solid["base64"], "%s: a solid fill reads back exactly", name)
		created := valueOf(t, tr, "created")
		assert.Equal(t, b64([]byte{1, 2, 3, 4}), created["base64"], name)
	}
	reportPairs(t, traces, trace.DefaultBufferTolerance)
	v := compare.Traces(traces, trace.DefaultBufferTolerance)
	t.Logf("vote: whole %s; per record %+v", v.Whole.Kind, v.Records)
	assert.True(t, v.Whole.Trusted(), "the engines' canvases agree within the default tolerance")
}

func TestAudioBuffer(t *testing.T) {
	traces := runAll(t, "", `
const ctx = new OfflineAudioContext(2, 512, 44100);
const osc = ctx.createOscillator();
osc.frequency.value = 440;
const gain = ctx.createGain();
gain.gain.value = 0.5;
osc.connect(gain).connect(ctx.destination);
osc.start();
trace.settle('render', ctx.startRendering());
ctx.oncomplete = () => setTimeout(() => trace.done(), 0);
`)
	for name, tr := range traces {
		require.Len(t, tr.Records, 1, name)
		r := tr.Records[0]
		assert.Equal(t, "fulfilled", r.State, name)
		a := valueOf(t, tr, "render")
		assert.Equal(t, true, a["$audioBuffer"], name)
		assert.EqualValues(t, 2, a["numberOfChannels"], name)
		assert.EqualValues(t, 512, a["length"], name)
		assert.EqualValues(t, 44100, a["sampleRate"], name)
		chans := a["channels"].([]any)
		require.Len(t, chans, 2, name)
		for _, c := range chans {
			m := c.(map[string]any)
			assert.Equal(t, "Float32Array", m["elementType"], name)
			assert.EqualValues(t, 512, m["length"], name)
			raw, err := base64.StdEncoding.DecodeString(m["base64"].(string))
			require.NoError(t, err)
			require.Len(t, raw, 512*4)
			// Sample 10 of a 0.5-gain 440 Hz sine at 44.1 kHz.
			s := math.Float32frombits(uint32(raw[40]) | uint32(raw[41])<<8 | uint32(raw[42])<<16 | uint32(raw[43])<<24)
			assert.InDelta(t, 0.5*math.Sin(2*math.Pi*440*10/44100), s, 1e-3, "%s sample 10", name)
		}
	}
	reportPairs(t, traces, trace.DefaultBufferTolerance)
	v := compare.Traces(traces, trace.DefaultBufferTolerance)
	assert.True(t, v.Whole.Trusted(), "the engines' renders agree within the default tolerance")
}

// reportPairs logs every pair's comparison, exact and within tol.
func reportPairs(t *testing.T, traces map[string]*trace.Trace, tol trace.BufferTolerance) {
	t.Helper()
	names := []string{browser.Chromium, browser.Firefox, browser.WebKit}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			a, b := traces[names[i]], traces[names[j]]
			exact := trace.Compare(a, b, trace.BufferTolerance{})
			within := trace.Compare(a, b, tol)
			t.Logf("%s vs %s: exact %v %v; within tolerance %v %v", names[i], names[j],
				exact.Equal, exact.Findings, within.Equal, within.Findings)
		}
	}
}

func TestShapes(t *testing.T) {
	traces := runAll(t, "", `
const circ = {x: 1}; circ.self = circ; circ.list = [circ];
trace.value('circular', circ);
trace.value('huge', new Array(1000).fill(7));
trace.value('deep', {a: {b: {c: {d: {e: 1}}}}});
trace.value('deep-array', [[[[[1]]]]]);
trace.value('getter-throws', {ok: 1, get bad() { throw new TypeError('no'); }});
trace.value('null-proto', Object.assign(Object.create(null), {k: 'v'}));
class Point { constructor() { this.x = 1; } get y() { return 2; } norm() { return 0; } }
trace.value('class', new Point());
const many = {}; for (let i = 0; i < 100; i++) many['k' + i] = i;
trace.value('many-keys', many);
trace.value('sparse', [1, , 3]);
trace.done();
`)
	sevens := strings.TrimSuffix(strings.Repeat("7,", 64), ",")
	var manyKeys, manyProps []string
	for i := 0; i < 64; i++ {
		manyKeys = append(manyKeys, fmt.Sprintf(`"k%d"`, i))
		manyProps = append(manyProps, fmt.Sprintf(`"k%d":{"type":"number","value":%d}`, i, i))
	}
	want := `[
{"seq":0,"kind":"value","label":"circular","value":{"$shape":"object","keys":["x","self","list"],"props":{
  "x":{"type":"number","value":1},
  "self":{"type":"object","value":{"$circular":true}},
  "list":{"type":"object","value":{"$shape":"array","length":1,"elements":[{"$circular":true}]}}}}},
{"seq":1,"kind":"value","label":"huge","value":{"$shape":"array","length":1000,"elements":[` + sevens + `]}},
{"seq":2,"kind":"value","label":"deep","value":{"$shape":"object","keys":["a"],"props":{"a":{"type":"object","value":
  {"$shape":"object","keys":["b"],"props":{"b":{"type":"object","value":
  {"$shape":"object","keys":["c"],"props":{"c":{"type":"object","value":
  {"$shape":"object","keys":["d"],"props":{"d":{"type":"object","value":
  {"$shape":"object","truncated":"depth"}}}}}}}}}}}}}},
{"seq":3,"kind":"value","label":"deep-array","value":{"$shape":"array","length":1,"elements":[
  {"$shape":"array","length":1,"elements":[{"$shape":"array","length":1,"elements":[{"$shape":"array","length":1,"elements":[
  {"$shape":"array","length":1,"truncated":"depth"}]}]}]}]}},
{"seq":4,"kind":"value","label":"getter-throws","value":{"$shape":"object","keys":["ok","bad"],"props":{
  "ok":{"type":"number","value":1},"bad":{"type":"throws","value":{"$error":true,"name":"TypeError"}}}}},
{"seq":5,"kind":"value","label":"null-proto","value":{"$shape":"object","keys":["k"],"props":{"k":{"type":"string","value":"v"}}}},
{"seq":6,"kind":"value","label":"class","value":{"$shape":"object","class":"Object","keys":["x"],"props":{"x":{"type":"number","value":1}}}},
{"seq":7,"kind":"value","label":"many-keys","value":{"$shape":"object","key_count":100,"keys":[` + strings.Join(manyKeys, ",") +
		`],"props":{` + strings.Join(manyProps, ",") + `}}},
{"seq":8,"kind":"value","label":"sparse","value":{"$shape":"array","length":3,"elements":[1,{"$undefined":true},3]}}
]`
	wantAll(t, traces, want)
}

// TestSizeBound: a wide, deep structure (64^4 leaves if walked fully) is cut at the
// node budget, quickly, the same way in every engine.
func TestSizeBound(t *testing.T) {
	start := time.Now()
	traces := runAll(t, "", `
const row = new Array(100).fill(0);
const l2 = new Array(100).fill(row), l3 = new Array(100).fill(l2), l4 = new Array(100).fill(l3);
trace.value('wide', l4);
const t0 = performance.now();
trace.value('window', window);
trace.value('took-s', Math.round((performance.now() - t0) / 1000));
trace.done();
`)
	t.Logf("took %v", time.Since(start))
	var first string
	for _, name := range []string{browser.Chromium, browser.Firefox, browser.WebKit} {
		tr := traces[name]
		require.Len(t, tr.Records, 3, name)
		w := string(tr.Records[0].Value)
		assert.Less(t, len(w), 200_000, name)
		assert.Contains(t, w, `"truncated":"size"`, name)
		if first == "" {
			first = w
		} else {
			assert.Equal(t, first, w, "%s: the wide walk is engine-independent", name)
		}
		win := valueOf(t, tr, "window")
		assert.Equal(t, "object", win["$shape"], name)
		assert.Equal(t, "0", string(tr.Records[2].Value), "%s: walking window takes under a second", name)
		t.Logf("%s: window walks to %d bytes, class %v, key_count %v", name, len(tr.Records[1].Value), win["class"], win["key_count"])
	}
}

func TestURLShape(t *testing.T) {
	traces := runAll(t, "", `
trace.value('url', new URL('https://user:pw@example.com:8080/p/a?q=1#h'));
trace.value('rect', new DOMRect(1, 2, 3, 4));
trace.done();
`)
	for _, name := range []string{browser.Chromium, browser.Firefox, browser.WebKit} {
		u := valueOf(t, traces[name], "url")
		assert.Equal(t, "URL", u["class"], name)
		props := u["props"].(map[string]any)
		for k, v := range map[string]string{"href": "https://user:pw@example.com:8080/p/a?q=1#h", "origin": "https://example.com:8080",
			"protocol": "https:", "username": "user", "password": "pw", "host": "example.com:8080", "hostname": "example.com",
			"port": "8080", "pathname": "/p/a", "search": "?q=1", "hash": "#h"} {
			assert.Equal(t, map[string]any{"type": "string", "value": v}, props[k], "%s: %s", name, k)
		}
		sp := props["searchParams"].(map[string]any)["value"].(map[string]any)
		assert.Equal(t, "URLSearchParams", sp["class"], name)
		assert.Equal(t, []any{"hash", "host", "hostname", "href", "origin", "password", "pathname", "port", "protocol",
			"search", "searchParams", "username"}, u["keys"], "%s: an IDL object's attributes, sorted", name)
		assert.Equal(t, []any{"size"}, sp["keys"], name)
		t.Logf("%s: DOMRect %s", name, traces[name].Records[1].Value)
	}
	v := compare.Traces(traces, trace.BufferTolerance{})
	assert.Equal(t, "unanimous", string(v.Whole.Kind), "%+v", v)
}

func TestEventBubbleOrder(t *testing.T) {
	traces := runAll(t, `<div id=outer><button id=btn>b</button></div><span></span>`, `
const btn = document.getElementById('btn');
trace.event(window, 'click');
trace.event(document, ['click']);
trace.event(document.getElementById('outer'), 'click');
trace.event(btn, ['mousedown', 'click']);
trace.event(document.querySelector('span'), 'click');
trace.event(new AbortController().signal, 'abort');
btn.click();
btn.dispatchEvent(new Event('mousedown', {bubbles: false}));
document.querySelector('span').click();
trace.done();
`)
	wantAll(t, traces, `[
{"seq":0,"kind":"event","label":"BUTTON#btn","type":"click"},
{"seq":1,"kind":"event","label":"DIV#outer","type":"click"},
{"seq":2,"kind":"event","label":"document","type":"click"},
{"seq":3,"kind":"event","label":"window","type":"click"},
{"seq":4,"kind":"event","label":"BUTTON#btn","type":"mousedown"},
{"seq":5,"kind":"event","label":"SPAN","type":"click"},
{"seq":6,"kind":"event","label":"document","type":"click"},
{"seq":7,"kind":"event","label":"window","type":"click"}
]`)
}

func TestPromiseOrder(t *testing.T) {
	traces := runAll(t, "", `
trace.value('sync', 1);
setTimeout(() => trace.value('timeout', 1), 0);
Promise.resolve().then(() => trace.value('then', 1));
queueMicrotask(() => trace.value('microtask', 1));
trace.settle('resolved', Promise.resolve(5));
trace.settle('thenable', {then(r) { r('t'); }});
trace.settle('plain', 7);
trace.settle('late', new Promise(r => setTimeout(() => r('late'), 20)));
(async () => { await null; trace.value('async', 1); await null; trace.value('async2', 2); })();
trace.value('sync2', 2);
setTimeout(() => trace.done(), 60);
`)
	wantAll(t, traces, `[
{"seq":0,"kind":"value","label":"sync","value":1},
{"seq":1,"kind":"value","label":"sync2","value":2},
{"seq":2,"kind":"value","label":"then","value":1},
{"seq":3,"kind":"value","label":"microtask","value":1},
{"seq":4,"kind":"settle","label":"resolved","state":"fulfilled","value":5},
{"seq":5,"kind":"settle","label":"plain","state":"fulfilled","value":7},
{"seq":6,"kind":"value","label":"async","value":1},
{"seq":7,"kind":"settle","label":"thenable","state":"fulfilled","value":"t"},
{"seq":8,"kind":"value","label":"async2","value":2},
{"seq":9,"kind":"value","label":"timeout","value":1},
{"seq":10,"kind":"settle","label":"late","state":"fulfilled","value":"late"}
]`)
}

func TestInlineScriptSeesTrace(t *testing.T) {
	traces := runAll(t, `<script>trace.value('inline', typeof window.trace); trace.value('ready', document.readyState);</script>`,
		`trace.value('after', 1); trace.done();`)
	wantAll(t, traces, `[
{"seq":0,"kind":"value","label":"inline","value":"object"},
{"seq":1,"kind":"value","label":"ready","value":"loading"},
{"seq":2,"kind":"value","label":"after","value":1}
]`)
}

// TestTimeout is the one test that waits out the 5 s completion timeout.
func TestTimeout(t *testing.T) {
	start := time.Now()
	traces := runAll(t, "", `trace.value('a', 1); setTimeout(() => trace.value('b', 2), 100); setTimeout(() => trace.value('after-timeout', 3), 6000);`)
	took := time.Since(start)
	t.Logf("took %v", took)
	assert.GreaterOrEqual(t, took, 4500*time.Millisecond)
	assert.Less(t, took, 15*time.Second)
	for name, tr := range traces {
		assert.True(t, tr.TimedOut, name)
		wantRecords(t, name, tr, `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":2}]`)
	}
}

// TestRobustness: a case that breaks the built-ins the recorder and the oracle's
// serialization use still yields its trace.
func TestRobustness(t *testing.T) {
	traces := runAll(t, "", `
const before = trace;
JSON.stringify = () => 'broken';
JSON.parse = () => 'broken';
Array.prototype.push = function () { throw new Error('push'); };
Object.prototype.toJSON = function () { return 'polluted'; };
Array.prototype.toJSON = function () { return 'polluted'; };
Promise.prototype.then = function () { throw new Error('then'); };
Object.keys = () => ['bogus'];
window.setTimeout = () => { throw new Error('setTimeout'); };
btoa = () => 'broken';
String.fromCharCode = () => '';
Function.prototype.call = function () { throw new Error('call'); };
trace = null;
window.__traceRun = null;
trace.value('same', window.trace === before);
trace.value('o', {a: [1, 2], b: new Uint8Array([1])});
trace.settle('p', Promise.resolve(1));
// An indexed setter on Array.prototype breaks Playwright's own in-page evaluation
// (its UtilityScript assigns array indices), so this one is lifted before done().
Object.defineProperty(Array.prototype, '0', {set(v) { throw new Error('indexed setter'); }, configurable: true});
trace.value('arr', [[1]]);
queueMicrotask(() => { trace.value('q', 2); delete Array.prototype[0]; trace.done(); });
`)
	wantAll(t, traces, `[
{"seq":0,"kind":"value","label":"same","value":true},
{"seq":1,"kind":"value","label":"o","value":{"$shape":"object","keys":["a","b"],"props":{
  "a":{"type":"object","value":{"$shape":"array","length":2,"elements":[1,2]}},
  "b":{"type":"object","value":{"$buffer":true,"elementType":"Uint8Array","length":1,"base64":"AQ=="}}}}},
{"seq":2,"kind":"value","label":"arr","value":{"$shape":"array","length":1,"elements":[{"$shape":"array","length":1,"elements":[1]}]}},
{"seq":3,"kind":"settle","label":"p","state":"fulfilled","value":1},
{"seq":4,"kind":"value","label":"q","value":2}
]`)
}

// TestReplacedJSON: a case that replaces the JSON object itself.
func TestReplacedJSON(t *testing.T) {
	traces := runAll(t, "", `window.JSON = {stringify: () => 'broken'}; trace.value('x', [1]); trace.done();`)
	wantAll(t, traces, `[{"seq":0,"kind":"value","label":"x","value":{"$shape":"array","length":1,"elements":[1]}}]`)
}

// TestNotATracePage: the init script defines nothing on the geometry page
// (about:blank via Load) or on a page outside /trace/, and collecting there fails
// with a clear message.
func TestNotATracePage(t *testing.T) {
	testutil.NeedsBrowsers(t)
	probe := `function () { return [typeof window.trace, '__traceRun' in window, location.href]; }`
	for _, en := range engines {
		require.NoError(t, en.err, en.name)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		// Load (setContent) keeps the page's URL, so first leave the last trace page.
		_, err := en.e.Visit(ctx, "about:blank", probe)
		require.NoError(t, err, en.name)
		raw, err := en.e.Load(ctx, "<p>geometry", probe)
		require.NoError(t, err, en.name)
		assert.JSONEq(t, `["undefined", false, "about:blank"]`, string(raw), en.name)
		raw, err = en.e.Visit(ctx, base+"/plain/x", probe)
		require.NoError(t, err, en.name)
		assert.JSONEq(t, `["undefined", false, "`+base+`/plain/x"]`, string(raw), en.name)
		_, err = en.e.Visit(ctx, base+"/plain/y", trace.RunJS, "trace.done()", map[string]any{})
		if assert.Error(t, err, en.name) {
			assert.Contains(t, err.Error(), "no recorder in this page", en.name)
		}
		cancel()
	}
}

// routeCase exercises every kind of record and most canonical forms at once.
const routeHTML = `<div id=d><button id=b></button></div><canvas id=c width=4 height=4></canvas>
<script>trace.value('inline', typeof trace.value);</script>`

const routeScript = `
trace.event(document.getElementById('d'), 'click');
trace.event(window, 'click');
document.getElementById('b').click();
const g = document.getElementById('c').getContext('2d');
g.fillStyle = '#f00'; g.fillRect(0, 0, 2, 2);
trace.value('v', {n: NaN, z: -0, u: undefined, big: 1n, f: new Float32Array([0.25]), url: new URL('http://a/b')});
trace.value('img', g.getImageData(0, 0, 4, 4));
try { [].reduce((a, b) => a); } catch (e) { trace.error('e', e); }
trace.settle('p', Promise.resolve().then(() => 1));
trace.settle('r', Promise.reject(new DOMException('x', 'AbortError')));
setTimeout(() => trace.done(), 0);
`

// TestInlineRouteMatchesInitScript: in Chromium, the recorder inlined as the page's
// first <script> (the WebDriver route) and the init script (the Playwright route)
// record identical traces of the same case; and both at once (the init script plus an
// inline copy) install once, recording the same again.
func TestInlineRouteMatchesInitScript(t *testing.T) {
	testutil.NeedsBrowsers(t)
	chromium := engines[0]
	initTr, err := run(t, chromium, routeHTML, routeScript)
	require.NoError(t, err)
	inlineTr, err := run(t, chromeIn, routeHTML, routeScript)
	require.NoError(t, err)
	bothTr, err := runPage(t, chromium, page{html: routeHTML, script: routeScript, inline: true})
	require.NoError(t, err)

	require.Len(t, initTr.Records, 8, "%+v", initTr.Records)
	for name, tr := range map[string]*trace.Trace{"inline": inlineTr, "init script + inline": bothTr} {
		r := trace.Compare(initTr, tr, trace.BufferTolerance{})
		assert.True(t, r.Equal, "%s vs init script: %v", name, r.Findings)
		a, _ := json.Marshal(initTr.Records)
		b, _ := json.Marshal(tr.Records)
		assert.Equal(t, string(a), string(b), "%s: byte-identical records", name)
		assert.Equal(t, initTr.TimedOut, tr.TimedOut)
		assert.Equal(t, initTr.Origin, tr.Origin)
		assert.Equal(t, initTr.IsSecureContext, tr.IsSecureContext)
	}
	// And the same case across the three engines, for the record.
	traces := runAll(t, routeHTML, routeScript)
	v := compare.Traces(traces, trace.DefaultBufferTolerance)
	reportPairs(t, traces, trace.DefaultBufferTolerance)
	assert.Equal(t, "unanimous", string(v.Whole.Kind), "route case: splits %v, outliers %v", v.Splits(), v.Outliers())
}

// TestRecorderInlinable: the recorder can be inlined into HTML verbatim.
func TestRecorderInlinable(t *testing.T) {
	low := strings.ToLower(trace.RecorderJS)
	assert.NotContains(t, low, "</script")
	assert.NotContains(t, low, "<!--")
	assert.NotContains(t, low, "<script")
}

// TestBundledCases runs testdata/trace/cases.ndjson (trace requests in the protocol's
// shape) through all three engines and requires a trusted vote on each.
func TestBundledCases(t *testing.T) {
	testutil.NeedsBrowsers(t)
	raw, err := os.ReadFile("../testdata/trace/cases.ndjson")
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var req struct {
			ID     string `json:"id"`
			Op     string `json:"op"`
			HTML   string `json:"html"`
			Script string `json:"script"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &req))
		require.Equal(t, "trace", req.Op, req.ID)
		t.Run(req.ID, func(t *testing.T) {
			traces := runAll(t, req.HTML, req.Script)
			v := compare.Traces(traces, trace.DefaultBufferTolerance)
			for name, tr := range traces {
				assert.False(t, tr.TimedOut, name)
				assert.NotEmpty(t, tr.Records, name)
			}
			t.Logf("%s: whole %s (outlier %q), %d records", req.ID, v.Whole.Kind, v.Whole.Outlier, len(traces[browser.Chromium].Records))
			if v.Whole.Kind != "unanimous" {
				reportPairs(t, traces, trace.DefaultBufferTolerance)
			}
			assert.True(t, v.Whole.Trusted(), "%s: %+v", req.ID, v)
		})
	}
}

// TestSealAtEveryPaddingLength: the recorder's HMAC-SHA-256 (its own, in JavaScript)
// agrees with Go's for payloads of every length modulo the 64-byte block, where
// SHA-256's padding takes one or two final blocks, and for a multi-block payload with
// non-ASCII text, in every engine.
func TestSealAtEveryPaddingLength(t *testing.T) {
	testutil.NeedsBrowsers(t)
	for n := 0; n < 64; n++ {
		tr, err := run(t, engines[0], "", fmt.Sprintf("trace.value('s', 'x'.repeat(%d)); trace.done();", n))
		require.NoError(t, err, "length %d", n)
		require.Len(t, tr.Records, 1)
		assert.Equal(t, `"`+strings.Repeat("x", n)+`"`, string(tr.Records[0].Value))
	}
	traces := runAll(t, "", `trace.value('big', 'é☃😀\u0001"\\'.repeat(100000)); trace.value('lone', '\ud800x\udc00'); trace.done();`)
	for name, tr := range traces {
		require.Len(t, tr.Records, 2, name)
		var s string
		require.NoError(t, json.Unmarshal(tr.Records[0].Value, &s), name)
		assert.Equal(t, strings.Repeat("é☃😀\u0001\"\\", 100000), s, name)
		assert.Equal(t, `"\ud800x\udc00"`, string(tr.Records[1].Value), name, "lone surrogates escaped, as JSON.stringify does")
	}
}

// TestDecodeRefusesWhatTheRecorderDidNotSeal is a unit test of Run.Decode alone (no
// engine): a result whose MAC, nonce or shape is not the recorder's is an error, and
// so is a trace the recorder ended at a bound.
func TestDecodeRefusesWhatTheRecorderDidNotSeal(t *testing.T) {
	key := trace.NewKey()
	r := trace.NewRun("", key, trace.Limits{})
	nonce := r.Args()[1].(map[string]any)["nonce"].(string)
	seal := func(k, payload string) json.RawMessage {
		m := hmac.New(sha256.New, []byte(k))
		m.Write([]byte(payload))
		b, _ := json.Marshal(map[string]string{"payload": payload, "mac": hex.EncodeToString(m.Sum(nil))})
		return b
	}
	good := `{"nonce":"` + nonce + `","error":"","timed_out":false,"origin":"o","is_secure_context":true,"records":[{"seq":0,"kind":"value","label":"a","value":1}]}`
	tr, err := r.Decode(seal(key, good), "c", "1", "default")
	require.NoError(t, err)
	assert.Len(t, tr.Records, 1)
	_, err = r.Decode(seal(trace.NewKey(), good), "c", "1", "default")
	assert.ErrorContains(t, err, "seal does not match")
	_, err = r.Decode(seal(key, strings.Replace(good, nonce, "0", 1)), "c", "1", "default")
	assert.ErrorContains(t, err, "another run")
	_, err = r.Decode(json.RawMessage(`{"timed_out":false,"records":[]}`), "c", "1", "default")
	assert.ErrorContains(t, err, "not a sealed trace")
	_, err = r.Decode(seal(key, strings.Replace(good, `"error":""`, `"error":"the trace exceeded --trace-max-records=1 records"`, 1)), "c", "1", "default")
	assert.EqualError(t, err, "trace: the trace exceeded --trace-max-records=1 records")
}
