package report

import (
	"html/template"
	"strconv"

	"github.com/layout-oracle/oracle/compare"
)

var funcs = template.FuncMap{
	"votes":     votesText,
	"keys":      sortedKeys,
	"explained": compare.Explained,
	"emulation": compare.EmulationText,
	"num":       func(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) },
	"abs": func(f float64) float64 {
		if f < 0 {
			return -f
		}
		return f
	},
}

var indexTmpl = template.Must(template.New("index").Funcs(funcs).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>layout oracle: {{.Cases}} cases</title>
<link rel="stylesheet" href="report.css"></head>
<body class="index">
<h1>layout oracle: <span id="total">{{.Cases}}</span> cases</h1>
<p id="summary"></p>
<form id="filters" onsubmit="return false">
<label>verdict <select id="f-verdict"><option value="">any</option></select></label>
<label>engine <select id="f-engine"><option value="">any</option></select></label>
<label>engine role <select id="f-role"><option value="outvoted">outvoted</option><option value="error">errored</option><option value="either">outvoted or errored</option></select></label>
<label>id contains <input id="f-id" type="search" size="24"></label>
<span id="shown"></span>
</form>
<nav class="pager"><button id="prev" type="button">&larr; previous</button> <span id="page"></span> <button id="next" type="button">next &rarr;</button>
<label>per page <select id="per"><option>50</option><option selected>100</option><option>500</option></select></label></nav>
<table id="cases"><thead><tr>
<th data-sort="n">#</th><th data-sort="id">id</th><th data-sort="verdict">verdict</th><th data-sort="failed" title="items the candidate failed">failed</th><th data-sort="delta" title="the candidate's largest geometry |delta|, px">max &Delta; px</th>
<th data-sort="majority">majority</th><th data-sort="split">split</th><th data-sort="unstable">unstable</th><th data-sort="outvoted">outvoted</th><th data-sort="errors">errors</th><th>reason</th>
</tr></thead><tbody></tbody></table>
<noscript>The index needs JavaScript; every case page is under cases/.</noscript>
<script src="cases.js"></script>
<script src="index.js"></script>
</body></html>
`))

var caseTmpl = template.Must(template.New("case").Funcs(funcs).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Row.ID}}: {{.Row.Verdict}}</title>
<link rel="stylesheet" href="../report.css"></head>
<body class="case">
<nav><a href="../index.html">&larr; index</a> · case {{.N}}</nav>
<h1 id="case-id">{{.Row.ID}}</h1>
<p><span id="verdict" class="verdict v-{{.Row.Verdict}}">{{.Row.Verdict}}</span> {{.Report.Reason}}</p>
<dl>
{{with .Causes}}<dt>causes</dt><dd id="causes">{{len .}} for {{explained .}} non-unanimous items:<ol>{{range .}}<li data-node="{{.Node}}"><b>{{.Label}}</b> explains {{.Explains}}</li>{{end}}</ol></dd>{{end}}
{{with .Report.Votes}}<dt>votes</dt><dd id="votes">{{votes .}}</dd>{{end}}
{{with .Report.Outliers}}<dt>outvoted</dt><dd id="outvoted">{{range $i, $o := .}}{{if $i}}, {{end}}{{$o.Engine}} on {{$o.Property}} &times;{{$o.Count}}{{end}}</dd>{{end}}
{{with .Report.NotComparable}}<dt>not comparable</dt><dd id="not-comparable">the voters applied {{emulation $.Report.Emulated}}; left out of the vote:{{range .}} <b>{{.Engine}}</b> {{emulation .Emulated}}{{end}}</dd>
{{end}}{{with .Errors}}<dt>errors</dt><dd id="errors">{{range $e := keys .}}<div><b>{{$e}}</b>: {{index $.Errors $e}}</div>{{end}}</dd>{{end}}
{{with .Note}}<dt>note</dt><dd class="note">{{.}}</dd>{{end}}
</dl>
{{if .Panels}}
<p class="legend">highlighted: <span class="swatch st-outvoted"></span> an engine outvoted on the node
<span class="swatch st-split"></span> the engines split (no truth)
<span class="swatch st-unstable"></span> unstable: an engine's runs differed (not voted)
<span class="swatch st-failed"></span> the candidate failed it · thick black: a root cause (listed above) · the outvoted engine's panel is framed in orange and its outvoted boxes filled, the candidate's failed boxes are filled in its panel only; the other panels outline them thinly · hover a box for its values · click a panel for its full 800x600 size</p>
<div class="panels">
{{range .Panels}}<section class="panel{{if .Outvoted}} outlier{{end}}" data-engine="{{.Engine}}">
<h2>{{.Engine}} <small>{{.Version}}</small>{{with .Outvoted}} <span class="badge">outvoted on {{.}}</span>{{end}}</h2>
{{with .Note}}<p class="note">{{.}}</p>{{end}}
<div class="stage{{if .Shot}} shot{{end}}">{{if .Shot}}<img src="{{.Shot}}" width="800" height="600" alt="{{.Engine}} screenshot">{{end}}
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 600" preserveAspectRatio="xMinYMin meet">
{{range .Boxes}}<rect class="box st-{{.Status}}{{if .Outlier}} outlier{{end}}{{if .Fails}} fails{{end}}{{if .Cause}} cause{{end}}" data-node="{{.Node}}" data-fragment="{{.Fragment}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Tag}} #{{.Node}}</title></rect>
{{end}}</svg></div>
{{if .Offview}}<p class="note">{{.Offview}} boxes lie outside the 800x600 viewport</p>{{end}}
</section>
{{end}}</div>
<aside id="details"><p>Hover a box to see its node.</p></aside>
{{end}}
{{with .Items}}<h2>items the engines disagree on</h2>
<div class="scroll"><table id="items" class="findings"><tr><th>node</th><th>tag</th><th>item</th><th>vote</th>{{range .Engines}}<th>{{.}}</th>{{end}}<th>majority</th><th>outlier &minus; majority</th>{{if .Candidate}}<th>candidate</th><th>candidate &minus; majority</th>{{end}}</tr>
{{range .Rows}}<tr class="item v-{{.Vote}}" data-node="{{.Node}}"><td>{{.Node}}</td><td>{{.Tag}}</td><td>{{.Property}}</td><td>{{.Vote}}{{with .Outlier}}: <b>{{.}}</b> outvoted{{end}}</td>{{range .Cells}}<td{{if .Outlier}} class="outlier"{{end}}>{{.Text}}</td>{{end}}<td>{{.Want}}</td><td>{{.Delta}}</td>{{if $.Items.Candidate}}<td{{if .Cand.Failed}} class="failed"{{end}}>{{.Cand.Text}}</td><td>{{.CandDelta}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
{{with .Report.Failures}}<h2>outside tolerance</h2><table class="findings"><tr><th>node</th><th>tag</th><th>property</th><th>want</th><th>got</th><th>delta</th></tr>
{{range .}}<tr><td>{{.Node}}</td><td>{{.Tag}}</td><td>{{.Property}}</td><td>{{num .Want}}</td><td>{{num .Got}}</td><td>{{num .Delta}}</td></tr>
{{end}}</table>{{end}}
{{with .Report.StyleFindings}}<h2>style mismatches</h2><table class="findings"><tr><th>node</th><th>tag</th><th>property</th><th>want</th><th>got</th></tr>
{{range .}}<tr><td>{{.Node}}</td><td>{{.Tag}}</td><td>{{.Property}}</td><td>{{.Want}}</td><td>{{.Got}}</td></tr>
{{end}}</table>{{end}}
{{with .Report.Shape}}<h2>shape</h2><p>candidate differs at node {{.Index}}: want {{.Want}}, got {{.Got}} ({{.NodeDelta}} nodes)</p>{{end}}
{{with .Report.TraceFindings}}<h2>record mismatches</h2><table class="findings"><tr><th>seq</th><th>kind</th><th>path</th><th>want</th><th>got</th></tr>
{{range .}}<tr><td>{{.Seq}}</td><td>{{.Kind}}</td><td>{{.Path}}</td><td>{{.A}}</td><td>{{.B}}</td></tr>
{{end}}</table>
{{end}}{{with .Report.ReflectionFindings}}<h2>reflection mismatches</h2><table class="findings"><tr><th>probe</th><th>selector</th><th>property</th><th>want</th><th>got</th></tr>
{{range .}}<tr><td>{{.Probe}}</td><td>{{.Selector}}</td><td>{{.Property}}</td><td>{{.Want}}</td><td>{{.Got}}</td></tr>
{{end}}</table>{{end}}
{{with .Trace}}<h2>records</h2><table id="trace" class="findings"><tr><th>seq</th><th>record</th><th>vote</th>{{range .Cols}}<th{{if .Apart}} class="apart" title="not comparable: another emulation"{{end}}>{{.Name}} <small>{{.Emulated}}</small>{{if .Apart}} <small>not comparable</small>{{end}}</th>{{end}}</tr>
{{range .Rows}}<tr class="rec st-{{.Status}}" data-seq="{{.Seq}}"><td>{{.Seq}}</td><td>{{.Record}}</td><td>{{.Vote}}</td>{{range .Cells}}<td{{with .Class}} class="{{.}}"{{end}}><code>{{.Text}}</code></td>{{end}}</tr>
{{end}}</table>
{{end}}<script id="nodes" type="application/json">{{.Data}}</script>
<script src="../case.js"></script>
</body></html>
`))
