package trace

// Pure Go unit tests of Compare and the Record encoding: no browser involved.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustTrace(t *testing.T, engine, records string) *Trace {
	t.Helper()
	tr, err := decode(json.RawMessage(`{"timed_out":false,"origin":"http://localhost:1","is_secure_context":true,"records":`+records+`}`),
		engine, "1", "default")
	require.NoError(t, err)
	return tr
}

func f32(vs ...float32) string {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func bufRecord(et string, n int, b64 string) string {
	v, _ := json.Marshal(map[string]any{"$buffer": true, "elementType": et, "length": n, "base64": b64})
	return `[{"seq":0,"kind":"value","label":"b","value":` + string(v) + `}]`
}

func TestCompareEqual(t *testing.T) {
	recs := `[{"seq":0,"kind":"value","label":"x","value":{"$shape":"object","keys":["a"],"props":{"a":{"type":"number","value":1}}}},
{"seq":1,"kind":"event","label":"BUTTON#b","type":"click"},
{"seq":2,"kind":"settle","label":"p","state":"rejected","value":{"$error":true,"name":"TypeError"}}]`
	r := Compare(mustTrace(t, "a", recs), mustTrace(t, "b", recs), DefaultBufferTolerance)
	assert.True(t, r.Equal)
	assert.Empty(t, r.Findings)
	// 1 and 1.0 are the same number.
	r = Compare(mustTrace(t, "a", `[{"seq":0,"kind":"value","label":"x","value":1}]`),
		mustTrace(t, "b", `[{"seq":0,"kind":"value","label":"x","value":1.0}]`), DefaultBufferTolerance)
	assert.True(t, r.Equal, "%v", r.Findings)
}

func TestCompareCountMismatch(t *testing.T) {
	a := mustTrace(t, "a", `[{"seq":0,"kind":"value","label":"x","value":1},{"seq":1,"kind":"value","label":"y","value":2}]`)
	b := mustTrace(t, "b", `[{"seq":0,"kind":"value","label":"z","value":1}]`)
	b.TimedOut = true
	r := Compare(a, b, DefaultBufferTolerance)
	assert.False(t, r.Equal)
	assert.True(t, r.CountMismatch)
	assert.Equal(t, 2, r.CountA)
	assert.Equal(t, 1, r.CountB)
	require.Len(t, r.Findings, 2)
	assert.Equal(t, Finding{Seq: -1, Kind: MismatchCount, A: "2", B: "1"}, r.Findings[0])
	assert.Equal(t, MismatchTimedOut, r.Findings[1].Kind)
	// The label at position 0 differs too, but nothing was paired.
}

func TestCompareKindLabelTypeState(t *testing.T) {
	a := mustTrace(t, "a", `[{"seq":0,"kind":"value","label":"x","value":1},
{"seq":1,"kind":"value","label":"x","value":1},
{"seq":2,"kind":"event","label":"window","type":"click"},
{"seq":3,"kind":"settle","label":"p","state":"fulfilled","value":1},
{"seq":4,"kind":"error","label":"e","value":{"$error":true,"name":"TypeError"}}]`)
	b := mustTrace(t, "b", `[{"seq":0,"kind":"event","label":"x","type":"click"},
{"seq":1,"kind":"value","label":"y","value":1},
{"seq":2,"kind":"event","label":"window","type":"mousedown"},
{"seq":3,"kind":"settle","label":"p","state":"rejected","value":1},
{"seq":4,"kind":"error","label":"e","value":{"$error":true,"name":"RangeError"}}]`)
	r := Compare(a, b, DefaultBufferTolerance)
	assert.False(t, r.Equal)
	assert.False(t, r.CountMismatch)
	got := map[int]Finding{}
	for _, f := range r.Findings {
		got[f.Seq] = f
	}
	require.Len(t, r.Findings, 5, "%v", r.Findings)
	assert.Equal(t, Finding{Seq: 0, Kind: mismatchKind, Path: "kind", A: `"value"`, B: `"event"`}, got[0])
	assert.Equal(t, Finding{Seq: 1, Kind: mismatchLabel, Path: "label", A: `"x"`, B: `"y"`}, got[1])
	assert.Equal(t, Finding{Seq: 2, Kind: mismatchEventType, Path: "type", A: `"click"`, B: `"mousedown"`}, got[2])
	assert.Equal(t, Finding{Seq: 3, Kind: mismatchState, Path: "state", A: `"fulfilled"`, B: `"rejected"`}, got[3])
	assert.Equal(t, Finding{Seq: 4, Kind: mismatchErrorName, Path: "value.name", A: `"TypeError"`, B: `"RangeError"`}, got[4])
}

func TestCompareValueStructure(t *testing.T) {
	a := mustTrace(t, "a", `[{"seq":0,"kind":"value","label":"x","value":{"$shape":"object","keys":["a","b c"],"props":{
"a":{"type":"object","value":{"$shape":"array","length":2,"elements":[1,"s"]}},"b c":{"type":"number","value":0.5}}}}]`)
	b := mustTrace(t, "b", `[{"seq":0,"kind":"value","label":"x","value":{"$shape":"object","keys":["a","b c"],"props":{
"a":{"type":"object","value":{"$shape":"array","length":2,"elements":[1,"t"]}},"b c":{"type":"number","value":0.50001}}}}]`)
	r := Compare(a, b, DefaultBufferTolerance)
	require.Len(t, r.Findings, 2, "%v", r.Findings)
	assert.Equal(t, `value.props.a.value.elements[1]`, r.Findings[0].Path)
	assert.Equal(t, `value.props["b c"].value`, r.Findings[1].Path, "numbers outside buffers compare exactly")
	assert.Equal(t, MismatchValue, r.Findings[1].Kind)

	// A missing key and a different array length.
	c := mustTrace(t, "c", `[{"seq":0,"kind":"value","label":"x","value":{"$shape":"array","length":1,"elements":[1]}}]`)
	d := mustTrace(t, "d", `[{"seq":0,"kind":"value","label":"x","value":{"$shape":"array","length":2,"elements":[1,2],"truncated":"size"}}]`)
	r = Compare(c, d, DefaultBufferTolerance)
	require.Len(t, r.Findings, 3, "%v", r.Findings)
	assert.Equal(t, "value.elements.length", r.Findings[0].Path)
	assert.Equal(t, "value.length", r.Findings[1].Path)
	assert.Equal(t, "value.truncated", r.Findings[2].Path)
	assert.Equal(t, "(absent)", r.Findings[2].A)
}

func TestCompareBufferTolerance(t *testing.T) {
	tol := DefaultBufferTolerance
	base := mustTrace(t, "a", bufRecord("Float32Array", 3, f32(0.5, -0.25, 1)))
	within := mustTrace(t, "b", bufRecord("Float32Array", 3, f32(0.50005, -0.25, 1.0009)))
	outside := mustTrace(t, "c", bufRecord("Float32Array", 3, f32(0.5, -0.2, 1.01)))
	assert.True(t, Compare(base, within, tol).Equal)
	assert.False(t, Compare(base, within, BufferTolerance{}).Equal, "zero tolerance is exact")
	r := Compare(base, outside, tol)
	require.Len(t, r.Findings, 1, "%v", r.Findings)
	f := r.Findings[0]
	assert.Equal(t, MismatchBuffer, f.Kind)
	assert.Equal(t, "value", f.Path)
	assert.Equal(t, 3, f.Samples)
	assert.Equal(t, 2, f.OutOfTolerance)
	assert.Equal(t, 1, f.FirstIndex)
	assert.InDelta(t, 0.05, f.MaxAbsDiff, 1e-6)

	// Pixels: integer tolerance.
	px := func(b ...byte) *Trace {
		return mustTrace(t, "p", bufRecord("Uint8ClampedArray", len(b), base64.StdEncoding.EncodeToString(b)))
	}
	assert.True(t, Compare(px(10, 20, 30, 255), px(12, 19, 30, 255), tol).Equal)
	r = Compare(px(10, 20, 30, 255), px(13, 20, 30, 250), tol)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, 2, r.Findings[0].OutOfTolerance)
	assert.Equal(t, 5.0, r.Findings[0].MaxAbsDiff)

	// Untyped bytes compare exactly.
	ab := func(b ...byte) *Trace {
		return mustTrace(t, "ab", bufRecord("ArrayBuffer", len(b), base64.StdEncoding.EncodeToString(b)))
	}
	assert.False(t, Compare(ab(1, 2), ab(1, 3), tol).Equal)

	// Different element types or lengths are structural, not sample, differences.
	r = Compare(base, mustTrace(t, "d", bufRecord("Float64Array", 3, f32(0.5, -0.25, 1))), tol)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, MismatchValue, r.Findings[0].Kind)
	assert.Equal(t, "value.elementType", r.Findings[0].Path)

	// NaN agrees with NaN, not with a number.
	nan := float32(math.NaN())
	assert.True(t, Compare(mustTrace(t, "a", bufRecord("Float32Array", 1, f32(nan))), mustTrace(t, "b", bufRecord("Float32Array", 1, f32(nan))), tol).Equal)
	assert.False(t, Compare(mustTrace(t, "a", bufRecord("Float32Array", 1, f32(nan))), mustTrace(t, "b", bufRecord("Float32Array", 1, f32(0))), tol).Equal)
}

func TestCompareImageAndAudio(t *testing.T) {
	img := func(w int, px ...byte) *Trace {
		v, _ := json.Marshal(map[string]any{"$buffer": true, "$imageData": true, "elementType": "Uint8ClampedArray",
			"length": len(px), "base64": base64.StdEncoding.EncodeToString(px), "width": w, "height": len(px) / 4 / w})
		return mustTrace(t, "i", `[{"seq":0,"kind":"value","label":"img","value":`+string(v)+`}]`)
	}
	assert.True(t, Compare(img(1, 1, 2, 3, 4, 5, 6, 7, 8), img(1, 2, 2, 3, 4, 5, 6, 7, 9), DefaultBufferTolerance).Equal)
	r := Compare(img(1, 1, 2, 3, 4, 5, 6, 7, 8), img(2, 1, 2, 3, 4, 5, 6, 7, 8), DefaultBufferTolerance)
	require.NotEmpty(t, r.Findings)
	assert.Equal(t, "value.height", r.Findings[0].Path)

	audio := func(ch1 ...float32) *Trace {
		v, _ := json.Marshal(map[string]any{"$audioBuffer": true, "numberOfChannels": 2, "length": len(ch1), "sampleRate": 44100,
			"channels": []any{
				map[string]any{"$buffer": true, "elementType": "Float32Array", "length": len(ch1), "base64": f32(make([]float32, len(ch1))...)},
				map[string]any{"$buffer": true, "elementType": "Float32Array", "length": len(ch1), "base64": f32(ch1...)},
			}})
		return mustTrace(t, "au", `[{"seq":0,"kind":"settle","label":"render","state":"fulfilled","value":`+string(v)+`}]`)
	}
	assert.True(t, Compare(audio(0.1, 0.2), audio(0.10001, 0.2), DefaultBufferTolerance).Equal)
	r = Compare(audio(0.1, 0.2), audio(0.1, 0.3), DefaultBufferTolerance)
	require.Len(t, r.Findings, 1)
	assert.Equal(t, "value.channels[1]", r.Findings[0].Path)
	assert.Equal(t, 1, r.Findings[0].OutOfTolerance)
}

func TestRecordRoundTrip(t *testing.T) {
	in := `{"engine":"chromium","engine_version":"1","profile":"default","origin":"http://localhost:1","is_secure_context":true,"timed_out":false,` +
		`"records":[{"seq":0,"kind":"value","label":"s","value":{"z":1, "a":"<b>&"}},{"seq":1,"kind":"event","label":"window","type":"click"},` +
		`{"seq":2,"kind":"settle","label":"p","state":"fulfilled","value":null}]}`
	var t1 Trace
	require.NoError(t, json.Unmarshal([]byte(in), &t1))
	out1, err := json.Marshal(&t1)
	require.NoError(t, err)
	var t2 Trace
	require.NoError(t, json.Unmarshal(out1, &t2))
	assert.Equal(t, t1, t2)
	out2, err := json.Marshal(&t2)
	require.NoError(t, err)
	assert.Equal(t, string(out1), string(out2))
	assert.JSONEq(t, in, string(out1))
	assert.Contains(t, string(out1), `{"z":1,"a":"\u003cb\u003e\u0026"}`, "key order is kept")
	assert.Contains(t, string(out1), `"value":null`, "a null value is not dropped")
	assert.NotContains(t, string(out1), `"window","type":"click","value"`, "an event has no value")
}

func TestDecodeValidates(t *testing.T) {
	_, err := decode(json.RawMessage(`{"records":[{"seq":1,"kind":"value","label":"x","value":1}]}`), "c", "1", "default")
	assert.ErrorContains(t, err, "seq")
	_, err = decode(json.RawMessage(`{"records":[{"seq":0,"kind":"bogus","label":"x"}]}`), "c", "1", "default")
	assert.ErrorContains(t, err, "kind")
	tr, err := decode(json.RawMessage(`{"timed_out":true,"records":[],"origin":"o","is_secure_context":true}`), "c", "v", "media")
	require.NoError(t, err)
	assert.Equal(t, Trace{Engine: "c", EngineVersion: "v", Profile: "media", Origin: "o", IsSecureContext: true, TimedOut: true, Records: []Record{}}, *tr)
}

// TestCompareSkipsMessage: two traces that differ only in their records' messages
// are equal, whole and record by record; a message survives the round trip and only
// a value record may carry one.
func TestCompareSkipsMessage(t *testing.T) {
	a := mustTrace(t, "a", `[{"seq":0,"kind":"value","label":"s","value":"FAIL","message":"assert_equals: expected 1 but got 2"},{"seq":1,"kind":"value","label":"(harness)","value":"OK"}]`)
	b := mustTrace(t, "b", `[{"seq":0,"kind":"value","label":"s","value":"FAIL","message":"expected 1, got 2"},{"seq":1,"kind":"value","label":"(harness)","value":"OK","message":"x"}]`)
	r := Compare(a, b, DefaultBufferTolerance)
	assert.True(t, r.Equal, "%v", r.Findings)
	assert.Empty(t, CompareRecords(0, &a.Records[0], &b.Records[0], DefaultBufferTolerance))
	assert.Equal(t, "assert_equals: expected 1 but got 2", a.Records[0].Message)
	assert.Empty(t, a.Records[1].Message)
	out, err := json.Marshal(a.Records)
	require.NoError(t, err)
	assert.Equal(t, `[{"seq":0,"kind":"value","label":"s","value":"FAIL","message":"assert_equals: expected 1 but got 2"},{"seq":1,"kind":"value","label":"(harness)","value":"OK"}]`, string(out))
	// The status still counts: a message does not paper over a different value.
	c := mustTrace(t, "c", `[{"seq":0,"kind":"value","label":"s","value":"PASS"},{"seq":1,"kind":"value","label":"(harness)","value":"OK"}]`)
	assert.False(t, Compare(a, c, DefaultBufferTolerance).Equal)

	_, err = decode(json.RawMessage(`{"records":[{"seq":0,"kind":"event","label":"window","type":"click","message":"m"}]}`), "c", "1", "default")
	assert.ErrorContains(t, err, "only a value record carries one")
}

func TestFloat16(t *testing.T) {
	assert.Equal(t, 1.0, float16(0x3c00))
	assert.Equal(t, -2.0, float16(0xc000))
	assert.Equal(t, 65504.0, float16(0x7bff))
	assert.True(t, math.IsInf(float16(0x7c00), 1))
	assert.True(t, math.IsNaN(float16(0x7e00)))
	assert.Equal(t, math.Ldexp(1, -24), float16(0x0001))
}

// decode parses an unsealed trace's JSON as a run's collected result carries it,
// with the engine's name, build and profile, and validates it.
func decode(raw json.RawMessage, engine, engineVersion, profile string) (*Trace, error) {
	var t Trace
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, err
	}
	return t.with(engine, engineVersion, profile)
}
