package oracle

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/kinds/kindstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each kind of the tree (registered in package kinds, which every reader of answers
// reads) is answered by the oracle, with its own description: a kind there and not
// here would be read by them and refused as an unknown op here.
func TestEveryKindOfTheTreeIsAnswered(t *testing.T) {
	all := kinds.All()
	ops := operations()
	require.Len(t, ops, len(all))
	for i, k := range all {
		assert.Equal(t, k.About(), ops[i].about(), "one order, one description")
		assert.Same(t, ops[i], kindFor(k.About().Op))
	}
}

// A kind only readers know (no oracle side) is an unknown op to the oracle, not a
// crash; a response whose answer's type no registered kind has is an error when it
// is written (one error line), not a panic.
func TestAKindTheOracleDoesNotAnswerIsAnErrorNotAPanic(t *testing.T) {
	readersOnly := &kinds.Of[*struct{ N int }]{Info: kinds.Info{Op: "count", Name: "count", Field: "counts", Record: "count", Case: "a count"}}
	kindstest.RegisterKind(t, readersOnly)
	_, _, err := ParseRequest([]byte(`{"id":1,"op":"count","html":""}`))
	require.EqualError(t, err, `unknown op "count" (known: `+knownOps()+`)`)
	assert.NotContains(t, knownOps(), "count")

	r := response[*struct{ N int }]{ID: json.RawMessage(`1`), Answers: map[string]*struct{ N int }{"chromium": {N: 1}}}
	assert.Empty(t, r.KindName())
	_, err = json.Marshal(r)
	require.ErrorContains(t, err, "oracle: no registered kind answers *struct { N int }")
	_, err = boundLine(r, answerLimits{})
	require.ErrorContains(t, err, "oracle: no registered kind answers")

	var out strings.Builder
	w := &lineWriter{w: bufio.NewWriter(&out), broken: make(chan struct{})}
	w.write(r)
	assert.Equal(t, `{"id":null,"error":"internal: cannot encode response: oracle: no registered kind answers *struct { N int }"}`+"\n", out.String())
}
