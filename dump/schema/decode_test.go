package schema

import (
	"encoding/json"
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
)

// bigDump is the fixture bare dump with its last node repeated until it has n
// nodes, as JSON.
func bigDump(t testing.TB, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(fixtures + "bare.json")
	require.NoError(t, err)
	var d dump.Dump
	require.NoError(t, json.Unmarshal(b, &d))
	last := d.Nodes[len(d.Nodes)-1]
	for len(d.Nodes) < n {
		nd := last
		nd.Index = len(d.Nodes)
		d.Nodes = append(d.Nodes, nd)
	}
	out, err := json.Marshal(d)
	require.NoError(t, err)
	return out
}

// The one-pass check (DecodeDump) refuses what the whole-document check refuses,
// with the same errors, and decodes what it accepts to the same dump.
func TestDecodeDumpAgreesWithTheWholeDocumentCheck(t *testing.T) {
	good := bigDump(t, 50)
	nodes := func(m map[string]any) []any { return m["nodes"].([]any) }
	cases := map[string]func(m map[string]any){
		"valid":          func(map[string]any) {},
		"negative width": func(m map[string]any) { nodes(m)[7].(map[string]any)["bounding"].(map[string]any)["w"] = -1 },
		"lowercase tags": func(m map[string]any) {
			for _, n := range nodes(m) {
				n.(map[string]any)["tag"] = "p"
			}
		},
		"no engine":          func(m map[string]any) { delete(m, "engine") },
		"unknown field":      func(m map[string]any) { m["extra"] = 1 },
		"no nodes":           func(m map[string]any) { m["nodes"] = []any{} },
		"nodes not an array": func(m map[string]any) { m["nodes"] = map[string]any{"a": 1} },
		"wrong index":        func(m map[string]any) { nodes(m)[3].(map[string]any)["index"] = 9 },
		"fractional index":   func(m map[string]any) { nodes(m)[3].(map[string]any)["index"] = 3.5 },
		"wide viewport":      func(m map[string]any) { m["viewport"].(map[string]any)["width"] = 801 },
		"first node broken":  func(m map[string]any) { delete(nodes(m)[0].(map[string]any), "style") },
		"not an object":      nil,
	}
	for name, breakIt := range cases {
		raw := []byte(`[1, 2]`)
		if breakIt != nil {
			var c map[string]any
			require.NoError(t, json.Unmarshal(good, &c))
			breakIt(c)
			var err error
			raw, err = json.Marshal(c)
			require.NoError(t, err)
		}
		want, wantErrs := wholeDump(raw, "")
		got, gotErrs := DecodeDump(raw)
		assert.Equal(t, wantErrs, gotErrs, name)
		assert.Equal(t, want, got, name)
		if name == "valid" {
			require.NotNil(t, got)
			assert.Len(t, got.Nodes, 50)
		} else {
			assert.NotEmpty(t, gotErrs, name)
		}
	}
	_, es := DecodeDump(good[:len(good)/2])
	require.Len(t, es, 1)
	assert.Equal(t, "JSON", es[0].Keyword, "a cut dump is a JSON error")
}

// The cost of checking and decoding one large candidate dump (20,000 nodes): one
// pass, node by node (DecodeDump, what candidate.Decode and compare use), against
// the whole-document check followed by a decode, as it was done before (which then
// decoded it once more). Besides time and allocations it reports peak-heap-MB, the
// most heap in live and not yet collected objects while decoding, sampled every
// millisecond: what one case in flight costs. docs/log/untrusted.md has the figures.
func BenchmarkDecodeDump(b *testing.B) {
	raw := bigDump(b, 20000)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	for _, bc := range []struct {
		name string
		f    func([]byte, string) (*dump.Dump, Errors)
	}{{"one-pass", decodeDump}, {"whole-document", wholeDump}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			runtime.GC()
			base := heap()
			var peak atomic.Uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				t := time.NewTicker(time.Millisecond)
				defer t.Stop()
				for {
					if h := heap(); h > peak.Load() {
						peak.Store(h)
					}
					select {
					case <-stop:
						return
					case <-t.C:
					}
				}
			}()
			for b.Loop() {
				if _, es := bc.f(raw, ""); es != nil {
					b.Fatal(es)
				}
			}
			close(stop)
			<-done
			b.ReportMetric(float64(peak.Load()-min(base, peak.Load()))/(1<<20), "peak-heap-MB")
		})
	}
}
