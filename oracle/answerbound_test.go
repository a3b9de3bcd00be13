package oracle

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/answerbound"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundLine leaves a line within the bounds byte for byte as json.Marshal writes it,
// and turns an answer (live or stored) over its kind's bound into that engine's error.
func TestBoundLineTurnsAnOversizedAnswerIntoAnError(t *testing.T) {
	small := &reflection.State{Engine: "firefox", Observations: []reflection.Observation{}}
	resp := reflectResponse{ID: json.RawMessage(`"r"`), Answers: map[string]*reflection.State{"firefox": small},
		Errors: map[string]string{"webkit": strings.Repeat("<", 1e6)}}
	lim := answerLimits{"reflect": 2000}
	b, err := boundLine(resp, lim)
	require.NoError(t, err)
	assert.Less(t, len(b), 2*answerbound.MaxErrorBytes, "the error is cut")

	v := strings.Repeat("<", 1000) // 6000 bytes escaped
	big := &reflection.State{Engine: "chromium", Observations: []reflection.Observation{{Selector: "#a", Attr: "t", AttrValue: &v, IDL: "t", IDLValue: json.RawMessage(`1`)}}}
	resp = reflectResponse{ID: json.RawMessage(`"r"`), Answers: map[string]*reflection.State{"chromium": big, "firefox": small},
		raw: map[string]json.RawMessage{"webkit": json.RawMessage(`{"engine":"webkit","observations":[],"x":"` + strings.Repeat("a", 3000) + `"}`)}}
	b, err = boundLine(resp, lim)
	require.NoError(t, err)
	var got struct {
		States map[string]json.RawMessage `json:"states"`
		Errors map[string]string          `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Contains(t, got.Errors["chromium"], "the reflection state is 6")
	assert.Contains(t, got.Errors["chromium"], "over the 2000 one engine's answer may have")
	assert.Contains(t, got.Errors["webkit"], "the reflection state is 30")
	assert.Contains(t, got.States, "firefox")
	assert.Len(t, got.States, 1)

	ok := geometryResponse{ID: json.RawMessage(`1`), Answers: map[string]*dump.Dump{"chromium": {Engine: "chromium", Nodes: []dump.Node{{Tag: "<HTML>"}}}}}
	b, err = boundLine(ok, answerLimits{"geometry": 1 << 20})
	require.NoError(t, err)
	want, _ := json.Marshal(ok)
	assert.Equal(t, string(want), string(b), "a line within the bounds is what json.Marshal writes")
}

// docs/untrusted.md states the largest answer line at the default flags; it must be
// answerbound.MaxLine's value.
func TestDocumentedMaxAnswerLineIsTheDefault(t *testing.T) {
	doc, err := os.ReadFile("../docs/untrusted.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`at the defaults, ([0-9,]+) bytes`).FindSubmatch(doc)
	require.NotNil(t, m, `docs/untrusted.md states "at the defaults, N bytes"`)
	n, err := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", ""))
	require.NoError(t, err)
	assert.Equal(t, answerbound.MaxLine(DefaultDumpMaxNodes, trace.DefaultLimits.Bytes), n)
}
