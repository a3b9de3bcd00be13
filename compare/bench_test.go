package compare

import (
	"testing"

	"github.com/layout-oracle/oracle/dump"
)

// chain is n nested-and-sibling nodes (a ternary tree) with the full style subset.
func chain(engine string, n int) *dump.Dump {
	nodes := []spec{{-1, "HTML", 0, 0, 800, 600}}
	for i := 1; i < n; i++ {
		nodes = append(nodes, spec{(i - 1) / 3, "DIV", float64(i%3) * 20, float64(i) * 10.5, 700, 10})
	}
	return build(engine, nodes...)
}

// BenchmarkGeometry is the comparison alone, without JSON: one 50-node case against
// three engines.
//
//	go test -run=NONE -bench=Geometry ./compare/
func BenchmarkGeometry(b *testing.B) {
	oracle := map[string]*dump.Dump{"chromium": chain("chromium", 50), "firefox": chain("firefox", 50), "webkit": chain("webkit", 50)}
	oracle["firefox"].Nodes[7].Bounding.W += 1.0 / 60
	got := chain("candidate", 50)
	got.Nodes[20].Bounding.H += 2
	for b.Loop() {
		if r, err := Geometry(oracle, got, dump.DefaultTolerance); err != nil || r.Verdict != Fail {
			b.Fatalf("%v %v", r, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cases/s")
}

// BenchmarkAttributeDeep is attribution's worst shape: a 5,000-deep nest whose
// innermost box is taller in one engine, so every ancestor's height and every
// offset differs (about 15,000 non-unanimous items, one cause).
//
//	go test -run=NONE -bench=AttributeDeep ./compare/
func BenchmarkAttributeDeep(b *testing.B) {
	const n = 5000
	deep := func(engine string, dh float64) *dump.Dump {
		nodes := []spec{{-1, "HTML", 0, 0, 800, 10 + dh}}
		for i := 1; i < n; i++ {
			nodes = append(nodes, spec{i - 1, "DIV", 0, 0, 800, 10 + dh})
		}
		return build(engine, nodes...)
	}
	oracle := map[string]*dump.Dump{"chromium": deep("chromium", 0), "firefox": deep("firefox", 5), "webkit": deep("webkit", 0)}
	for b.Loop() {
		out, err := NodeOutcomes(oracle, nil, dump.DefaultTolerance)
		if err != nil || len(out.Causes) != 1 {
			b.Fatalf("%v %v", out, err)
		}
	}
}
