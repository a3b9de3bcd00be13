package main

// Running untrusted cases (docs/untrusted.md): the network allowlist, against
// the real three engines. The allowlist tests count connections to a listener of
// their own, which no other case knows, so they run on the ground-truth oracle (one
// page per engine); the tests that kill processes, flood the pages or need other
// flags have oracles of their own.

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	oracleclient "github.com/layout-oracle/oracle/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingListener accepts TCP connections on a loopback port of its own and counts
// them; each gets a permissive HTTP answer, so a leak would also show in the page.
type countingListener struct {
	ln   net.Listener
	udp  net.PacketConn
	tcp  atomic.Int64
	pkts atomic.Int64
}

func listenCounting(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	l := &countingListener{ln: ln, udp: udp}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.tcp.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(2 * time.Second))
				buf := make([]byte, 4096)
				c.Read(buf)
				body := "leaked"
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			l.pkts.Add(1)
		}
	}()
	t.Cleanup(func() { ln.Close(); udp.Close() })
	return l
}

func (l *countingListener) port() int    { return l.ln.Addr().(*net.TCPAddr).Port }
func (l *countingListener) udpPort() int { return l.udp.LocalAddr().(*net.UDPAddr).Port }

// leakScript tries every means a page has to reach urls (fetch, XHR, <img>, <iframe>,
// <link>, <script>, EventSource, WebSocket, sendBeacon, window.open, WebRTC to a TURN
// server over TCP and a STUN server over UDP), then reads file:///etc/passwd by every
// means, then checks data: and blob:. Results go to record(label, value); finish()
// is called when all attempts have settled.
func leakScript(urls []string, wsURL, turnURL, stunURL string, parts string) string {
	u, _ := json.Marshal(urls)
	return `(async () => {
  const parts = ` + jsString(parts) + `;
  const urls = ` + string(u) + `;
  const settle = (p, ms) => Promise.race([p, new Promise(r => setTimeout(() => r('pending'), ms))]);
  const add = (tag, attrs) => new Promise(res => {
    const el = document.createElement(tag);
    el.onload = () => res('load'); el.onerror = () => res('error');
    for (const k in attrs) el.setAttribute(k, attrs[k]);
    document.body.appendChild(el);
    setTimeout(() => res('pending'), 1500);
  });
  // data: and blob: keep working.
  if (parts.includes('data')) {
  record('data fetch', await fetch('data:text/plain,hi').then(r => r.text(), e => 'failed'));
  const blobURL = URL.createObjectURL(new Blob(['blob body'], {type: 'text/plain'}));
  record('blob fetch', await fetch(blobURL).then(r => r.text(), e => 'failed'));
  const gif = 'data:image/gif;base64,R0lGODlhAwACAIAAAP///wAAACwAAAAAAwACAAACAoRRADs=';
  record('data img', await new Promise(res => { const i = new Image(); i.onload = () => res(i.naturalWidth + 'x' + i.naturalHeight); i.onerror = () => res('error'); i.src = gif; }));
  const pngBlob = await fetch(gif).then(r => r.blob());
  record('blob img', await new Promise(res => { const i = new Image(); i.onload = () => res(i.naturalWidth + 'x' + i.naturalHeight); i.onerror = () => res('error'); i.src = URL.createObjectURL(pngBlob); }));
  }
  // file:///etc/passwd by every means, beside the network attempts; anything read is recorded.
  const file = 'file:///etc/passwd';
  const wait = ms => new Promise(r => setTimeout(r, ms));
  const fileReads = !parts.includes('file') ? Promise.resolve(null) : Promise.all([
    settle(fetch(file).then(r => r.text(), e => 'fetch failed'), 1000),
    new Promise(res => { try { const x = new XMLHttpRequest(); x.open('GET', file); x.onload = () => res(x.responseText); x.onerror = () => res('xhr error'); x.send(); setTimeout(() => res('xhr pending'), 1000); } catch (e) { res('xhr threw'); } }),
    (async () => { const fr = document.createElement('iframe'); fr.src = file; document.body.appendChild(fr); await wait(700);
      try { return String(fr.contentDocument && fr.contentDocument.documentElement && fr.contentDocument.documentElement.textContent); } catch (e) { return 'iframe ' + e.name; } })(),
    (async () => { try { const w = window.open(file); await wait(700); return String(w && w.document && w.document.documentElement && w.document.documentElement.textContent); } catch (e) { return 'popup ' + e.name; } })(),
    (async () => { const obj = document.createElement('object'); obj.data = file; document.body.appendChild(obj); await wait(700);
      try { return String(obj.contentDocument && obj.contentDocument.documentElement.textContent); } catch (e) { return 'object ' + e.name; } })(),
  ]);
  const tries = [];
  if (parts.includes('net')) for (const url of urls) {
    tries.push(settle(fetch(url).then(r => r.text()).then(t => 'fetch ok ' + t, e => 'fetch failed'), 1500));
    tries.push(settle(fetch(url, {mode: 'no-cors'}).then(r => 'no-cors ' + r.type, e => 'no-cors failed'), 1500));
    tries.push(new Promise(res => { try { const x = new XMLHttpRequest(); x.open('GET', url); x.onload = () => res('xhr ' + x.status + ' ' + x.responseText); x.onerror = () => res('xhr error'); x.send(); setTimeout(() => res('xhr pending'), 1500); } catch (e) { res('xhr threw'); } }));
    tries.push(add('img', {src: url + 'img'}));
    tries.push(add('iframe', {src: url + 'iframe'}));
    tries.push(add('link', {rel: 'stylesheet', href: url + 'css'}));
    tries.push(add('link', {rel: 'prefetch', href: url + 'prefetch'}));
    tries.push(add('script', {src: url + 'js'}));
    tries.push(new Promise(res => { try { const s = new EventSource(url + 'es'); s.onerror = () => { s.close(); res('es error'); }; s.onopen = () => res('es open'); setTimeout(() => res('es pending'), 1500); } catch (e) { res('es threw'); } }));
    try { tries.push(Promise.resolve('beacon ' + navigator.sendBeacon(url + 'beacon', 'x'))); } catch (e) { tries.push(Promise.resolve('beacon threw')); }
    try { const w = window.open(url + 'popup'); tries.push(Promise.resolve('open ' + (w ? 'window' : 'null'))); } catch (e) { tries.push(Promise.resolve('open threw')); }
  }
  if (parts.includes('net')) tries.push(new Promise(res => { try { const w = new WebSocket(` + jsString(wsURL) + `); w.onopen = () => res('ws open'); w.onerror = () => res('ws error'); setTimeout(() => res('ws pending'), 1500); } catch (e) { res('ws threw'); } }));
  if (parts.includes('net')) tries.push(new Promise(res => {
    if (typeof RTCPeerConnection !== 'function') { res('no RTCPeerConnection'); return; }
    try {
      const pc = new RTCPeerConnection({iceServers: [{urls: ` + jsString(turnURL) + `, username: 'u', credential: 'p'}, {urls: ` + jsString(stunURL) + `}]});
      pc.createDataChannel('d');
      pc.createOffer().then(o => pc.setLocalDescription(o)).catch(() => {});
      setTimeout(() => { pc.close(); res('rtc tried'); }, 1500);
    } catch (e) { res('rtc threw ' + e.name); }
  }));
  const leaks = await Promise.all(tries);
  if (parts.includes('net')) record('network', leaks.join(' | '));
  const files = await fileReads;
  if (files) record('file', files.join(' | '));

  finish();
})()`
}

func leakTargets(l *countingListener) (urls []string, ws, turn, stun string) {
	p := strconv.Itoa(l.port())
	urls = []string{
		"http://127.0.0.1:" + p + "/",
		"http://localhost:" + p + "/",
		"http://c0123456789abcdef0123.localhost:" + p + "/", // the oracle's host shape, another port
		"http://2130706433:" + p + "/",                      // 127.0.0.1 as one number
	}
	return urls, "ws://127.0.0.1:" + p + "/ws", "turn:127.0.0.1:" + p + "?transport=tcp",
		"stun:127.0.0.1:" + strconv.Itoa(l.udpPort())
}

// Fails on the old main: every engine connected to the listener (fetch, <img>, ... on
// another loopback port), so its count was far above zero.
func TestNetworkAllowlistTraceCannotReachOtherPortsOrFiles(t *testing.T) {
	c := gtOracle(t)
	defer logOnFailure(t, c)
	traceReachesNoOtherPortOrFile(t, c, 3)
}

// The same on geometry pages (about:blank plus document.write): markup and script.
func TestNetworkAllowlistGeometryCannotReachOtherPorts(t *testing.T) {
	c := gtOracle(t)
	defer logOnFailure(t, c)
	geometryReachesNoOtherPort(t, c, 3)
}

// traceReachesNoOtherPortOrFile sends traces that try every way out to a listener on
// another loopback port, file: and data:/blob:, and requires that none reached it, on
// each of c's engines (engines of them).
func traceReachesNoOtherPortOrFile(t *testing.T, c *client, engines int) {
	t.Helper()
	l := listenCounting(t)
	urls, ws, turn, stun := leakTargets(l)
	// One trace per target (and one for file: and data:/blob:): all of them in one
	// trace did not fit the trace's 5 s in Firefox on a loaded machine.
	run := func(urls []string, parts string) map[string]map[string]any {
		script := strings.ReplaceAll(strings.ReplaceAll(leakScript(urls, ws, turn, stun, parts),
			"record(", "trace.value("), "finish()", "trace.done()")
		resp := c.send(t, map[string]any{"op": "trace", "script": script})
		require.Nil(t, resp["errors"])
		traces := resp["traces"].(map[string]any)
		require.Len(t, traces, engines)
		out := map[string]map[string]any{}
		for e, raw := range traces {
			tr := raw.(map[string]any)
			assert.Equal(t, false, tr["timed_out"], "%s timed out (%s)", e, parts)
			out[e] = map[string]any{}
			for _, r := range records(tr) {
				out[e][r["label"].(string)] = r["value"]
			}
		}
		return out
	}
	for e, got := range run(nil, "data file") {
		t.Logf("%s file: %v", e, got["file"])
		assert.NotContains(t, fmt.Sprint(got["file"]), "root:", "%s: /etc/passwd was read", e)
		assert.NotNil(t, got["file"], "%s: the file attempts ran", e)
		assert.Equal(t, "hi", got["data fetch"], e)
		assert.Equal(t, "blob body", got["blob fetch"], e)
		assert.Equal(t, "3x2", got["data img"], e)
		assert.Equal(t, "3x2", got["blob img"], e)
	}
	for _, u := range urls {
		for e, got := range run([]string{u}, "net") {
			t.Logf("%s %s: %v", e, u, got["network"])
			assert.NotNil(t, got["network"], "%s: the attempts ran", e)
			assert.NotContains(t, fmt.Sprint(got["network"]), "leaked", "%s: a request reached the listener", e)
		}
	}
	// Connections may trail the answer (a popup loading): the count is read after
	// a moment, and after the next case.
	c.send(t, caseOK())
	time.Sleep(time.Second)
	assert.Zero(t, l.tcp.Load(), "connections reached the listener on another loopback port")
	assert.Zero(t, l.pkts.Load(), "UDP packets reached the listener on another loopback port")
}

// geometryReachesNoOtherPort sends a geometry case whose markup and script try every
// way out to a listener on another loopback port, and requires that none reached it,
// with each of c's engines (engines of them) answering.
func geometryReachesNoOtherPort(t *testing.T, c *client, engines int) {
	t.Helper()
	l := listenCounting(t)
	urls, ws, turn, stun := leakTargets(l)
	u := urls[0]
	html := `<img src="` + u + `m-img" width=3 height=2><iframe src="` + u + `m-iframe"></iframe>` +
		`<link rel=stylesheet href="` + u + `m-css"><script src="` + u + `m-js"></script>` +
		`<video src="` + u + `m-video"></video><object data="` + u + `m-object"></object>` +
		`<div style="background-image:url(` + u + `m-bg);width:3px;height:3px"></div>`
	// The geometry script cannot await: it starts every attempt, and the settle point
	// (images) plus a moment let them run.
	script := `window.__log = []; const record = (k, v) => window.__log.push(k + '=' + v); const finish = () => {};` +
		leakScript(urls, ws, turn, stun, "net") + `;`
	resp := c.send(t, map[string]any{"html": html, "script": script})
	dumps, _ := resp["dumps"].(map[string]any)
	assert.Len(t, dumps, engines, "errors: %v", resp["errors"])
	c.send(t, caseOK())
	time.Sleep(time.Second)
	assert.Zero(t, l.tcp.Load(), "connections reached the listener on another loopback port")
	assert.Zero(t, l.pkts.Load(), "UDP packets reached the listener on another loopback port")
}

func await(t *testing.T, c *client, call *oracleclient.Call, what string) map[string]any {
	t.Helper()
	return decode(t, c.answerLine(t, call, 4*time.Minute, what))
}

// Hostile cases that run past their deadline on every page of every engine, and an
// innocent case right behind them: the innocent case is answered normally, however
// long the pages take to recover. Fails on the old main with "no free firefox page
// within 10s": the innocent case's deadline ran while it waited for a
// page whose browser was being relaunched after the hostile case.
//
// One page per engine, so one hostile case holds every page; with the default two
// pages it took two hostile cases and twice the launches and relaunches, for the
// same wait of the innocent case on a relaunching page.
func TestAHostileTimeoutNeverFailsTheNextInnocentCase(t *testing.T) {
	c := startOracle(t, "--pages=1", "--deadline=10s", "--log-level=warn", "--self-check=false")
	defer c.close()
	defer logOnFailure(t, c)
	h := c.sendAsync(t, "hostile", map[string]any{"html": "<p>x</p>", "script": "while (true) {}"})
	innocent := c.sendAsync(t, "innocent", caseOK())
	resp := await(t, c, h, "the hostile case")
	errs, _ := resp["errors"].(map[string]any)
	for _, e := range engines {
		assert.Contains(t, errs[e], "timed out", "%s: the hostile case pays with its own answer", e)
	}
	resp = await(t, c, innocent, "the innocent case")
	assert.Nil(t, resp["errors"], "the innocent case behind the hostile one")
	assert.Len(t, resp["dumps"], 3)
}

// webProcesses finds WebKitGTK's web processes below the oracle.
func webProcesses(oracle int) []int {
	var out []int
	for _, pid := range descendants(oracle) {
		if args := cmdline(pid); len(args) > 0 && filepath.Base(args[0]) == "WebKitWebProcess" {
			out = append(out, pid)
		}
	}
	return out
}

// A Chromium renderer, a Firefox content process and a WebKitGTK web process killed
// (kill -9 by pid, the exact processes below the oracle) while the engine is idle:
// the next case is answered normally in every engine, and so is the one after.
// Fails on the old main: the next case failed in (engine list in docs/untrusted.md).
//
// On the ground-truth oracle (one page per engine): sequential tests run alone, so
// it is idle between cases, and the tests after this one run on what it recovered.
func TestContentProcessKilledWhileIdleDoesNotFailTheNextCase(t *testing.T) {
	c := gtOracle(t)
	defer logOnFailure(t, c)
	resp := c.send(t, caseOK())
	require.Nil(t, resp["errors"])
	time.Sleep(500 * time.Millisecond) // the reset after the case has run: the engines are idle
	found := renderers(c.pid())
	found["webkit"] = webProcesses(c.pid())
	for _, e := range engines {
		require.NotEmpty(t, found[e], "%s: its content processes are found", e)
		t.Logf("%s: killing %v", e, found[e])
		killAll(t, found[e]...)
	}
	time.Sleep(time.Second) // idle after the kill
	for i := 0; i < 2; i++ {
		start := time.Now()
		resp := c.send(t, caseOK())
		assert.Nil(t, resp["errors"], "case %d after the kill", i)
		assert.Len(t, resp["dumps"], 3, "case %d after the kill", i)
		t.Logf("case %d after the kill answered in %v", i, time.Since(start))
	}
}

// vmHWM is a process's peak resident set, in kB.
func vmHWM(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			n, err := strconv.Atoi(f[1])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// A dump over --dump-max-nodes (elements, boxes, or style text) is that engine's
// error naming the bound, in every engine; a page under it is answered; and a page
// of 150,000 elements under the default bound is refused with the oracle's memory
// bounded. Fails on the old main: there was no bound (the 150,000-element dump was
// sent whole).
func TestDumpOverTheNodeLimitIsAClearError(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	// The default bound, and the memory it keeps, need a second oracle: it launches
	// now, beside the first one's cases, instead of after them.
	// The walk reads 100,000 elements before it stops: a longer deadline than the
	// default, on a loaded 2-core machine.
	d := startOracleNow(t, "--pages=1", "--log-level=warn", "--self-check=false", "--deadline=120s")
	defer d.close()
	c := startOracle(t, "--pages=1", "--log-level=warn", "--self-check=false", "--dump-max-nodes=1000")
	defer c.close()
	defer logOnFailure(t, c)
	divs := func(n int) string {
		return `for (let i = 0; i < ` + strconv.Itoa(n) + `; i++) document.body.appendChild(document.createElement('div'));`
	}
	resp := c.send(t, map[string]any{"html": "<p>x</p>", "script": divs(900)})
	assert.Nil(t, resp["errors"], "900 divs are under the bound")
	for what, script := range map[string]string{
		"elements": divs(1001),
		// One element with 5000 line boxes: 5000 boxes > 4 per allowed node.
		"boxes": `const s = document.createElement('span'); s.textContent = 'a\n'.repeat(5000); s.style.whiteSpace = 'pre'; document.body.appendChild(s);`,
		// 100 hidden elements whose computed width is a min() of 400 mixed-unit terms
		// (kept as written: only used values resolve to px): over 512 bytes of style
		// text per allowed node.
		"style text": `const w = 'min(' + Array.from({length: 400}, (_, i) => 'calc(' + (i + 1) + '% + ' + (i + 1) + 'px)').join(', ') + ')'; for (let i = 0; i < 100; i++) { const d = document.createElement('div'); d.style.display = 'none'; d.style.width = w; d.style.minWidth = w; d.style.maxWidth = w; document.body.appendChild(d); }`,
	} {
		resp := c.send(t, map[string]any{"html": "<p>x</p>", "script": script})
		errs, _ := resp["errors"].(map[string]any)
		for _, e := range engines {
			assert.Contains(t, errs[e], "--dump-max-nodes=1000", "%s: %s over the bound", e, what)
		}
		t.Logf("%s: %v", what, errs)
	}
	resp = c.send(t, caseOK())
	assert.Nil(t, resp["errors"], "the next case is answered")
	c.close() // its browsers end before the large page

	d.waitStarted(t)
	resp = d.send(t, map[string]any{"html": "<p>x</p>", "script": `document.body.innerHTML = '<i></i>'.repeat(150000);`})
	errs, _ := resp["errors"].(map[string]any)
	for _, e := range engines {
		assert.Contains(t, errs[e], "the dump exceeded --dump-max-nodes=100000 elements", e)
	}
	hwm := vmHWM(t, d.pid())
	t.Logf("oracle peak RSS after a 150,000-element page: %d MB", hwm/1024)
	assert.Less(t, hwm, 400*1024, "the oracle's peak RSS")
}

// A case that went to a URL leaves no visited link for a later case to see: Firefox's
// global history made a link to it :visited (red, not blue) in every later case's
// screenshot. Pixels are the only witness: getComputedStyle never tells :visited.
func TestNoVisitedLinkOutlivesItsCase(t *testing.T) {
	c := startOracle(t, "--pages=1", "--log-level=warn", "--self-check=false")
	link := `<style>a{font-size:90px} a:visited{color:red} a:link{color:blue}</style><a href='http://example.com/v1'>LINK</a>`
	shot := func(id string) map[string]any {
		return c.send(t, map[string]any{"id": id, "html": link, "screenshot": true})
	}
	before := shot("unvisited")
	c.send(t, map[string]any{"id": "goes-there", "op": "trace", "script": "location.href = 'http://example.com/v1'"})
	after := shot("after-another-case-went-there")
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		b, _ := before["dumps"].(map[string]any)[e].(map[string]any)["screenshot"].(string)
		a, _ := after["dumps"].(map[string]any)[e].(map[string]any)["screenshot"].(string)
		require.NotEmpty(t, b, "%s: a screenshot", e)
		assert.True(t, a == b, "%s: the link looks different after another case went to its URL", e)
	}
}
