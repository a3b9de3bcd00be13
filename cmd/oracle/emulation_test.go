package main

import (
	"encoding/json"
	"testing"

	"github.com/layout-oracle/oracle/probes"
	"github.com/layout-oracle/oracle/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under --profile=emulation, against the real browsers: the self-check (with the
// emulation checks) passes in all three, and each trace names what its engine
// applied and reads the profile's fixed values there. Chromium applies everything
// over CDP, Firefox the position over BiDi, WebKitGTK's WebDriver nothing
// (docs/profiles.md). Before the profile existed, --profile=emulation was refused.
func TestEmulationProfileAppliesFixedValues(t *testing.T) {
	t.Parallel() // own oracle, no tight timing (docs/testing.md)
	c := startOracle(t, "--pages=1", "--profile=emulation", "--log-level=warn")
	defer c.close()
	ping := c.send(t, map[string]any{"op": "ping"})
	assert.Equal(t, "emulation", ping["profile"])
	assert.ElementsMatch(t, []any{"chromium", "firefox", "webkit"}, ping["engines"], "every engine passed the emulation self-check: %v", ping)

	want := map[string][]string{"chromium": {"authenticator", "geolocation", "sensors"}, "firefox": {"geolocation"}, "webkit": nil}
	got := map[string]map[string]*trace.Trace{} // check -> engine -> trace
	for _, check := range probes.EmulationChecks {
		got[check.Name] = map[string]*trace.Trace{}
		for e, m := range traceAll(t, c, "", *check.Request.Script) {
			b, err := json.Marshal(m)
			require.NoError(t, err)
			var tr trace.Trace
			require.NoError(t, json.Unmarshal(b, &tr))
			got[check.Name][e] = &tr
			assert.Equal(t, want[e], tr.Emulated, "%s %s: emulated", check.Name, e)
			if want[e] == nil {
				assert.NotContains(t, m, "emulated", "%s: an engine that applied nothing has no emulated field", e)
			}
			assert.False(t, tr.TimedOut, "%s %s: every check ends in time, emulated or not", check.Name, e)
			assert.Empty(t, check.Expect(e, &tr), "%s %s", check.Name, e)
		}
	}
	value := func(check, engine, label string) string {
		for _, r := range got[check][engine].Records {
			if r.Label == label {
				return r.State + " " + string(r.Value)
			}
		}
		return "no record " + label
	}
	// The records came through a map (traceAll): their keys are sorted.
	array := func(v string) string { return ` {"$shape":"array","elements":[` + v + `],"length":3}` }
	// The targets, spelled out.
	assert.Equal(t, "fulfilled"+array("1,2,9"), value("emulated-sensors", "chromium", "Accelerometer"))
	for _, e := range []string{"chromium", "firefox"} {
		assert.Equal(t, "fulfilled"+array("48.8584,2.2945,10"), value("emulated-geolocation", e, "position"), e)
	}
	assert.Contains(t, value("emulated-authenticator", "chromium", "create"), `"attachment":{"type":"string","value":"platform"}`)
	// What the others answer (their platform, not a harness failure).
	assert.Equal(t, ` {"$shape":"array","elements":[],"length":0}`, value("emulated-sensors", "firefox", "exposed"), "Firefox has no Generic Sensor API")
	assert.Equal(t, ` {"$shape":"array","elements":[],"length":0}`, value("emulated-sensors", "webkit", "exposed"), "WebKitGTK has no Generic Sensor API")
	t.Logf("firefox create: %s; webkit geolocation: %s; webkit api: %s", value("emulated-authenticator", "firefox", "create"),
		value("emulated-geolocation", "webkit", "permission"), value("emulated-authenticator", "webkit", "api"))

	// The target in one trace: an Accelerometer, getCurrentPosition and
	// credentials.create, each guarded so that an engine without it still ends.
	one := traceAll(t, c, "", `const acc = typeof Accelerometer !== 'function' ? Promise.reject(new TypeError('no Accelerometer')) :
  new Promise((res, rej) => { const a = new Accelerometer(); a.onreading = () => { res([a.x, a.y, a.z]); a.stop(); }; a.onerror = e => rej(e.error); a.start(); });
const geo = navigator.permissions.query({name: 'geolocation'}).then(p => p.state !== 'granted' ? Promise.reject(new TypeError(p.state)) :
  new Promise((res, rej) => navigator.geolocation.getCurrentPosition(p => res([p.coords.latitude, p.coords.longitude, p.coords.accuracy]), rej, {timeout: 2000})));
const cred = typeof PublicKeyCredential !== 'function' ? Promise.reject(new TypeError('no WebAuthn')) :
  navigator.credentials.create({signal: AbortSignal.timeout(2000), publicKey: {rp: {name: 'x'}, user: {id: new Uint8Array([1]), name: 'u', displayName: 'U'},
    challenge: new Uint8Array(16), pubKeyCredParams: [{type: 'public-key', alg: -7}], authenticatorSelection: {residentKey: 'required', userVerification: 'required'}}})
  .then(c => c.authenticatorAttachment);
trace.settle('acc', acc); trace.settle('geo', geo); trace.settle('cred', cred);
Promise.allSettled([acc, geo, cred]).then(() => trace.done());`)
	settled := func(e, label string) string {
		for _, r := range records(one[e]) {
			if r["label"] == label {
				b, _ := json.Marshal(r["value"])
				return r["state"].(string) + " " + string(b)
			}
		}
		return "no record " + label
	}
	assert.Equal(t, "fulfilled"+array("1,2,9"), settled("chromium", "acc"))
	assert.Equal(t, "fulfilled"+array("48.8584,2.2945,10"), settled("chromium", "geo"))
	assert.Equal(t, `fulfilled "platform"`, settled("chromium", "cred"))
	assert.Equal(t, "fulfilled"+array("48.8584,2.2945,10"), settled("firefox", "geo"))
	for e, tr := range one {
		assert.Equal(t, false, tr["timed_out"], e)
		t.Logf("%s emulated %v: acc %s; geo %s; cred %s", e, tr["emulated"], settled(e, "acc"), settled(e, "geo"), settled(e, "cred"))
	}

	chromium := func(script string) *trace.Trace {
		t.Helper()
		resp := c.send(t, map[string]any{"op": "trace", "engines": []string{"chromium"}, "script": script})
		m, _ := resp["traces"].(map[string]any)
		require.Contains(t, m, "chromium", "%v", resp)
		b, _ := json.Marshal(m["chromium"])
		var tr trace.Trace
		require.NoError(t, json.Unmarshal(b, &tr))
		return &tr
	}
	// A case that leaves history entries costs a new page at the reset: it gets the
	// emulation too.
	chromium(`history.pushState(null, '', '#a'); history.pushState(null, '', '#b'); trace.done();`)
	tr := chromium(*probes.SelfCheckSensors.Request.Script)
	assert.Equal(t, want["chromium"], tr.Emulated, "a new page after a reset")
	assert.Empty(t, probes.SelfCheckSensors.Expect("chromium", tr))

	// Each case's credentials are its own: rp.id is the case's own host (every case
	// has a fresh c….localhost), and Chromium refuses the shared "localhost".
	create := chromium(`navigator.credentials.create({publicKey: {rp: {id: 'localhost', name: 'x'},
  user: {id: new Uint8Array([7]), name: 'u', displayName: 'U'}, challenge: new Uint8Array(16),
  pubKeyCredParams: [{type: 'public-key', alg: -7}], authenticatorSelection: {residentKey: 'required', userVerification: 'required'}}})
  .then(c => trace.value('created', c.type), e => trace.error('create', e)).finally(() => trace.done());`)
	require.Len(t, create.Records, 1)
	assert.Equal(t, `{"$error":true,"name":"SecurityError"}`, string(create.Records[0].Value))
}
