package compare

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/vote"
)

// small is base without styles: big seeds stall Go's mutator (golang/go#51484),
// and styles add nothing the decoder has not seen in the first property.
func small(engine string) *dump.Dump {
	d := base(engine)
	for i := range d.Nodes {
		d.Nodes[i].Style = dump.Style{"display": "block"}
	}
	return d
}

func seedJSON(f *testing.F, d *dump.Dump) []byte {
	b, err := json.Marshal(d)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzDecode: dump.Decode never panics, and whatever it accepts compares clean
// against itself and without a panic against any other accepted dump.
func FuzzDecode(f *testing.F) {
	a := seedJSON(f, small("chromium"))
	moved := small("firefox")
	shift(moved, 2, 1.5, -3)
	b := seedJSON(f, moved)
	f.Add(a, a)
	f.Add(a, b)
	f.Add([]byte(`{"engine":"x","engine_version":"1","viewport":{"width":800,"height":600},"nodes":[{"index":0,"parent":-1,"tag":"HTML","depth":0,"bounding":{"x":0,"y":0,"w":0,"h":0},"rects":[]}]}`), a)
	f.Add([]byte(`{"engine":"x","engine_version":"1","nodes":[{"index":0,"parent":-1},{"index":1,"parent":0,"depth":1,"rects":null}]}`), []byte(`null`))
	f.Add([]byte(`{"nodes":[{"index":0,"parent":5}]}`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, wantJSON, gotJSON []byte) {
		want, err := dump.Decode(wantJSON)
		if err != nil {
			return
		}
		r, err := Dumps(want, want, dump.DefaultTolerance)
		if err != nil {
			t.Fatalf("a valid dump was refused against itself: %v", err)
		}
		if want.Overflowed {
			if r.Verdict != Discarded {
				t.Fatalf("overflowed dump not discarded: %+v", r)
			}
		} else if r.Verdict != Pass || len(r.Findings) != 0 || len(r.StyleFindings) != 0 {
			t.Fatalf("a dump does not pass against itself: %+v", r)
		}
		if got, err := dump.Decode(gotJSON); err == nil {
			if _, err := Dumps(want, got, dump.DefaultTolerance); err != nil && want.Viewport == got.Viewport {
				t.Fatalf("two valid dumps with one viewport refused: %v", err)
			}
		}
	})
}

// bytesource turns fuzz input into small numbers, yielding zeros once it runs out.
type bytesource []byte

func (b *bytesource) next(n int) int {
	if len(*b) == 0 || n <= 0 {
		return 0
	}
	v := int((*b)[0]) % n
	*b = (*b)[1:]
	return v
}

// gen builds a valid dump whose shape, fragment counts, coordinates and styles all
// come from src, so the fuzzer explores the comparator rather than the JSON parser.
func gen(engine string, shape, geom *bytesource) *dump.Dump {
	tags := []string{"HTML", "BODY", "DIV", "SPAN", "P"}
	d := &dump.Dump{Engine: engine, EngineVersion: "1", Viewport: dump.Viewport, Overflowed: geom.next(16) == 0}
	n := shape.next(12) + 1
	for i := 0; i < n; i++ {
		parent, depth := -1, 0
		if i > 0 {
			parent = shape.next(i)
			depth = d.Nodes[parent].Depth + 1
		}
		// One value in 64 is near float64's limit, where a delta, an offset or a
		// sum overflows to an infinity (the command once aborted on one).
		coord := func() float64 {
			if geom.next(64) == 63 {
				return float64(geom.next(3)-1) * 1.7e308
			}
			return float64(geom.next(256)-128) / float64(geom.next(4)*20+1)
		}
		var rects []dump.Rect
		for k := shape.next(3) + geom.next(2) - 1; k > 0; k-- {
			rects = append(rects, dump.Rect{X: coord(), Y: coord(), W: coord(), H: coord()})
		}
		var bounding dump.Rect
		if len(rects) > 0 {
			bounding = dump.Rect{X: coord(), Y: coord(), W: coord(), H: coord()}
		}
		style := dump.Style{}
		for _, p := range dump.StyleProperties[:3] {
			style[p] = []string{"block", "inline", ""}[geom.next(3)]
		}
		d.Nodes = append(d.Nodes, dump.Node{Index: i, Parent: parent, Tag: tags[shape.next(len(tags))],
			Depth: depth, Bounding: bounding, Rects: rects, Style: style})
	}
	return d
}

// FuzzCompare: for any three oracle dumps and candidate built from the input, the
// voted comparison never panics, never refuses valid input, and its counters are
// consistent with its findings.
func FuzzCompare(f *testing.F) {
	f.Add([]byte{}, []byte{}, uint8(3))
	f.Add([]byte{5, 1, 2, 3, 4, 0, 1}, []byte{200, 3, 7, 9, 11, 13, 0, 0, 1, 2}, uint8(3))
	f.Add([]byte{11, 0, 0, 1, 1, 2, 2, 3, 3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, uint8(2))
	f.Add([]byte{3, 0, 1, 2}, []byte{255, 254, 253, 0, 0, 0, 128, 128}, uint8(1))
	f.Add([]byte{3, 0, 1, 2}, []byte{0, 63, 2, 63, 2, 63, 0, 63, 2, 1, 63, 2, 63, 0}, uint8(3)) // infinities
	f.Fuzz(func(t *testing.T, shapeBytes, geomBytes []byte, engines uint8) {
		names := []string{"chromium", "firefox", "webkit", "servo"}[:int(engines)%5]
		oracle := map[string]*dump.Dump{}
		for k, name := range names {
			// Each dump re-reads the same bytes from its own offset, so shapes and
			// values are often but not always equal, which is where votes get hard.
			shape, geom := bytesource(shapeBytes), bytesource(geomBytes)
			if k < len(shapeBytes) && shapeBytes[k]%4 == 0 {
				shape = shape[1:]
			}
			if k < len(geomBytes) {
				geom = geom[k:]
			}
			oracle[name] = gen(name, &shape, &geom)
		}
		shape, geom := bytesource(shapeBytes), bytesource(geomBytes)
		if len(geom) > 0 {
			geom = geom[len(geom)/2:]
		}
		got := gen("candidate", &shape, &geom)

		r, err := Geometry(oracle, got, dump.DefaultTolerance)
		if err != nil {
			t.Fatalf("valid dumps refused: %v", err)
		}
		switch r.Verdict {
		case Pass, Fail, Discarded, Untrustworthy:
		default:
			t.Fatalf("unexpected verdict %q", r.Verdict)
		}
		if r.Layout.Failed > r.Layout.Compared || r.Style.Failed > r.Style.Compared {
			t.Fatalf("more failures than comparisons: %+v %+v", r.Layout, r.Style)
		}
		if len(r.Failures()) > r.Layout.Failed || len(r.StyleFindings) != r.Style.Failed {
			t.Fatalf("findings disagree with counters: %+v", r)
		}
		if r.Verdict == Pass && (r.Layout.Failed > 0 || r.Style.Failed > 0) {
			t.Fatalf("pass with failures: %+v", r)
		}
		if r.MaxAbsDelta > r.SumAbsDelta {
			t.Fatalf("max |delta| %v above sum %v", r.MaxAbsDelta, r.SumAbsDelta)
		}
		for _, fd := range r.Findings {
			if fd.Within && (math.IsInf(fd.Delta, 0) || math.IsNaN(fd.Delta)) {
				t.Fatalf("a delta of %v counted within tolerance: %+v", fd.Delta, fd)
			}
		}
		only, err := Geometry(oracle, nil, dump.DefaultTolerance)
		if err != nil {
			t.Fatalf("oracle-only vote refused: %v", err)
		}
		// Attribution accounts for each non-unanimous item exactly once.
		want := only.Votes[vote.Majority] + only.Votes[vote.Split] + only.Votes[vote.Disagree]
		if only.ShapeVote == vote.Majority {
			want++
		}
		seen := map[ItemRef]bool{}
		for _, c := range only.Causes {
			for _, it := range c.Items {
				if seen[it] {
					t.Fatalf("item %v attributed twice: %+v", it, only.Causes)
				}
				seen[it] = true
			}
		}
		if got := Explained(only.Causes); got != want || len(seen) != want {
			t.Fatalf("causes explain %d items (%d listed), want %d non-unanimous: %+v", got, len(seen), want, only)
		}
	})
}
