package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/trace"
	"github.com/layout-oracle/oracle/vote"
)

// shown bounds how many findings of each kind a case prints or lists as worst.
const shown = 3

// jsonLines writes one JSON object per case, then {"totals": ...}.
type jsonLines struct{ enc *json.Encoder }

// caseLine is a case's JSON line: the compare.Report with its findings trimmed to
// the failing ones (a case can have hundreds within tolerance), plus the worst few
// by |delta| whatever their verdict.
//
// Its numbers are jsonNum: the report's own fields are shadowed (the shallower field
// wins in encoding/json) so that a sum or delta past float64's range, which
// encoding/json refuses, cannot abort the run.
//
// Layout, style and the px sums are geometry's: a reflection or trace line carries
// its own axis (reflection, trace) and not these, which would read as a geometry
// case with nothing compared (and "pass": false).
type caseLine struct {
	ID json.RawMessage `json:"id"`
	*compare.Report
	Layout       *compare.Axis     `json:"layout,omitempty"`
	Style        *compare.Axis     `json:"style,omitempty"`
	SumAbsDelta  *jsonNum          `json:"sum_abs_delta,omitempty"`
	MaxAbsDelta  *jsonNum          `json:"max_abs_delta,omitempty"`
	Findings     []jsonFinding     `json:"findings,omitempty"`
	Worst        []jsonFinding     `json:"worst,omitempty"`
	OracleErrors map[string]string `json:"oracle_errors,omitempty"`
	// Unstable echoes the oracle's "unstable" items (counted in votes as "unstable").
	Unstable compare.Unstable `json:"unstable,omitempty"`
	// TraceFindings shadows the report's: a buffer's max |diff| can be +Inf.
	TraceFindings []jsonTraceFinding `json:"trace_findings,omitempty"`
}

type jsonTraceFinding struct {
	trace.Finding
	MaxAbsDiff jsonNum `json:"max_abs_diff,omitempty"`
}

type jsonFinding struct {
	compare.Finding
	Want  jsonNum `json:"want"`
	Got   jsonNum `json:"got"`
	Delta jsonNum `json:"delta"`
}

func jsonFindings(fs []compare.Finding) []jsonFinding {
	var out []jsonFinding
	for _, f := range fs {
		out = append(out, jsonFinding{Finding: f, Want: jsonNum(f.Want), Got: jsonNum(f.Got), Delta: jsonNum(f.Delta)})
	}
	return out
}

// jsonNum is a float64 that encodes +Inf, -Inf and NaN as the strings "+Inf",
// "-Inf" and "NaN" (JSON has no such numbers): widths near 1.7e308 overflow a sum.
type jsonNum float64

func (n jsonNum) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	}
	return json.Marshal(f)
}

func (j *jsonLines) report(c caseResult) error {
	r := c.Report
	line := caseLine{ID: c.ID, Report: r, Findings: jsonFindings(r.Failures()), Worst: jsonFindings(r.Worst(shown)),
		OracleErrors: c.OracleErrors, Unstable: c.Unstable, TraceFindings: jsonTraceFindings(r.TraceFindings)}
	if r.Reflection == nil && r.Trace == nil {
		sum, maxDelta := jsonNum(r.SumAbsDelta), jsonNum(r.MaxAbsDelta)
		line.Layout, line.Style, line.SumAbsDelta, line.MaxAbsDelta = &r.Layout, &r.Style, &sum, &maxDelta
	}
	return j.enc.Encode(line)
}

func jsonTraceFindings(fs []trace.Finding) []jsonTraceFinding {
	var out []jsonTraceFinding
	for _, f := range fs {
		out = append(out, jsonTraceFinding{Finding: f, MaxAbsDiff: jsonNum(f.MaxAbsDiff)})
	}
	return out
}

func (j *jsonLines) finish(t totals) error {
	return j.enc.Encode(struct {
		Totals totals `json:"totals"`
	}{t})
}

// printf is fmt.Fprintf with every string argument made cli.Printable: ids, tags,
// selectors, engine names and error messages come from the answers, the candidate
// and the cases, and reach a terminal.
func printf(w io.Writer, format string, args ...any) (int, error) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = cli.Printable(s)
		}
	}
	return fmt.Fprintf(w, format, args...)
}

// human writes a few lines per case and a totals line.
type human struct{ w io.Writer }

func (h *human) report(c caseResult) error {
	r := c.Report
	var b strings.Builder
	verdict := string(r.Verdict)
	if r.Verdict == compare.Fail {
		verdict = "FAIL"
	}
	printf(&b, "%-13s %s  ", verdict, displayID(c.ID))
	switch {
	case r.Shape != nil:
		printf(&b, "%s: want %s, got %s (%+d nodes)\n", r.Reason, r.Shape.Want, r.Shape.Got, r.Shape.NodeDelta)
	case r.Verdict == compare.NoCandidate:
		printf(&b, "oracle votes: %s\n", votes(r.Votes))
	case r.Reflection != nil && (r.Verdict == compare.Pass || r.Verdict == compare.Fail):
		printf(&b, "reflection %d/%d failed", r.Reflection.Failed, r.Reflection.Compared)
		if r.Reflection.Untrusted > 0 {
			printf(&b, ", %d untrusted", r.Reflection.Untrusted)
		}
		if r.Reflection.Unstable > 0 {
			printf(&b, ", %d unstable", r.Reflection.Unstable)
		}
		b.WriteByte('\n')
	case r.Trace != nil && (r.Verdict == compare.Pass || (r.Verdict == compare.Fail && r.Reason == "")):
		printf(&b, "trace %d/%d records failed", r.Trace.Failed, r.Trace.Compared)
		if r.Trace.Untrusted > 0 {
			printf(&b, ", %d untrusted", r.Trace.Untrusted)
		}
		if r.Trace.Unstable > 0 {
			printf(&b, ", %d unstable", r.Trace.Unstable)
		}
		b.WriteByte('\n')
	case r.Verdict == compare.Pass || (r.Verdict == compare.Fail && r.Reason == ""):
		axis := func(name string, a compare.Axis, scored bool) string {
			if !scored {
				return name + " not scored"
			}
			return fmt.Sprintf("%s %d/%d failed", name, a.Failed, a.Compared)
		}
		printf(&b, "%s, %s, max |delta| %.4g px, sum %.4g px", axis("layout", r.Layout, r.Axes.Layout()),
			axis("style", r.Style, r.Axes.Style()), r.MaxAbsDelta, r.SumAbsDelta)
		if n := r.Layout.Untrusted + r.Style.Untrusted; n > 0 {
			printf(&b, ", %d untrusted", n)
		}
		if n := r.Layout.Unstable + r.Style.Unstable; n > 0 {
			printf(&b, ", %d unstable", n)
		}
		b.WriteByte('\n')
	default:
		b.WriteString(r.Reason + "\n")
	}
	if len(r.Causes) > 0 {
		b.WriteString("    " + causesLine(r.Causes) + "\n")
	}
	fails := r.Failures()
	sort.SliceStable(fails, func(i, j int) bool { return abs(fails[i].Delta) > abs(fails[j].Delta) })
	for i, f := range fails {
		if i == shown {
			printf(&b, "    ... %d more outside tolerance\n", len(fails)-shown)
			break
		}
		printf(&b, "    node %d %s %s: want %g, got %g (%+g)\n", f.Node, f.Tag, f.Property, f.Want, f.Got, f.Delta)
	}
	for i, f := range r.StyleFindings {
		if i == shown {
			printf(&b, "    ... %d more style mismatches\n", len(r.StyleFindings)-shown)
			break
		}
		printf(&b, "    node %d %s %s: want %q, got %q\n", f.Node, f.Tag, f.Property, f.Want, f.Got)
	}
	for i, f := range r.ReflectionFindings {
		if i == shown {
			printf(&b, "    ... %d more reflection mismatches\n", len(r.ReflectionFindings)-shown)
			break
		}
		printf(&b, "    probe %d %s %s: want %s, got %s\n", f.Probe, f.Selector, f.Property, f.Want, f.Got)
	}
	// A record-count finding (seq -1) is the case's reason already.
	recs := slices.DeleteFunc(slices.Clone(r.TraceFindings), func(f trace.Finding) bool { return f.Seq < 0 })
	for i, f := range recs {
		if i == shown {
			printf(&b, "    ... %d more record mismatches\n", len(recs)-shown)
			break
		}
		printf(&b, "    %s\n", traceFinding(f))
	}
	if len(r.Outliers) > 0 {
		var parts []string
		for _, o := range r.Outliers {
			parts = append(parts, fmt.Sprintf("%s %s x%d", o.Engine, o.Property, o.Count))
		}
		printf(&b, "    outvoted: %s\n", strings.Join(parts, ", "))
	}
	if len(r.NotComparable) > 0 {
		var parts []string
		for _, nc := range r.NotComparable {
			parts = append(parts, nc.Engine+" "+compare.EmulationText(nc.Emulated))
		}
		printf(&b, "    not comparable (the voters applied %s): %s\n", compare.EmulationText(r.Emulated), strings.Join(parts, ", "))
	}
	if len(c.Unstable) > 0 {
		var parts []string
		for _, e := range slices.Sorted(maps.Keys(c.Unstable)) {
			if items := c.Unstable[e]; len(items) > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", e, listed(items)))
			}
		}
		printf(&b, "    unstable (not voted): %s\n", strings.Join(parts, "; "))
	}
	if len(c.OracleErrors) > 0 {
		var parts []string
		for _, e := range slices.Sorted(maps.Keys(c.OracleErrors)) {
			parts = append(parts, e+": "+c.OracleErrors[e])
		}
		printf(&b, "    oracle errors: %s\n", strings.Join(parts, "; "))
	}
	_, err := io.WriteString(h.w, b.String())
	return err
}

// verdictOrder fixes the order verdicts are listed in the totals line.
var verdictOrder = []compare.Verdict{compare.Pass, compare.Fail, compare.Discarded,
	compare.Untrustworthy, compare.NoCandidate, compare.NotComparable, verdictMissing, verdictError}

func (h *human) finish(t totals) error {
	var parts []string
	for _, v := range verdictOrder {
		if n := t.Verdicts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	line := fmt.Sprintf("%d cases: %s", t.Cases, strings.Join(parts, ", "))
	if t.Cases == 0 {
		line = "0 cases"
	}
	if t.Skipped > 0 {
		line += fmt.Sprintf("; %d non-case lines skipped", t.Skipped)
	}
	if len(t.Outvoted) > 0 {
		var out []string
		for _, e := range slices.Sorted(maps.Keys(t.Outvoted)) {
			out = append(out, fmt.Sprintf("%s %d", e, t.Outvoted[e]))
		}
		line += "; outvoted: " + strings.Join(out, ", ")
	}
	if len(t.NotComparable) > 0 {
		var out []string
		for _, e := range slices.Sorted(maps.Keys(t.NotComparable)) {
			out = append(out, fmt.Sprintf("%s %d", e, t.NotComparable[e]))
		}
		line += "; not comparable (emulation): " + strings.Join(out, ", ")
	}
	if t.Unstable > 0 {
		line += fmt.Sprintf("; unstable: %d items in %d cases", t.Unstable, t.UnstableCases)
	}
	if a := t.Attributed; a != nil {
		if _, err := printf(h.w, "attribution: %d non-unanimous cases, %d items, %d causes (%.2f causes and %.1f items per case)\n",
			a.Cases, a.Items, a.Causes, float64(a.Causes)/float64(a.Cases), float64(a.Items)/float64(a.Cases)); err != nil {
			return err
		}
	}
	_, err := printf(h.w, "%s; exit %d\n", line, t.Exit)
	return err
}

// traceFinding is one record the candidate got wrong: "record 3 value at
// value.props.x: want 1, got 2"; a buffer finding says how many samples were out.
func traceFinding(f trace.Finding) string {
	if f.Kind == trace.MismatchBuffer {
		return f.String()
	}
	return fmt.Sprintf("record %d %s at %s: want %s, got %s", f.Seq, f.Kind, f.Path, f.A, f.B)
}

// causesLine leads a case's details: "2 causes for 14 non-unanimous items:
// firefox text at HTML>BODY>P[2] (12); webkit layout at ... (2)", the first shown.
func causesLine(cs []compare.Cause) string {
	var parts []string
	for i, c := range cs {
		if i == shown {
			parts = append(parts, fmt.Sprintf("... %d more", len(cs)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", c.Label(), c.Explains))
	}
	noun := "causes"
	if len(cs) == 1 {
		noun = "cause"
	}
	return fmt.Sprintf("%d %s for %d non-unanimous items: %s", len(cs), noun, compare.Explained(cs), strings.Join(parts, "; "))
}

func votes(v map[vote.Kind]int) string {
	if len(v) == 0 {
		return "one engine, no vote"
	}
	var parts []string
	for _, k := range []vote.Kind{vote.Unanimous, vote.Agree, vote.Majority, vote.Split, vote.Disagree, vote.Unstable} {
		if v[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, v[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// listed is up to shown items, then how many more.
func listed(items []string) string {
	if len(items) <= shown {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s ... %d more", strings.Join(items[:shown], ", "), len(items)-shown)
}

// displayID shows a string id unquoted and any other id as its JSON.
func displayID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
