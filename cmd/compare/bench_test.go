package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/layout-oracle/oracle/dump"
)

// synthDump is a 50-node-ish page: a ternary tree of blocks with the full style
// subset, the size a real case's dump has.
func synthDump(engine string, nodes int, noise float64) *dump.Dump {
	d := &dump.Dump{Engine: engine, EngineVersion: "1.0", Viewport: dump.Viewport}
	for i := 0; i < nodes; i++ {
		parent, depth := -1, 0
		if i > 0 {
			parent = (i - 1) / 3
			depth = d.Nodes[parent].Depth + 1
		}
		r := dump.Rect{X: float64(i%3) * 20, Y: float64(i) * 10.5, W: 800 - float64(depth)*40 + noise, H: 10 + float64(i%5)}
		style := dump.Style{}
		for _, p := range dump.StyleProperties {
			style[p] = "0px"
		}
		style["display"] = "block"
		d.Nodes = append(d.Nodes, dump.Node{Index: i, Parent: parent, Tag: "DIV", Depth: depth,
			Bounding: r, Rects: []dump.Rect{r}, Style: style})
	}
	d.Nodes[0].Tag = "HTML"
	return d
}

// synthFiles is an oracle file and a candidate file of n cases. The candidate
// file is in reverse order, so every case is found through the index, and every
// tenth candidate has one wrong width.
func synthFiles(n, nodes int) (oracle, cand []byte) {
	var o, c bytes.Buffer
	oe, ce := json.NewEncoder(&o), json.NewEncoder(&c)
	var cands []any
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("case-%05d", i)
		oe.Encode(map[string]any{"id": id, "dumps": map[string]*dump.Dump{
			"chromium": synthDump("chromium", nodes, 0),
			"firefox":  synthDump("firefox", nodes, 1.0/60),
			"webkit":   synthDump("webkit", nodes, 1.0/64),
		}})
		got := synthDump("candidate", nodes, 0)
		if i%10 == 0 {
			got.Nodes[nodes/2].Bounding.W += 2
		}
		cands = append(cands, map[string]any{"id": id, "dump": got})
	}
	for i := len(cands) - 1; i >= 0; i-- {
		ce.Encode(cands[i])
	}
	return o.Bytes(), c.Bytes()
}

// compareBytes is the command's core (index, stream, compare, report) over
// in-memory files.
func compareBytes(oracle, cand []byte, out reporter) (int, error) {
	c, err := indexCandidates(bytes.NewReader(cand), int64(len(cand)))
	if err != nil {
		return exitBadInput, err
	}
	s := &session{tol: dump.DefaultTolerance, cands: c, out: out, stderr: io.Discard}
	if err := s.run(bytes.NewReader(oracle)); err != nil {
		return exitBadInput, err
	}
	return s.exit(), nil
}

func TestSynthetic(t *testing.T) {
	oracle, cand := synthFiles(30, 50)
	var out bytes.Buffer
	code, err := compareBytes(oracle, cand, &human{w: &out})
	if err != nil || code != exitFail {
		t.Fatalf("code %d, err %v, want exit 1 (every tenth case fails)\n%s", code, err, out.String())
	}
	if want := "30 cases: 27 pass, 3 fail; exit 1"; !bytes.Contains(out.Bytes(), []byte(want)) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

// BenchmarkCompareCases measures cases/s through the command's core: 1000 cases of
// 50 nodes, three oracle engines each, candidate file in reverse order, JSON report.
//
//	go test -run=NONE -bench=CompareCases -benchtime=5x ./cmd/compare/
func BenchmarkCompareCases(b *testing.B) {
	const cases = 1000
	oracle, cand := synthFiles(cases, 50)
	b.SetBytes(int64(len(oracle) + len(cand)))
	b.ResetTimer()
	runs := 0
	for b.Loop() {
		if code, err := compareBytes(oracle, cand, &jsonLines{enc: json.NewEncoder(io.Discard)}); err != nil || code != exitFail {
			b.Fatalf("code %d, err %v", code, err)
		}
		runs++
	}
	b.ReportMetric(float64(cases*runs)/b.Elapsed().Seconds(), "cases/s")
}

// FuzzRun: no oracle/candidate input pair panics the command's core, with or
// without a candidate file, in either output format; the exit status is always one
// of the three documented ones; and writing the report never fails (the writers
// here cannot fail, so an error is one the encoder raised on the report's numbers).
func FuzzRun(f *testing.F) {
	tiny := `{"engine":"e","engine_version":"1","viewport":{"width":800,"height":600},"nodes":[{"index":0,"parent":-1,"tag":"HTML","depth":0,"bounding":{"x":0,"y":0,"w":8,"h":1},"rects":[{"x":0,"y":0,"w":8,"h":1}],"style":{"display":"block"}}]}`
	huge := strings.ReplaceAll(tiny, `"w":8`, `"w":1.7e308`)
	f.Add([]byte(`{"id":"a","dumps":{"chromium":`+tiny+`,"webkit":`+tiny+`}}`), []byte(`{"id":"a","dump":`+tiny+`}`))
	f.Add([]byte(`{"id":"a","dumps":{"chromium":`+tiny+`}}`+"\n"+`{"id":"p","ok":true}`), []byte(tiny))
	f.Add([]byte(`{"id":1,"error":"x"}`+"\n"+`{"id":null,"error":"y"}`), []byte(`{"id":1,"error":"crash"}`))
	f.Add([]byte(`{"id":"a","dumps":5}`), []byte(`{"id":"b","dump":null}`))
	f.Add([]byte(`[`), []byte(`{`))
	// Each of these once crashed or aborted the command.
	f.Add([]byte(`{"states":{"chromium":null}}`), []byte(`{"id":"a","dump":`+tiny+`}`))
	f.Add([]byte(`{"id":"a","dumps":{"chromium":`+huge+`}}`), []byte(`{"id":"a","dump":`+strings.ReplaceAll(huge, "1.7e308", "-1.7e308")+`}`))
	f.Add([]byte(`{"id":"p","ok":true,"states":{"chromium":{"state":"ready","restarts":0,"pages":2}}}`+"\n"+`{"id":"t","traces":{}}`), []byte(`{"id":"a","dump":`+tiny+`}`))
	f.Add([]byte(`{"id":"\u0061","dumps":{"chromium":`+tiny+`}}`+"\n"+`{"id":1.0,"error":"x"}`), []byte(`{"id":"a","dump":`+tiny+`}`+"\n"+`{"id":1,"error":"y"}`))
	tr := `{"engine":"e","engine_version":"1","timed_out":false,"records":[{"seq":0,"kind":"value","label":"b","value":{"$buffer":true,"elementType":"Float32Array","length":1,"base64":"AACAPw=="}}]`
	f.Add([]byte(`{"id":"t","traces":{"chromium":`+tr+`,"emulated":["sensors"]},"firefox":`+tr+`}}}`+"\n"+`{"id":"u","traces":{"webkit":`+tr+`}}}`),
		[]byte(`{"id":"t","trace":`+strings.ReplaceAll(tr, "AACAPw", "AACAfw")+`}}`+"\n"+`{"id":"u","trace":{"emulated":["geolocation"]}}`))
	f.Fuzz(func(t *testing.T, oracle, cand []byte) {
		for _, out := range []*failingReporter{{reporter: &jsonLines{enc: json.NewEncoder(io.Discard)}}, {reporter: &human{w: io.Discard}}} {
			code, _ := compareBytes(oracle, cand, out)
			if code != exitOK && code != exitFail && code != exitBadInput {
				t.Fatalf("exit %d", code)
			}
			s := &session{tol: dump.DefaultTolerance, out: out, stderr: io.Discard} // oracle-only mode
			if s.run(bytes.NewReader(oracle)) == nil {
				s.exit()
			}
			if out.err != nil {
				t.Fatalf("writing the report failed: %v", out.err)
			}
		}
	})
}

// failingReporter keeps the first error its reporter returned.
type failingReporter struct {
	reporter
	err error
}

func (f *failingReporter) report(c caseResult) error { return f.keep(f.reporter.report(c)) }
func (f *failingReporter) finish(t totals) error     { return f.keep(f.reporter.finish(t)) }

func (f *failingReporter) keep(err error) error {
	if err != nil && f.err == nil {
		f.err = err
	}
	return err
}
