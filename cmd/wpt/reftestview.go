package main

// The reftest view of wpt run (OUT/reftests/index.html): for each reftest that
// fails in some engine and passes in another, every engine's screenshot of the test
// and of the reference its search compared last, the pixels that differ between
// them, and the pixels that differ between a failing engine's test and each passing
// engine's (wpt.fyi#2231). Images are PNG files beside the page, as in compare's
// report; the page opens from disk.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"slices"
	"sort"

	"github.com/layout-oracle/oracle/internal/outdir"
	"github.com/layout-oracle/oracle/report"
)

// viewImage is one picture of the view: its file (relative to the page) and caption;
// for a pixel diff, the differing pixels' bounding box and the picture's size
// (report.DiffFigure outlines and enlarges the box).
type viewImage struct {
	File    string
	Caption string
	Box     image.Rectangle
	Size    image.Point
}

// Figure is the HTML of a diff picture of the view (report.DiffFigure).
func (v viewImage) Figure() template.HTML { return report.DiffFigure(v.File, v.Caption, v.Box, v.Size) }

type viewEngine struct {
	Engine  string
	Status  string
	Message string
	Test    viewImage
	Ref     viewImage // the last comparison's other side
	Diff    viewImage // its differing pixels
	Note    string    // why an image is missing
}

type viewTest struct {
	Test    string
	Failing []string
	Passing []string
	Engines []viewEngine
	Across  []viewImage // a failing engine's test against a passing engine's
}

// splitReftests are the reftests some engine fails and another passes, those
// failing in one engine first, then by name.
func splitReftests(tests []plannedTest, results map[string][]wptResult) []viewTest {
	status := map[string]map[string]string{}
	engines := slices.Sorted(func(yield func(string) bool) {
		for e := range results {
			if !yield(e) {
				return
			}
		}
	})
	for _, e := range engines {
		for _, r := range results[e] {
			if status[r.Test] == nil {
				status[r.Test] = map[string]string{}
			}
			status[r.Test][e] = r.Status
		}
	}
	var out []viewTest
	for _, t := range tests {
		if t.Kind != kindReftest {
			continue
		}
		vt := viewTest{Test: t.URL}
		for _, e := range engines {
			switch status[t.URL][e] {
			case statusFail:
				vt.Failing = append(vt.Failing, e)
			case statusPass:
				vt.Passing = append(vt.Passing, e)
			}
		}
		if len(vt.Failing) > 0 && len(vt.Passing) > 0 {
			out = append(out, vt)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Failing) < len(out[j].Failing) })
	return out
}

// writeReftestView writes dir/index.html and its images, and returns how many
// tests it shows.
func writeReftestView(dir *outdir.Dir, tests []plannedTest, answers map[string]answer, results map[string][]wptResult, tol float64) (int, error) {
	if err := dir.MkdirAll("img"); err != nil {
		return 0, err
	}
	split := splitReftests(tests, results)
	byURL := map[string]plannedTest{}
	for _, t := range tests {
		byURL[t.URL] = t
	}
	messages := map[string]map[string]string{}
	for e, rs := range results {
		messages[e] = map[string]string{}
		for _, r := range rs {
			if r.Message != nil {
				messages[e][r.Test] = *r.Message
			}
		}
	}
	engines := slices.Sorted(func(yield func(string) bool) {
		for e := range results {
			if !yield(e) {
				return
			}
		}
	})
	for i := range split {
		vt := &split[i]
		t := byURL[vt.Test]
		g := t.Graph
		if g == nil {
			g = manifestGraph(t.URL, t.Fuzzy, t.Refs)
		}
		shots := map[string]string{} // engine -> its test screenshot
		for _, e := range engines {
			ve := viewEngine{Engine: e, Status: resultStatus(results[e], vt.Test), Message: messages[e][vt.Test]}
			dumps := engineDumps(e, answers)
			name := func(what string) string { return fmt.Sprintf("img/%04d-%s-%s.png", i+1, e, what) }
			if d, _ := dumps(vt.Test); d != nil && d.Screenshot != "" {
				shots[e] = d.Screenshot
				if err := writeShot(dir, name("test"), d.Screenshot); err == nil {
					ve.Test = viewImage{File: name("test"), Caption: "test " + vt.Test}
				}
			}
			_, _, last := walkReftest(g, dumps, tol)
			switch {
			case last == nil:
				ve.Note = "no comparison was made"
			case !last.Pixels:
				ve.Note = "compared by geometry: no screenshots"
			default:
				l, _ := dumps(last.Left)
				r, _ := dumps(last.Right)
				if err := writeShot(dir, name("ref"), r.Screenshot); err == nil {
					ve.Ref = viewImage{File: name("ref"), Caption: "reference " + last.Right}
				}
				rel := "=="
				if last.Mismatch {
					rel = "!="
				}
				cap := fmt.Sprintf("%s %s %s: %d pixels differ (max channel difference %d)", last.Left, rel, last.Right, last.Differ, last.MaxChannel)
				if _, box, size, err := writeDiff(dir, name("diff"), l.Screenshot, r.Screenshot); err == nil {
					ve.Diff = viewImage{name("diff"), cap, box, size}
				} else {
					ve.Note = "diff: " + err.Error()
				}
			}
			vt.Engines = append(vt.Engines, ve)
		}
		for _, f := range vt.Failing {
			for _, p := range vt.Passing {
				if shots[f] == "" || shots[p] == "" {
					continue
				}
				file := fmt.Sprintf("img/%04d-%s-vs-%s.png", i+1, f, p)
				n, box, size, err := writeDiff(dir, file, shots[f], shots[p])
				if err != nil {
					continue
				}
				vt.Across = append(vt.Across, viewImage{file, fmt.Sprintf("%s (FAIL) against %s (PASS): %d pixels of the test differ", f, p, n), box, size})
			}
		}
	}
	var b bytes.Buffer
	if err := reftestViewTmpl.Execute(&b, struct {
		Tests   []viewTest
		Engines []string
	}{split, engines}); err != nil {
		return 0, err
	}
	return len(split), dir.WriteFile("index.html", b.Bytes())
}

func resultStatus(rs []wptResult, test string) string {
	for _, r := range rs {
		if r.Test == test {
			return r.Status
		}
	}
	return statusMissing
}

func writeShot(dir *outdir.Dir, file, b64 string) error {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return err
	}
	return dir.WriteFile(file, raw)
}

// writeDiff writes a's pixels faded, with every pixel that differs from b's (as
// pixelDiff counts them) in full red, and returns how many differ, their bounding
// box and the picture's size.
func writeDiff(dir *outdir.Dir, file, a, b string) (int, image.Rectangle, image.Point, error) {
	img, n, box, err := diffImage(a, b)
	if err != nil {
		return 0, box, image.Point{}, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return 0, box, image.Point{}, err
	}
	return n, box, img.Bounds().Size(), dir.WriteFile(file, buf.Bytes())
}

func diffImage(a, b string) (*image.RGBA, int, image.Rectangle, error) {
	var box image.Rectangle
	ia, ib, err := decodePair(a, b)
	if err != nil {
		return nil, 0, box, err
	}
	out := image.NewRGBA(image.Rectangle{Max: ia.Bounds().Size()})
	n := 0
	// A quarter of the colour over white: the layout stays readable under the red.
	fade := func(v uint32) uint8 { return uint8(191 + (v>>8)/4) }
	eachPixel(ia, ib, func(x, y int, c1, _ [3]uint32, differs bool) {
		if differs {
			n++
			box = box.Union(image.Rect(x, y, x+1, y+1))
			out.SetRGBA(x, y, color.RGBA{255, 0, 0, 255})
			return
		}
		out.SetRGBA(x, y, color.RGBA{fade(c1[0]), fade(c1[1]), fade(c1[2]), 255})
	})
	return out, n, box, nil
}

var reftestViewTmpl = template.Must(template.New("reftests").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>reftests the engines split on: {{len .Tests}}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1em 2em; }
section { border-top: 1px solid #ccc; padding: .5em 0 1em; }
h2 { font-size: 1.05em; font-family: monospace; }
.row { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; margin: .5em 0; }
.row > b { width: 7em; }
/* Three pictures beside the engine's name down to narrow windows (then they wrap):
   each at most 400 px, half the 800x600 screenshot. */
figure { margin: 0; width: min(400px, calc((100vw - 16em) / 3)); min-width: 200px; }
figure img { width: 100%; height: auto; border: 1px solid #999; box-sizing: border-box; image-rendering: pixelated; }
figcaption { font-size: 12px; overflow-wrap: anywhere; }
.FAIL { color: #b00; font-weight: bold; } .PASS { color: #070; }
.msg { font-size: 12px; color: #555; max-width: 80em; overflow-wrap: anywhere; }
</style></head>
<body>
<h1>Reftests the engines split on: {{len .Tests}}</h1>
<p>Each test fails in some engine and passes in another (those failing in one engine first). Per engine: the test's
screenshot, the reference the engine's search compared last (a failing engine's failed comparison), and the pixels
that differ between the two in red over the faded test, their bounding box outlined in blue and enlarged beside it. Below: the pixels that differ between a failing engine's
test and each passing engine's. Click an image for its full size.</p>
{{range $i, $t := .Tests}}<section id="t{{$i}}">
<h2>{{$t.Test}}</h2>
<p>fails in {{range $t.Failing}}<span class="FAIL">{{.}}</span> {{end}}· passes in {{range $t.Passing}}<span class="PASS">{{.}}</span> {{end}}</p>
{{range $t.Engines}}<div class="row"><b>{{.Engine}}<br><span class="{{.Status}}">{{.Status}}</span></b>
{{with .Test}}{{if .File}}<figure><a href="{{.File}}"><img src="{{.File}}" alt="{{.Caption}}"></a><figcaption>{{.Caption}}</figcaption></figure>{{end}}{{end}}
{{with .Ref}}{{if .File}}<figure><a href="{{.File}}"><img src="{{.File}}" alt="{{.Caption}}"></a><figcaption>{{.Caption}}</figcaption></figure>{{end}}{{end}}
{{with .Diff}}{{if .File}}{{.Figure}}{{end}}{{end}}
{{with .Note}}<p class="msg">{{.}}</p>{{end}}
</div>
<p class="msg">{{.Message}}</p>
{{end}}
{{with $t.Across}}<div class="row"><b>across engines</b>
{{range .}}{{.Figure}}
{{end}}</div>{{end}}
</section>
{{else}}<p>No reftest fails in one engine and passes in another.</p>
{{end}}
</body></html>
`))
