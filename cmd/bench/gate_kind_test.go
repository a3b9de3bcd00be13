package main

// A unit test of our own code (made-up response lines, no engine): the gate splits
// a line into its engines' answers under any registered kind's field, and compares
// a line of a kind not registered by its fields.

import (
	"encoding/json"
	"testing"

	"github.com/layout-oracle/oracle/kinds/kindstest"
	"github.com/stretchr/testify/assert"
)

func TestGateReadsTheAnswersOfEveryRegisteredKind(t *testing.T) {
	dumps := json.RawMessage(`{"id":1,"dumps":{"chromium":{"nodes":[]}},"errors":{"webkit":"no"}}`)
	titles := json.RawMessage(`{"id":2,"titles":{"chromium":{"title":"x"}},"errors":{"webkit":"no"}}`)
	assert.Equal(t, map[string]string{"chromium": `{"nodes":[]}`, "webkit": "error: no"}, engineAnswers(dumps))
	assert.Equal(t, map[string]string{"webkit": "error: no", "*": `no registered kind: {"titles":{"chromium":{"title":"x"}}}`}, engineAnswers(titles),
		"a kind not registered is compared by its field, not dropped")
	assert.Equal(t, map[string]string{"*": `malformed: {"id":3,"dumps":5}`}, engineAnswers(json.RawMessage(`{"id":3,"dumps":5}`)))

	kindstest.Register(t)
	assert.Equal(t, map[string]string{"chromium": `{"title":"x"}`, "webkit": "error: no"}, engineAnswers(titles))
}
