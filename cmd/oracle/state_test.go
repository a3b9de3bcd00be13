package main

// Per-case state (docs/untrusted.md): every case sees the storage, cookies,
// caches and session history the first case the oracle ran saw, in every engine.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stateProbeJS reads what a case could inherit from earlier ones, synchronously:
// session history, storage, cookies, the window's name.
const stateProbeJS = `(() => {
  const s = {history: history.length, name: window.name};
  try { s.ls = localStorage.length; } catch (e) { s.ls = e.name; }
  try { s.ss = sessionStorage.length; } catch (e) { s.ss = e.name; }
  try { s.cookie = document.cookie; } catch (e) { s.cookie = e.name; }
  return s;
})()`

// stateProbeAsyncJS adds what only a promise tells: caches, IndexedDB, service workers.
const stateProbeAsyncJS = `(async () => {
  const s = ` + stateProbeJS + `;
  try { s.caches = (await caches.keys()).length; } catch (e) { s.caches = e.name; }
  try { s.idb = indexedDB.databases ? (await indexedDB.databases()).length : 'n/a'; } catch (e) { s.idb = e.name; }
  try { s.sw = (await navigator.serviceWorker.getRegistrations()).length; } catch (e) { s.sw = 'n/a'; }
  return s;
})()`

// dirtyJS leaves behind all it can: storage, cookies (its own and for the parent
// domain), the window's name, caches, a database, session history (pushState, hash
// changes, an iframe that navigates).
const dirtyJS = `
  try { localStorage.setItem('k', 'v'); sessionStorage.setItem('k', 'v'); } catch (e) {}
  try { document.cookie = 'a=1; max-age=3600; path=/'; document.cookie = 'b=2; domain=localhost; max-age=3600; path=/'; } catch (e) {}
  window.name = 'dirty';
  try { caches.open('c').then(c => c.put(new Request(location.href + 'x'), new Response('x'))).catch(() => {}); } catch (e) {}
  try { indexedDB.open('db', 1); } catch (e) {}
  for (let i = 0; i < 3; i++) { try { history.pushState({i}, '', '#p' + i); } catch (e) {} }
  location.hash = 'h';
  const f = document.createElement('iframe'); document.body.appendChild(f);
  f.src = 'about:blank#1'; setTimeout(() => { try { f.src = 'about:blank#2'; } catch (e) {} }, 10);
`

// Fails on the old main: history.length grew with every case (the reset's navigation
// to about:blank and a case's own pushState and hash changes stayed in the page's
// session history).
func TestEveryCaseStartsWithTheFirstCasesState(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	c := startOracle(t, "--pages=1", "--log-level=warn")
	defer c.close()
	defer logOnFailure(t, c)
	traceProbe := func() map[string]any {
		resp := c.send(t, map[string]any{"op": "trace", "script": `(async () => { trace.value('s', await ` + stateProbeAsyncJS + `); trace.done(); })()`})
		require.Nil(t, resp["errors"])
		out := map[string]any{}
		for e, tr := range resp["traces"].(map[string]any) {
			for _, r := range records(tr.(map[string]any)) {
				out[e] = r["value"]
			}
		}
		return out
	}
	reflectProbe := func(op string) map[string]any {
		script := `document.getElementById('r').setAttribute('v', JSON.stringify(` + stateProbeJS + `));`
		req := map[string]any{"op": "reflect", "html": `<p id=r></p>`, "script": script,
			"probes": []any{map[string]any{"selector": "#r", "attr": "v"}}}
		if op == "geometry" { // the geometry walk reports no attribute: the probe writes the state as text
			req = map[string]any{"html": `<p id=r></p>`, "script": `document.getElementById('r').textContent = JSON.stringify(` + stateProbeJS + `);`}
		}
		resp := c.send(t, req)
		require.Nil(t, resp["errors"])
		out := map[string]any{}
		if op == "geometry" {
			for e, d := range resp["dumps"].(map[string]any) {
				out[e] = d.(map[string]any)["nodes"] // the text's width is the state's
			}
			return out
		}
		for e, s := range resp["states"].(map[string]any) {
			out[e] = s.(map[string]any)["observations"]
		}
		return out
	}
	firstTrace, firstReflect, firstGeometry := traceProbe(), reflectProbe("reflect"), reflectProbe("geometry")
	t.Logf("first trace state: %v", firstTrace)
	for _, e := range engines {
		// A fresh tab's history: the self-check's cases ran before this one, and
		// every trace before left an entry on the old main (6 here).
		h := firstTrace[e].(map[string]any)["props"].(map[string]any)["history"].(map[string]any)["value"]
		assert.Equal(t, 1.0, h, "%s: history.length on a trace page", e)
	}
	t.Logf("first reflect state: %v", firstReflect)
	for round := 0; round < 2; round++ {
		// Dirty every kind of page: a trace (on its origin), a reflect and a geometry
		// case (about:blank), and a case that navigates its page away.
		resp := c.send(t, map[string]any{"op": "trace", "script": dirtyJS + `setTimeout(() => trace.done(), 300);`})
		require.Nil(t, resp["errors"])
		resp = c.send(t, map[string]any{"op": "reflect", "html": `<p id=r></p>`, "script": dirtyJS,
			"probes": []any{map[string]any{"selector": "#r", "attr": "id"}}})
		require.Nil(t, resp["errors"])
		c.send(t, map[string]any{"html": `<p>x</p>`, "script": dirtyJS})
		c.send(t, map[string]any{"html": `<p>x</p><script>location.href = 'about:blank#away';</script>`})
		assert.Equal(t, firstTrace, traceProbe(), "round %d: a trace sees the first case's state", round)
		assert.Equal(t, firstReflect, reflectProbe("reflect"), "round %d: a reflect case sees the first case's state", round)
		assert.Equal(t, firstGeometry, reflectProbe("geometry"), "round %d: a geometry case sees the first case's state", round)
	}
}
