package probes

import (
	"encoding/json"
	"testing"

	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
	"github.com/stretchr/testify/assert"
)

// echoResponse is a response of a request kind the probes do not know (no engine
// ran: the answers are made up here), as a kind added to the oracle's registry
// would hand it over.
type echoResponse map[string]string

func (echoResponse) KindName() string { return "echo" }
func (r echoResponse) EngineAnswer(e string) any {
	if v, ok := r[e]; ok && v != "fails" {
		return v
	}
	return nil
}
func (r echoResponse) EngineError(e string) string {
	if r[e] == "fails" {
		return "echo failed"
	}
	return ""
}

// A kind the runner has never heard of is judged like any other: per-engine
// errors and missing answers fail, and the answers are voted by their JSON.
func TestANewKindIsJudgedWithoutAnEditHere(t *testing.T) {
	var r Result
	r.Engines = map[string]engineResult{}
	engines := []string{"chromium", "firefox", "webkit"}
	judge(&r, probe{Name: "p"}, engines, echoResponse{"chromium": "a", "firefox": "a", "webkit": "b"}, nil)
	assert.False(t, r.Failed)
	assert.Equal(t, vote.Majority, r.Vote.Kind)
	assert.Equal(t, "webkit", r.Vote.Outlier)
	assert.Len(t, r.Pairs, 3)

	r = Result{Engines: map[string]engineResult{}}
	judge(&r, probe{Name: "p"}, engines, echoResponse{"chromium": "a", "firefox": "fails"}, nil)
	assert.True(t, r.Failed)
	assert.Equal(t, engineResult{Status: StatusError, Error: "echo failed"}, r.Engines["firefox"])
	assert.Equal(t, engineResult{Status: StatusError, Error: "no echo answer"}, r.Engines["webkit"])
	assert.Equal(t, StatusOK, r.Engines["chromium"].Status)
}

// A trace that timed out is a timeout, and still voted.
func TestATimedOutTraceIsATimeoutAndStillVoted(t *testing.T) {
	rec := []trace.Record{{Label: "x", Value: json.RawMessage(`1`)}}
	resp := oracle.TraceResponse{Answers: map[string]*trace.Trace{
		"chromium": {Records: rec}, "firefox": {Records: rec, TimedOut: true}}}
	r := Result{Engines: map[string]engineResult{}}
	judge(&r, probe{Name: "p"}, []string{"chromium", "firefox", "webkit"}, resp, map[string]string{"firefox": "1.0"})
	assert.True(t, r.Failed)
	assert.Equal(t, StatusOK, r.Engines["chromium"].Status)
	assert.Equal(t, engineResult{Status: StatusTimeout, Version: "1.0",
		Error: "trace timed out after 1 records: the probe never reached trace.done()"}, r.Engines["firefox"])
	assert.Equal(t, engineResult{Status: StatusError, Error: "no trace"}, r.Engines["webkit"])
	assert.Len(t, r.Pairs, 1, "the timed-out trace is paired with the other")
}
