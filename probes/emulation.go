package probes

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/trace"
)

// The emulation profile's checks (docs/profiles.md): each reads one emulated API and,
// in every engine whose trace lists that emulation, must find the profile's fixed
// values. An engine that does not list it is not checked (its trace still says what
// its platform answers). Each is a startup self-check under the profile (an engine
// that claims an emulation and does not deliver it is out of service) and a probe.
// Every call is bounded well inside the recorder's 5 s: an engine without the
// emulation must still reach trace.done().

// emulationSensors are the Generic Sensor interfaces and the CDP sensor type each
// reads, in the order the check records them.
var emulationSensors = [][2]string{
	{"Accelerometer", "accelerometer"}, {"LinearAccelerationSensor", "linear-acceleration"},
	{"GravitySensor", "gravity"}, {"Gyroscope", "gyroscope"}, {"Magnetometer", "magnetometer"},
	{"AbsoluteOrientationSensor", "absolute-orientation"}, {"RelativeOrientationSensor", "relative-orientation"},
	{"AmbientLightSensor", "ambient-light"},
}

var (
	// SelfCheckSensors reads each Generic Sensor the engine exposes once.
	SelfCheckSensors = oracle.SelfCheck{Name: "emulated-sensors", Expect: expectSensors,
		Request: oracle.Request{Op: oracle.OpTrace, Script: str(`const names = ` + sensorNamesJS() + `;
const read = (name) => new Promise((res, rej) => {
  const s = new self[name]({frequency: 10});
  const t = setTimeout(() => { s.stop(); rej(new DOMException('no reading in 1.5 s', 'TimeoutError')); }, 1500);
  s.onreading = () => {
    clearTimeout(t);
    const v = s.quaternion ? Array.from(s.quaternion) : name === 'AmbientLightSensor' ? [s.illuminance] : [s.x, s.y, s.z];
    s.stop(); res(v);
  };
  s.onerror = e => { clearTimeout(t); s.stop(); rej(e.error); };
  s.start();
});
trace.value('exposed', names.filter(n => typeof self[n] === 'function'));
// trace.settle returns nothing: wait for the promises themselves, whose records
// trace.settle's own reactions (registered first) push before done.
Promise.allSettled(names.filter(n => typeof self[n] === 'function').map(n => { const p = read(n); trace.settle(n, p); return p; }))
  .then(() => trace.done());`)}}

	// selfCheckGeolocation asks for the position, once the permission says granted
	// (an engine that would prompt is not asked: WebKitGTK's MiniBrowser shows an
	// infobar, which changes the viewport).
	selfCheckGeolocation = oracle.SelfCheck{Name: "emulated-geolocation", Expect: expectGeolocation,
		Request: oracle.Request{Op: oracle.OpTrace, Script: str(`(async () => {
  let state = 'no permissions API';
  try { state = (await navigator.permissions.query({name: 'geolocation'})).state; } catch (e) { state = e.name; }
  trace.value('permission', state);
  if (state === 'granted') {
    const position = new Promise((res, rej) => navigator.geolocation.getCurrentPosition(
      p => res([p.coords.latitude, p.coords.longitude, p.coords.accuracy]),
      e => rej(new DOMException(e.message, ['', 'NotAllowedError', 'NotReadableError', 'TimeoutError'][e.code] || 'UnknownError')),
      {timeout: 2000, maximumAge: 0}));
    trace.settle('position', position);
    await position.catch(() => {});
  }
})().finally(() => trace.done());`)}}

	// selfCheckAuthenticator creates a resident, user-verified credential.
	selfCheckAuthenticator = oracle.SelfCheck{Name: "emulated-authenticator", Expect: expectAuthenticator,
		Request: oracle.Request{Op: oracle.OpTrace, Script: str(`(async () => {
  trace.value('api', typeof PublicKeyCredential);
  if (typeof PublicKeyCredential !== 'function') return;
  const created = navigator.credentials.create({signal: AbortSignal.timeout(2000), publicKey: {
    rp: {name: 'oracle'}, user: {id: new Uint8Array([1, 2, 3]), name: 'u', displayName: 'U'},
    challenge: new Uint8Array(16), pubKeyCredParams: [{type: 'public-key', alg: -7}],
    authenticatorSelection: {residentKey: 'required', userVerification: 'required'}, timeout: 2000}})
    .then(c => ({type: c.type, attachment: c.authenticatorAttachment, transports: c.response.getTransports(),
      rk: c.getClientExtensionResults().credProps ? c.getClientExtensionResults().credProps.rk : null}));
  trace.settle('create', created);
  await created.catch(() => {});
})().finally(() => trace.done());`)}}
)

// EmulationChecks are the emulation profile's self-checks, in order.
var EmulationChecks = []oracle.SelfCheck{SelfCheckSensors, selfCheckGeolocation, selfCheckAuthenticator}

// emulationProbe is an emulation check as a probe, run under the emulation profile only.
func emulationProbe(c oracle.SelfCheck, description string) probe {
	p := fromSelfCheck(c, description)
	p.Profile = profiles.EmulationProfile.Name
	return p
}

func sensorNamesJS() string {
	var names []string
	for _, s := range emulationSensors {
		names = append(names, s[0])
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// applied says whether t's engine lists emulation (only those are checked).
func applied(t *trace.Trace, emulation string) bool { return slices.Contains(t.Emulated, emulation) }

// recordOf is t's record labeled label (nil: none).
func recordOf(t *trace.Trace, label string) *trace.Record {
	for i := range t.Records {
		if t.Records[i].Label == label {
			return &t.Records[i]
		}
	}
	return nil
}

// fulfilledNumbers is the numbers a record's array value holds, when the record is a
// fulfilled settle (or a value) of an array of numbers; else why not.
func fulfilledNumbers(r *trace.Record, label string) ([]float64, string) {
	if r == nil {
		return nil, label + ": not recorded"
	}
	if r.Kind == "settle" && r.State != "fulfilled" {
		return nil, fmt.Sprintf("%s: %s with %s", label, r.State, r.Value)
	}
	var a struct {
		Elements []float64 `json:"elements"`
	}
	if err := json.Unmarshal(r.Value, &a); err != nil {
		return nil, fmt.Sprintf("%s: not an array of numbers: %s", label, r.Value)
	}
	return a.Elements, ""
}

// sensorTolerance is half of Chromium's rounding step for rotation rates (0.1°/s, in
// rad/s): its gyroscope reads (1, 2, 3) rad/s as (1.0000737, 2.0001473, 3.000221).
// The other fixed readings survive its rounding exactly.
var sensorTolerance = 0.05 * math.Pi / 180

// sameNumbers: the values within tolerance.
func sameNumbers(got, want []float64, tolerance float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tolerance {
			return false
		}
	}
	return true
}

func expectSensors(engine string, t *trace.Trace) []string {
	if !applied(t, profiles.EmulateSensors) {
		return nil
	}
	var exposed []string
	if r := recordOf(t, "exposed"); r != nil {
		var a struct {
			Elements []string `json:"elements"`
		}
		_ = json.Unmarshal(r.Value, &a)
		exposed = a.Elements
	}
	var wrong []string
	if !slices.Contains(exposed, "Accelerometer") {
		wrong = append(wrong, "lists sensors but exposes no Accelerometer")
	}
	for _, s := range emulationSensors {
		if !slices.Contains(exposed, s[0]) {
			continue
		}
		fixed := profiles.FixedEmulation.Sensor(s[1])
		var want []float64
		switch {
		case fixed == nil:
			continue
		case fixed.XYZ != nil:
			want = fixed.XYZ[:]
		case fixed.Quaternion != nil:
			want = fixed.Quaternion[:]
		case fixed.Single != nil:
			want = []float64{*fixed.Single}
		}
		got, why := fulfilledNumbers(recordOf(t, s[0]), s[0])
		switch {
		case why != "":
			wrong = append(wrong, why)
		case !sameNumbers(got, want, sensorTolerance):
			wrong = append(wrong, fmt.Sprintf("%s read %v, the profile's fixed reading is %v", s[0], got, want))
		}
	}
	return wrong
}

func expectGeolocation(engine string, t *trace.Trace) []string {
	if !applied(t, profiles.EmulateGeolocation) {
		return nil
	}
	g := profiles.FixedEmulation.Geolocation
	if r := recordOf(t, "permission"); r == nil || string(r.Value) != `"granted"` {
		return []string{"lists geolocation but its permission is not granted"}
	}
	got, why := fulfilledNumbers(recordOf(t, "position"), "position")
	if why != "" {
		return []string{why}
	}
	if want := []float64{g.Latitude, g.Longitude, g.Accuracy}; !sameNumbers(got, want, 1e-9) {
		return []string{fmt.Sprintf("position %v, the profile's fixed position is %v", got, want)}
	}
	return nil
}

func expectAuthenticator(engine string, t *trace.Trace) []string {
	if !applied(t, profiles.EmulateAuthenticator) {
		return nil
	}
	r := recordOf(t, "create")
	if r == nil || r.Kind != "settle" || r.State != "fulfilled" {
		return []string{fmt.Sprintf("lists authenticator but credentials.create did not fulfil: %+v", r)}
	}
	var c struct {
		Props struct {
			Type struct {
				Value string `json:"value"`
			} `json:"type"`
			Attachment struct {
				Value string `json:"value"`
			} `json:"attachment"`
		} `json:"props"`
	}
	_ = json.Unmarshal(r.Value, &c)
	if c.Props.Type.Value != "public-key" || c.Props.Attachment.Value != "platform" {
		return []string{fmt.Sprintf("credentials.create gave %s, not a platform public-key credential (the internal authenticator's)", r.Value)}
	}
	return nil
}
