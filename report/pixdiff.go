package report

import (
	"fmt"
	"html/template"
	"image"
	"strings"
)

// A pixel diff (the reftest view of wpt run draws one per comparison: the
// differing pixels in red over the faded test) is hard to read when a few pixels
// differ in an 800x600 picture shown at half size. DiffFigure shows it with the
// bounding box of the differing pixels outlined, and that box enlarged beside it.

// zoom is how a diff's bounding box is enlarged: Window (the box and a margin,
// inside the picture) drawn Scale times, nearest neighbour.
type zoom struct {
	Box    image.Rectangle // the differing pixels' bounding box
	Window image.Rectangle
	Scale  int // 0: the box is too large for a zoom to show more than the picture
}

const (
	zoomMargin   = 8   // picture px around the box
	zoomMaxSide  = 320 // the zoom's longest side, in CSS px
	zoomMaxScale = 16
)

// newZoom is the zoom on box in a picture of size: the largest whole factor, at most
// 16, that keeps the window within 320 px, or Scale 0 when that factor is below 2.
func newZoom(box image.Rectangle, size image.Point) zoom {
	z := zoom{Box: box}
	if box.Empty() {
		return z
	}
	z.Window = box.Inset(-zoomMargin).Intersect(image.Rectangle{Max: size})
	side := max(z.Window.Dx(), z.Window.Dy())
	if k := min(zoomMaxSide/side, zoomMaxScale); k >= 2 {
		z.Scale = k
	}
	return z
}

// DiffFigure is the HTML of a pixel diff picture (file, relative to the page, of
// size's pixels), with box, its differing pixels' bounding box, outlined over it,
// and a second figure enlarging the box when NewZoom gives it a scale. An empty
// box (no pixel differs) gives the picture alone. The geometry is in inline styles,
// so that the figure works in any page; the picture keeps the page's own width
// (its CSS for figure img), the outline is in percent of it.
func DiffFigure(file, caption string, box image.Rectangle, size image.Point) template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	f, c := esc(file), esc(caption)
	z := newZoom(box, size)
	if box.Empty() || size.X <= 0 || size.Y <= 0 {
		fmt.Fprintf(&b, `<figure class="pixdiff"><a href="%s"><img src="%s" alt="%s"></a><figcaption>%s</figcaption></figure>`, f, f, c, c)
		return template.HTML(b.String())
	}
	pct := func(v, of int) string { return fmt.Sprintf("%.4g%%", 100*float64(v)/float64(of)) }
	where := fmt.Sprintf("x %d to %d, y %d to %d (%dx%d px)", box.Min.X, box.Max.X-1, box.Min.Y, box.Max.Y-1, box.Dx(), box.Dy())
	fmt.Fprintf(&b, `<figure class="pixdiff"><a href="%s" style="position:relative;display:block;line-height:0">`+
		`<img src="%s" alt="%s"><span class="bbox" style="position:absolute;left:%s;top:%s;width:%s;height:%s;`+
		`outline:2px solid #0057d9;outline-offset:2px;pointer-events:none"></span></a>`+
		`<figcaption>%s; the differing pixels lie in %s, outlined in blue</figcaption></figure>`,
		f, f, c, pct(box.Min.X, size.X), pct(box.Min.Y, size.Y), pct(box.Dx(), size.X), pct(box.Dy(), size.Y), c, esc(where))
	if z.Scale == 0 {
		return template.HTML(b.String())
	}
	w := z.Window
	fmt.Fprintf(&b, `<figure class="pixzoom" style="width:auto;min-width:0"><a href="%s" style="position:relative;display:block;overflow:hidden;`+
		`width:%dpx;height:%dpx;border:1px solid #999">`+
		`<img src="%s" alt="the differing pixels, %dx" style="position:absolute;left:%dpx;top:%dpx;width:%dpx;height:%dpx;`+
		`max-width:none;border:0;image-rendering:pixelated"></a>`+
		`<figcaption>%dx: %s, and %d px around</figcaption></figure>`,
		f, w.Dx()*z.Scale, w.Dy()*z.Scale,
		f, z.Scale, -w.Min.X*z.Scale, -w.Min.Y*z.Scale, size.X*z.Scale, size.Y*z.Scale,
		z.Scale, esc(where), zoomMargin)
	return template.HTML(b.String())
}
