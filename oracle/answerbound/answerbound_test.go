package answerbound

// Unit tests of the bounds themselves (no browser); that the oracle's lines keep
// them is package oracle's TestBoundLineTurnsAnOversizedAnswerIntoAnError and
// cmd/oracle's answerline_test.go.

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/layout-oracle/oracle/dump"
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
// at its bound) encodes within Geometry(n).
func TestGeometryAnswerMaxBoundsTheWorstDump(t *testing.T) {
	for _, n := range []int{1, 9, 10, 1000} {
		f := -0.0000012345678901234567
		r := dump.Rect{X: f, Y: f, W: f, H: f}
		// A string whose JSON takes exactly b bytes, quotes included.
		fill := func(b int) string { return strings.Repeat("<", (b-2)/6) + strings.Repeat("a", (b-2)%6) }
		d := dump.Dump{Engine: "chromium", EngineVersion: strings.Repeat("9", 64), Viewport: dump.Viewport,
			Overflowed: true, Screenshot: base64.StdEncoding.EncodeToString(make([]byte, MaxScreenshot))}
		for i := 0; i < n; i++ {
			st := dump.Style{}
			for j, k := range dump.StyleProperties {
				b := StyleBytesPerNode / len(dump.StyleProperties)
				if j == 0 {
					b += StyleBytesPerNode % len(dump.StyleProperties)
				}
				st[k] = fill(b)
			}
			d.Nodes = append(d.Nodes, dump.Node{Index: n - 1, Parent: n - 1, Depth: n - 1, Tag: fill(TagBytesPerNode),
				Bounding: r, Rects: []dump.Rect{r, r, r, r}, Style: st})
		}
		b, err := json.Marshal(d)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), Geometry(n), "n=%d", n)
		t.Logf("n=%d: worst dump %d bytes, bound %d", n, len(b), Geometry(n))
	}
}

func TestFitErrorCutsLongMessagesWithAMarker(t *testing.T) {
	short := "script threw: Error: " + strings.Repeat("<", 2600)
	assert.Equal(t, short, FitError(short), "a message under the bound is kept whole")
	for _, msg := range []string{
		"script threw: Error: " + strings.Repeat("<", 10_000_000),
		strings.Repeat("é", 10000),
		strings.Repeat("\u2028x\xff", 3000),
		strings.Repeat("a", MaxErrorBytes-1),
	} {
		got := FitError(msg)
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
