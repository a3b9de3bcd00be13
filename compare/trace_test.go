package compare

// Unit tests of Traces, the vote on hand-built traces (no browser).

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustTrace(t *testing.T, engine, records string) *trace.Trace {
	t.Helper()
	var tr trace.Trace
	require.NoError(t, json.Unmarshal([]byte(`{"timed_out":false,"origin":"http://localhost:1","is_secure_context":true,"records":`+records+`}`), &tr))
	tr.Engine, tr.EngineVersion, tr.Profile = engine, "1", "default"
	require.NoError(t, tr.Validate())
	return &tr
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

// TestTracesIgnoreMessages: traces that differ only in their subtests' messages (each
// engine words an assertion its own way) vote unanimous, whole and per record, and a
// candidate scored against them passes.
func TestTracesIgnoreMessages(t *testing.T) {
	rec := func(m string) string {
		return `[{"seq":0,"kind":"value","label":"sub","value":"FAIL","message":` + strconv.Quote(m) + `},{"seq":1,"kind":"value","label":"(harness)","value":"OK"}]`
	}
	tol := trace.DefaultBufferTolerance
	ts := map[string]*trace.Trace{"chromium": mustTrace(t, "c", rec("assert_equals: expected 1 but got 2")),
		"firefox": mustTrace(t, "f", rec("assert_equals: expected 1 but got 3")), "webkit": mustTrace(t, "w", rec("other words"))}
	v := Traces(ts, tol)
	assert.Equal(t, vote.Unanimous, v.Whole.Kind)
	require.Len(t, v.Records, 2)
	for _, rv := range v.Records {
		assert.Equal(t, vote.Unanimous, rv.Kind)
	}
	r, err := ScoreTraces(ts, mustTrace(t, "x", rec("the candidate's own words")), tol, nil)
	require.NoError(t, err)
	assert.Equal(t, Pass, r.Verdict, r.Reason)
}

func TestTraces(t *testing.T) {
	x := `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":2}]`
	y := `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":3}]`
	z := `[{"seq":0,"kind":"value","label":"a","value":1},{"seq":1,"kind":"value","label":"b","value":4}]`
	tol := trace.DefaultBufferTolerance

	// 3-0.
	v := Traces(map[string]*trace.Trace{"chromium": mustTrace(t, "c", x), "firefox": mustTrace(t, "f", x), "webkit": mustTrace(t, "w", x)}, tol)
	assert.Equal(t, vote.Unanimous, v.Whole.Kind)
	assert.True(t, v.CountsAgree)
	require.Len(t, v.Records, 2)
	for _, rv := range v.Records {
		assert.Equal(t, vote.Unanimous, rv.Kind)
	}

	// 2-1: firefox is outvoted on record 1 only.
	v = Traces(map[string]*trace.Trace{"chromium": mustTrace(t, "c", x), "firefox": mustTrace(t, "f", y), "webkit": mustTrace(t, "w", x)}, tol)
	assert.Equal(t, vote.Majority, v.Whole.Kind)
	assert.Equal(t, "firefox", v.Whole.Outlier)
	assert.Equal(t, vote.Unanimous, v.Records[0].Kind)
	assert.Equal(t, vote.Majority, v.Records[1].Kind)
	assert.Equal(t, "firefox", v.Records[1].Outlier)
	assert.Equal(t, []string{"chromium", "webkit"}, v.Records[1].Majority)
	assert.Equal(t, map[string][]int{"firefox": {1}}, v.Outliers())
	assert.Empty(t, v.Splits())

	// Three-way: Split on record 1.
	v = Traces(map[string]*trace.Trace{"chromium": mustTrace(t, "c", x), "firefox": mustTrace(t, "f", y), "webkit": mustTrace(t, "w", z)}, tol)
	assert.Equal(t, vote.Split, v.Whole.Kind)
	assert.Equal(t, vote.Unanimous, v.Records[0].Kind)
	assert.Equal(t, vote.Split, v.Records[1].Kind)
	assert.Equal(t, []int{1}, v.Splits())

	// Counts differ: only the whole-trace vote, where the short trace is the outlier.
	short := `[{"seq":0,"kind":"value","label":"a","value":1}]`
	v = Traces(map[string]*trace.Trace{"chromium": mustTrace(t, "c", x), "firefox": mustTrace(t, "f", x), "webkit": mustTrace(t, "w", short)}, tol)
	assert.False(t, v.CountsAgree)
	assert.Nil(t, v.Records)
	assert.Equal(t, vote.Majority, v.Whole.Kind)
	assert.Equal(t, "webkit", v.Whole.Outlier)

	// Buffers vote within tolerance.
	b1, b2, b3 := bufRecord("Float32Array", 1, f32(0.5)), bufRecord("Float32Array", 1, f32(0.50001)), bufRecord("Float32Array", 1, f32(0.7))
	v = Traces(map[string]*trace.Trace{"chromium": mustTrace(t, "c", b1), "firefox": mustTrace(t, "f", b2), "webkit": mustTrace(t, "w", b3)}, tol)
	assert.Equal(t, vote.Majority, v.Records[0].Kind)
	assert.Equal(t, "webkit", v.Records[0].Outlier)

	// Two engines, and a nil trace left out.
	v = Traces(map[string]*trace.Trace{"chromium": mustTrace(t, "c", x), "firefox": mustTrace(t, "f", y), "webkit": nil}, tol)
	assert.Equal(t, vote.Disagree, v.Whole.Kind)
	assert.Equal(t, vote.Agree, v.Records[0].Kind)
	assert.Equal(t, vote.Disagree, v.Records[1].Kind)
}
