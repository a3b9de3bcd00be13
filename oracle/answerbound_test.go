package oracle

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/layout-oracle/oracle/dump"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxNumber is the longest float64 encoding/json writes.
func TestMaxNumberIsTheLongestFloat(t *testing.T) {
	worst := []float64{-0.0000012345678901234567, -1.2345678901234567e-7, -2.2250738585072014e-308,
		-1.7976931348623157e308, -123456789012345678901, math.SmallestNonzeroFloat64, -9.999999999999999e20}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		worst = append(worst, -math.Float64frombits(r.Uint64()&^(1<<63)), -r.Float64()*math.Pow(10, float64(r.Intn(40)-20)))
	}
	for _, f := range worst {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		b, err := json.Marshal(f)
		require.NoError(t, err)
		require.LessOrEqual(t, len(b), maxNumber, "%s", b)
	}
}

// The worst dump the walk can hand back at --dump-max-nodes=n (n elements, 4 boxes
// each, the style and tag budgets filled with '<', the longest numbers, a screenshot
// at its bound) encodes within geometryAnswerMax(n).
func TestGeometryAnswerMaxBoundsTheWorstDump(t *testing.T) {
	for _, n := range []int{1, 9, 10, 1000} {
		f := -0.0000012345678901234567
		r := dump.Rect{X: f, Y: f, W: f, H: f}
		// A string whose JSON takes exactly b bytes, quotes included.
		fill := func(b int) string { return strings.Repeat("<", (b-2)/6) + strings.Repeat("a", (b-2)%6) }
		d := dump.Dump{Engine: "chromium", EngineVersion: strings.Repeat("9", 64), Viewport: dump.Viewport,
			Overflowed: true, Screenshot: base64.StdEncoding.EncodeToString(make([]byte, maxScreenshot))}
		for i := 0; i < n; i++ {
			st := dump.Style{}
			for j, k := range dump.StyleProperties {
				b := styleBytesPerNode / len(dump.StyleProperties)
				if j == 0 {
					b += styleBytesPerNode % len(dump.StyleProperties)
				}
				st[k] = fill(b)
			}
			d.Nodes = append(d.Nodes, dump.Node{Index: n - 1, Parent: n - 1, Depth: n - 1, Tag: fill(tagBytesPerNode),
				Bounding: r, Rects: []dump.Rect{r, r, r, r}, Style: st})
		}
		b, err := json.Marshal(d)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), geometryAnswerMax(n), "n=%d", n)
		t.Logf("n=%d: worst dump %d bytes, bound %d", n, len(b), geometryAnswerMax(n))
	}
}

func TestFitErrorCutsLongMessagesWithAMarker(t *testing.T) {
	short := "script threw: Error: " + strings.Repeat("<", 2600)
	assert.Equal(t, short, fitError(short), "a message under the bound is kept whole")
	for _, msg := range []string{
		"script threw: Error: " + strings.Repeat("<", 10_000_000),
		strings.Repeat("é", 10000),
		strings.Repeat("\u2028x\xff", 3000),
		strings.Repeat("a", MaxErrorBytes-1),
	} {
		got := fitError(msg)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), MaxErrorBytes)
		assert.Greater(t, len(b), MaxErrorBytes-12, "the cut keeps what fits")
		assert.True(t, strings.HasSuffix(got, " ... [truncated: the message had "+strconv.Itoa(len(msg))+" bytes]"), got[len(got)-60:])
		assert.True(t, strings.HasPrefix(msg, got[:strings.LastIndex(got, " ... [truncated")]), "the message's start is kept")
		if utf8.ValidString(msg) {
			assert.True(t, utf8.ValidString(got), "cut at a character boundary")
		}
	}
}

// boundLine leaves a line within the bounds byte for byte as json.Marshal writes it,
// and turns an answer (live or stored) over its kind's bound into that engine's error.
func TestBoundLineTurnsAnOversizedAnswerIntoAnError(t *testing.T) {
	small := &reflection.State{Engine: "firefox", Observations: []reflection.Observation{}}
	resp := ReflectResponse{ID: json.RawMessage(`"r"`), Answers: map[string]*reflection.State{"firefox": small},
		Errors: map[string]string{"webkit": strings.Repeat("<", 1e6)}}
	lim := answerLimits{"reflect": 2000}
	b, err := boundLine(resp, lim)
	require.NoError(t, err)
	assert.Less(t, len(b), 2*MaxErrorBytes, "the error is cut")

	v := strings.Repeat("<", 1000) // 6000 bytes escaped
	big := &reflection.State{Engine: "chromium", Observations: []reflection.Observation{{Selector: "#a", Attr: "t", AttrValue: &v, IDL: "t", IDLValue: json.RawMessage(`1`)}}}
	resp = ReflectResponse{ID: json.RawMessage(`"r"`), Answers: map[string]*reflection.State{"chromium": big, "firefox": small},
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

	ok := GeometryResponse{ID: json.RawMessage(`1`), Answers: map[string]*dump.Dump{"chromium": {Engine: "chromium", Nodes: []dump.Node{{Tag: "<HTML>"}}}}}
	b, err = boundLine(ok, answerLimits{"geometry": 1 << 20})
	require.NoError(t, err)
	want, _ := json.Marshal(ok)
	assert.Equal(t, string(want), string(b), "a line within the bounds is what json.Marshal writes")
}

// docs/untrusted.md states the largest answer line at the default flags; it must be
// MaxAnswerLine's value.
func TestDocumentedMaxAnswerLineIsTheDefault(t *testing.T) {
	doc, err := os.ReadFile("../docs/untrusted.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`at the defaults, ([0-9,]+) bytes`).FindSubmatch(doc)
	require.NotNil(t, m, `docs/untrusted.md states "at the defaults, N bytes"`)
	n, err := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", ""))
	require.NoError(t, err)
	assert.Equal(t, MaxAnswerLine(DefaultDumpMaxNodes, trace.DefaultLimits.Bytes), n)
}
