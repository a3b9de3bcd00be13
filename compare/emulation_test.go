package compare

// Unit tests of the emulation-aware trace vote on hand-written traces (no browser):
// they test SameEmulation, ComparableEngines and ScoreTraces, not an engine.

import (
	"testing"

	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSameEmulation(t *testing.T) {
	for _, tt := range []struct {
		a, b []string
		same bool
	}{
		{nil, nil, true},
		{nil, []string{}, true},
		{[]string{"sensors", "geolocation"}, []string{"geolocation", "sensors"}, true},
		{[]string{"sensors", "sensors"}, []string{"sensors"}, true},
		{[]string{"sensors"}, nil, false},
		{[]string{"sensors"}, []string{"sensors", "authenticator"}, false},
		{[]string{"a,b"}, []string{"a", "b"}, false},
	} {
		assert.Equal(t, tt.same, sameEmulation(tt.a, tt.b), "%q vs %q", tt.a, tt.b)
		assert.Equal(t, tt.same, sameEmulation(tt.b, tt.a), "%q vs %q", tt.b, tt.a)
	}
}

func TestComparableEngines(t *testing.T) {
	all := []string{"authenticator", "geolocation", "sensors"}
	for _, tt := range []struct {
		name          string
		sets          map[string][]string
		voters, apart []string
	}{
		{"none applied", map[string][]string{"chromium": nil, "firefox": {}, "webkit": nil},
			[]string{"chromium", "firefox", "webkit"}, nil},
		{"chromium alone emulated", map[string][]string{"chromium": all, "firefox": {"geolocation"}, "webkit": {"geolocation"}},
			[]string{"firefox", "webkit"}, []string{"chromium"}},
		{"same set, other order", map[string][]string{"chromium": {"sensors", "geolocation"}, "firefox": {"geolocation", "sensors"}, "webkit": nil},
			[]string{"chromium", "firefox"}, []string{"webkit"}},
		{"all differ: the first engine's group", map[string][]string{"chromium": all, "firefox": {"geolocation"}, "webkit": nil},
			[]string{"chromium"}, []string{"firefox", "webkit"}},
		{"one engine", map[string][]string{"webkit": {"geolocation"}}, []string{"webkit"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			voters, apart := ComparableEngines(tt.sets)
			assert.Equal(t, tt.voters, voters)
			assert.Equal(t, tt.apart, apart)
		})
	}
}

func emulated(t *testing.T, engine, records string, set ...string) *trace.Trace {
	t.Helper()
	tr := mustTrace(t, engine, records)
	tr.Emulated = set
	return tr
}

func TestScoreTraces(t *testing.T) {
	tol := trace.DefaultBufferTolerance
	// The fixed reading under emulation, and what an unemulated engine reads instead.
	read := `[{"seq":0,"kind":"value","label":"title","value":"t"},{"seq":1,"kind":"value","label":"x","value":9.8}]`
	none := `[{"seq":0,"kind":"value","label":"title","value":"t"},{"seq":1,"kind":"error","label":"x","value":{"$error":true,"name":"NotAllowedError"}}]`
	other := `[{"seq":0,"kind":"value","label":"title","value":"t"},{"seq":1,"kind":"value","label":"x","value":1}]`

	t.Run("an engine that applied another set is not comparable, not outvoted", func(t *testing.T) {
		oracle := map[string]*trace.Trace{
			"chromium": emulated(t, "chromium", read, "sensors"),
			"firefox":  emulated(t, "firefox", none),
			"webkit":   emulated(t, "webkit", none),
		}
		r, err := ScoreTraces(oracle, nil, tol, nil)
		require.NoError(t, err)
		assert.Equal(t, NoCandidate, r.Verdict)
		assert.Equal(t, []string{"firefox", "webkit"}, r.Engines)
		assert.Nil(t, r.Emulated)
		assert.Equal(t, []notComparableEngine{{Engine: "chromium", Emulated: []string{"sensors"}}}, r.NotComparable)
		assert.Empty(t, r.Outliers, "chromium must not be named outvoted")
		assert.Equal(t, map[vote.Kind]int{vote.Agree: 2}, r.Votes)

		// The same traces with no "emulated" anywhere: chromium is outvoted on x.
		for _, e := range oracle {
			e.Emulated = nil
		}
		r, err = ScoreTraces(oracle, nil, tol, nil)
		require.NoError(t, err)
		assert.Empty(t, r.NotComparable)
		assert.Equal(t, []Outlier{{Engine: "chromium", Property: "value:x", Count: 1}}, r.Outliers)
		assert.Equal(t, map[vote.Kind]int{vote.Unanimous: 1, vote.Majority: 1}, r.Votes)
	})

	t.Run("a candidate is scored only against engines with its set", func(t *testing.T) {
		oracle := map[string]*trace.Trace{
			"chromium": emulated(t, "chromium", read, "sensors", "geolocation"),
			"firefox":  emulated(t, "firefox", read, "geolocation", "sensors"),
			"webkit":   emulated(t, "webkit", none),
		}
		r, err := ScoreTraces(oracle, emulated(t, "candidate", read, "sensors", "geolocation"), tol, nil)
		require.NoError(t, err)
		assert.Equal(t, Pass, r.Verdict)
		assert.Equal(t, &Axis{Compared: 2, Pass: true}, r.Trace)
		assert.Equal(t, []string{"geolocation", "sensors"}, r.Emulated)

		r, err = ScoreTraces(oracle, emulated(t, "candidate", other, "geolocation", "sensors"), tol, nil)
		require.NoError(t, err)
		assert.Equal(t, Fail, r.Verdict)
		assert.Equal(t, 1, r.Trace.Failed)
		require.Len(t, r.TraceFindings, 1)
		assert.Equal(t, trace.Finding{Seq: 1, Kind: trace.MismatchValue, Path: "value", A: "9.8", B: "1"}, r.TraceFindings[0])

		r, err = ScoreTraces(oracle, emulated(t, "candidate", read), tol, nil)
		require.NoError(t, err)
		assert.Equal(t, NotComparable, r.Verdict)
		assert.Equal(t, "the candidate applied emulation [none], the voting engines [geolocation, sensors]", r.Reason)
		assert.Zero(t, r.Trace.Compared)
	})

	t.Run("record counts", func(t *testing.T) {
		short := `[{"seq":0,"kind":"value","label":"title","value":"t"}]`
		oracle := map[string]*trace.Trace{
			"chromium": emulated(t, "chromium", read), "firefox": emulated(t, "firefox", read), "webkit": emulated(t, "webkit", short)}
		r, err := ScoreTraces(oracle, emulated(t, "candidate", read), tol, nil)
		require.NoError(t, err)
		assert.Equal(t, Pass, r.Verdict, "the equal majority's records are the reference")
		assert.Equal(t, []Outlier{{Engine: "webkit", Property: "count", Count: 1}}, r.Outliers)
		assert.Equal(t, 2, r.Trace.Compared)

		r, err = ScoreTraces(oracle, emulated(t, "candidate", short), tol, nil)
		require.NoError(t, err)
		assert.Equal(t, Fail, r.Verdict)
		assert.Equal(t, "record count: want 2, got 1", r.Reason)

		oracle["firefox"] = emulated(t, "firefox", `[]`)
		r, err = ScoreTraces(oracle, emulated(t, "candidate", read), tol, nil)
		require.NoError(t, err)
		assert.Equal(t, Untrustworthy, r.Verdict)
		assert.Equal(t, map[vote.Kind]int{vote.Split: 1}, r.Votes)
	})

	t.Run("split and unstable records are not scored", func(t *testing.T) {
		third := `[{"seq":0,"kind":"value","label":"title","value":"t"},{"seq":1,"kind":"value","label":"x","value":2}]`
		oracle := map[string]*trace.Trace{
			"chromium": emulated(t, "chromium", read), "firefox": emulated(t, "firefox", other), "webkit": emulated(t, "webkit", third)}
		r, err := ScoreTraces(oracle, emulated(t, "candidate", other), tol, nil)
		require.NoError(t, err)
		assert.Equal(t, Pass, r.Verdict)
		assert.Equal(t, &Axis{Compared: 1, Untrusted: 1, Pass: true}, r.Trace)

		r, err = ScoreTraces(oracle, emulated(t, "candidate", other), tol, Unstable{"webkit": {"1:record"}})
		require.NoError(t, err)
		assert.Equal(t, &Axis{Compared: 1, Unstable: 1, Pass: true}, r.Trace)
		assert.Equal(t, map[vote.Kind]int{vote.Unanimous: 1, vote.Unstable: 1}, r.Votes)

		// A voter whose runs ended differently (timed_out): no record is voted.
		r, err = ScoreTraces(oracle, emulated(t, "candidate", other), tol, Unstable{"chromium": {"timed_out"}})
		require.NoError(t, err)
		assert.Equal(t, Untrustworthy, r.Verdict)
		assert.Equal(t, &Axis{Unstable: 2}, r.Trace)

		// Unstable in a not-comparable engine does not count.
		oracle["webkit"].Emulated = []string{"sensors"}
		r, err = ScoreTraces(oracle, emulated(t, "candidate", other), tol, Unstable{"webkit": {"*"}})
		require.NoError(t, err)
		assert.Equal(t, Pass, r.Verdict, "chromium and firefox disagree on x, so it is untrusted; title passes")
		assert.Equal(t, &Axis{Compared: 1, Untrusted: 1, Pass: true}, r.Trace)
		assert.Equal(t, map[vote.Kind]int{vote.Agree: 1, vote.Disagree: 1}, r.Votes)
	})

	t.Run("refused and empty input", func(t *testing.T) {
		bad := &trace.Trace{Records: []trace.Record{{Seq: 3, Kind: "value", Value: []byte("1")}}}
		_, err := ScoreTraces(map[string]*trace.Trace{"chromium": bad}, nil, tol, nil)
		assert.ErrorContains(t, err, "chromium: trace: record 0 has seq 3")
		_, err = ScoreTraces(map[string]*trace.Trace{"chromium": emulated(t, "chromium", read)}, bad, tol, nil)
		assert.ErrorContains(t, err, "candidate: ")
		r, err := ScoreTraces(map[string]*trace.Trace{"chromium": nil}, nil, tol, nil)
		require.NoError(t, err)
		assert.Equal(t, Untrustworthy, r.Verdict)
	})
}
