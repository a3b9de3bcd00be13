package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/report"
)

// engineOrder is the columns of a bucket's values table.
var engineOrder = []string{"chromium", "firefox", "webkit", candidateName}

// pageBucket is one entry on the index page.
type pageBucket struct {
	Rank    int
	B       *Bucket
	Label   string
	Page    string // the reduced case's page in reduced/ (report package): its boxes drawn
	Path    string // the cause's box in the case its values come from
	From    string // that case: "reduced case" or "representative"
	Rows    []valueRow
	Cases   []string
	More    int
	Pct     string
	Verdict string
	Share   string // its cases, of the corpus's
	Largest string // its largest failed delta in Rows, with the item
}

type valueRow struct {
	Property string
	Values   []string
	Want     string
	Delta    string
	Failed   bool
	delta    *float64
}

// writeIndex writes DIR/index.html (an overview table, then the entries, best
// first, then the baseline's fixed ones), each entry's DIR/entries/N (writeEntry)
// and, through package report, DIR/reduced/: one page per reduced case drawing the
// three engines' boxes and the candidate's side by side.
func writeIndex(cfg config, buckets, fixed []*Bucket, byID map[string]*scored, sum *summary) error {
	reduced, err := cfg.dir.Sub("reduced")
	if err != nil {
		return err
	}
	defer reduced.Close()
	rw, err := report.NewIn(reduced, cfg.tol)
	if err != nil {
		return err
	}
	var pbs []pageBucket
	drawn := 0
	for i, b := range buckets {
		pb := pageBucket{Rank: i + 1, B: b, Label: b.Signature.Label()}
		pb.Cases = b.Cases[:min(len(b.Cases), 100)]
		pb.More = len(b.Cases) - len(pb.Cases)
		if sum.Cases > 0 {
			pb.Share = fmt.Sprintf("%.1f%%", 100*float64(len(b.Cases))/float64(sum.Cases))
		}
		if r := b.Reduced; r != nil && r.BytesBefore > 0 && r.Error == "" {
			pb.Pct = fmt.Sprintf("%.0f%%", 100*float64(r.Bytes)/float64(r.BytesBefore))
		}
		src, from := b.confirm, "reduced case"
		if p := b.confirm; p != nil && p.resp != nil {
			rep := p.report
			if rep == nil {
				rep = &compare.Report{Verdict: "candidate-error", Reason: fmt.Sprint(p.candErr)}
			}
			id, _ := json.Marshal(fmt.Sprintf("entry %d (reduced)", i+1))
			if err := rw.Add(report.Case{ID: id, Report: rep, Dumps: p.resp.Dumps, Candidate: p.cand,
				Errors: p.resp.Errors, Unstable: compare.Unstable(p.resp.Unstable)}); err != nil {
				return fmt.Errorf("entry %d's reduced case: %w", i+1, err)
			}
			drawn++
			pb.Page = fmt.Sprintf("reduced/cases/%06d.html", drawn)
			b.Reduced.Page = pb.Page
		} else {
			src, from = probeOf(byID[b.Representative]), "representative"
		}
		if c := causeOf(src, b); c != nil {
			pb.Path, pb.From = c.Path, from
			var largest *valueRow
			for _, it := range itemsOf(src, c, cfg) {
				row := valueRow{Property: it.Property, Want: it.Want, Failed: it.Failed, delta: it.Delta}
				for _, e := range engineOrder {
					row.Values = append(row.Values, it.Values[e])
				}
				if it.Delta != nil {
					row.Delta = fmt.Sprintf("%+.3f", *it.Delta)
					if it.Failed && (largest == nil || math.Abs(*it.Delta) > math.Abs(*largest.delta)) {
						largest = &row
					}
				}
				pb.Rows = append(pb.Rows, row)
			}
			if largest != nil {
				pb.Largest = largest.Delta + " px (" + largest.Property + ")"
			}
		}
		if err := writeEntry(cfg, &pb, src, byID); err != nil {
			return fmt.Errorf("entry %d: %w", i+1, err)
		}
		pbs = append(pbs, pb)
	}
	if err := rw.Close(); err != nil {
		return err
	}
	// Rendered whole, then written: a failed write or close is the error.
	var page bytes.Buffer
	if err := indexTmpl.Execute(&page, struct {
		Sum     *summary
		Buckets []pageBucket
		Fixed   []*Bucket
		Engines []string
		Cmd     string
		Env     string
	}{sum, pbs, fixed, engineOrder, cfg.cand.Describe(), cfg.envName}); err != nil {
		return err
	}
	return cfg.dir.WriteFile("index.html", page.Bytes())
}

// probeOf is a scored case as a probe (the representative's answers, when the
// entry has no confirming run of a reduced case).
func probeOf(r *scored) *probe {
	if r == nil {
		return nil
	}
	return &probe{resp: r.resp, cand: r.cand, candErr: r.candErr, report: r.report, errKind: r.errKind, overflow: r.overflow, verdict: r.verdict}
}

var indexTmpl = template.Must(template.New("index").Funcs(template.FuncMap{
	"verdicts": verdictText,
	"has":      func(xs []string, x string) bool { return slices.Contains(xs, x) },
	"join":     func(xs []string) string { return strings.Join(xs, ", ") },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>triage: {{len .Buckets}} entries</title>
<style>
body{font:14px/1.4 sans-serif;margin:1.5em;max-width:80em}
h2{font-size:1.1em;margin-top:2em;border-top:1px solid #ccc;padding-top:.8em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;font-family:monospace}
tr.failed td{background:#fee}
pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap;word-break:break-all;max-height:20em;overflow:auto}
.muted{color:#666}
</style></head><body>
<h1>Triage: {{len .Buckets}} entries</h1>
<p>Rerun an entry against a new build: <code>sh entries/N/rerun.sh [CANDIDATE]</code> in this directory (exit 1 while the defect shows, 0 once it passes, 2 when it cannot judge; CANDIDATE replaces the run's candidate, in its mode). Each entry's <code>entries/N/report.md</code> says it in one page.</p>
{{with .Sum.Baseline}}<p>Against the baseline <code>{{.Dir}}</code>: <b>{{.New}} new</b>, {{.Still}} still failing, {{.Fixed}} fixed.</p>{{end}}
{{if .Buckets}}<table><tr><th>rank</th><th>entry</th>{{if .Sum.Baseline}}<th>status</th>{{end}}<th>cases</th><th>share</th><th>largest delta</th><th>rerun</th></tr>
{{range .Buckets}}<tr><td>{{.Rank}}</td><td><a href="#b{{.Rank}}">{{.Label}}</a></td>{{if $.Sum.Baseline}}<td>{{.B.Status}}</td>{{end}}<td>{{len .B.Cases}}</td><td>{{.Share}}</td><td>{{.Largest}}</td><td><code>sh {{.B.Rerun}}</code></td></tr>
{{end}}</table>{{end}}
<p>Candidate <code>{{.Cmd}}</code>, in the {{.Env}} environment.
{{.Sum.Cases}} cases: {{verdicts .Sum.Verdicts}}. {{.Sum.Causes}} causes the candidate fails, where the engines are unanimous or have a majority, in {{.Sum.Buckets}} entries (one per defect, each with the signatures it shows as: its variants), ranked by severity (crashes and timeouts, candidate errors, candidate-only overflows), then by the cases its fix makes pass.
Files: <a href="buckets.json">buckets.json</a>, <a href="candidate.ndjson">candidate.ndjson</a>, <a href="oracle.ndjson">oracle.ndjson</a>, <a href="summary.json">summary.json</a>.</p>
{{range .Buckets}}
<h2 id="b{{.Rank}}">#{{.Rank}} {{.Label}}</h2>
<p><b>{{.B.Trigger}}</b> ({{.B.Severity}}{{with .B.Status}}; {{.}}{{end}}{{with .B.BaselineRank}}, #{{.}} in the baseline{{end}}{{with .B.Recheck}}, its reduced case there {{.}} in this build{{end}}). Rerun: <code>sh {{.B.Rerun}}</code>; <a href="{{.B.Report}}">report</a>. {{len .B.Cases}} cases, {{.B.Fixes}} of them pass once it and the entries above are fixed; {{.B.Causes}} causes, {{.B.Items}} items. Representative (smallest case): <code>{{.B.Representative}}</code>.
Engines giving the candidate's value too: {{if .B.AgreeingEngines}}<b>{{join .B.AgreeingEngines}}</b>{{else}}none (the candidate alone against all three){{end}}.</p>
{{if gt (len .B.Variants) 1}}<table><tr><th>variant</th><th>cases</th><th>causes</th><th>agreeing engines</th></tr>
{{range .B.Variants}}<tr><td>{{.Signature.Label}}</td><td>{{len .Cases}}</td><td>{{.Causes}}</td><td>{{join .AgreeingEngines}}</td></tr>
{{end}}</table>{{end}}
{{with .B.Merged}}<p>Folded in, their reduced cases being the same page or the same stylesheet trigger: {{join .}}.</p>{{end}}
{{with .B.Reduced}}
<p>Reduced: {{.BytesBefore}} &rarr; {{.Bytes}} bytes in {{printf "%.1f" .Seconds}}s ({{.Variants}} variants);
reproduced in a fresh oracle and candidate run: <b>{{.Reproduced}}</b>{{with .Error}}; {{.}}{{end}}{{with .OtherFailures}}; it still fails also: {{join .}}{{end}}.</p>
{{if not .Error}}<pre>{{.HTML}}</pre>{{end}}
{{end}}
{{if .Rows}}
<p>Its box in the {{.From}}: <code>{{.Path}}</code>{{if .Page}} (<a href="{{.Page}}">the four engines' boxes drawn side by side</a>){{end}}.</p>
<table><tr><th>item</th>{{range $.Engines}}<th>{{.}}</th>{{end}}<th>majority</th><th>candidate &minus; majority</th></tr>
{{range .Rows}}<tr{{if .Failed}} class="failed"{{end}}><td>{{.Property}}</td>{{range .Values}}<td>{{.}}</td>{{end}}<td>{{.Want}}</td><td>{{.Delta}}</td></tr>
{{end}}</table>
{{else if .Page}}<p><a href="{{.Page}}">The reduced case's boxes</a>.</p>{{end}}
<details><summary>The {{len .B.Cases}} cases it covers</summary><p class="muted">{{range .Cases}}<code>{{.}}</code> {{end}}{{if .More}}and {{.More}} more (buckets.json){{end}}</p></details>
{{else}}
<p>The candidate fails nothing the engines agree on.</p>
{{end}}
{{with .Fixed}}<h2>Fixed since the baseline</h2>
<table><tr><th>baseline rank</th><th>entry</th><th>cases then</th><th>its reduced case in this build</th></tr>
{{range .}}<tr><td>{{.BaselineRank}}</td><td>{{.Signature.Label}}</td><td>{{len .Cases}}</td><td>{{.Recheck}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))
