package report

import (
	"image"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var shot = image.Pt(800, 600)

func TestNewZoom(t *testing.T) {
	// A 10x20 box (firefox's narrower box in testdata/wpt's split reftest): 8 px
	// around it, 26x36, drawn 8 times (8*36 = 288 <= 320 < 9*36).
	z := newZoom(image.Rect(98, 8, 108, 28), shot)
	assert.Equal(t, image.Rect(90, 0, 116, 36), z.Window, "the margin stops at the picture's top")
	assert.Equal(t, 8, z.Scale)

	// One pixel: 17x17, at most 16 times.
	assert.Equal(t, 16, newZoom(image.Rect(400, 300, 401, 301), shot).Scale)
	// A corner pixel: the window is clamped to the picture on two sides.
	assert.Equal(t, image.Rect(791, 591, 800, 600), newZoom(image.Rect(799, 599, 800, 600), shot).Window)
	// A box over half the picture: a zoom would show less than the picture.
	assert.Zero(t, newZoom(image.Rect(0, 0, 400, 10), shot).Scale)
	assert.Zero(t, newZoom(image.Rectangle{}, shot).Scale, "nothing differs")
}

// The figure outlines the box in percent of the picture and shows the zoom's
// window, scaled, at the right offset. A unit test of the HTML.
func TestDiffFigure(t *testing.T) {
	h := string(DiffFigure("img/0001-firefox-diff.png", `a == b: 200 pixels differ <&>`, image.Rect(98, 8, 108, 28), shot))
	assert.Contains(t, h, `left:12.25%;top:1.333%;width:1.25%;height:3.333%;`)
	assert.Contains(t, h, `a == b: 200 pixels differ &lt;&amp;&gt;; the differing pixels lie in x 98 to 107, y 8 to 27 (10x20 px), outlined in blue`)
	// The window (90,0)-(116,36) at 8x: 208x288, the picture 6400x4800 moved by -720, 0.
	assert.Contains(t, h, `width:208px;height:288px;`)
	assert.Contains(t, h, `left:-720px;top:0px;width:6400px;height:4800px;`)
	assert.Contains(t, h, `<figcaption>8x: x 98 to 107, y 8 to 27 (10x20 px), and 8 px around</figcaption>`)
	assert.Equal(t, 2, strings.Count(h, `src="img/0001-firefox-diff.png"`))

	// Nothing differs: the picture alone, no outline, no zoom.
	h = string(DiffFigure("d.png", "0 pixels differ", image.Rectangle{}, shot))
	assert.NotContains(t, h, "bbox")
	assert.NotContains(t, h, "pixzoom")
	assert.Contains(t, h, `<img src="d.png" alt="0 pixels differ">`)

	// A large box: outlined, not zoomed.
	h = string(DiffFigure("d.png", "many", image.Rect(0, 0, 800, 300), shot))
	assert.Contains(t, h, `left:0%;top:0%;width:100%;height:50%;`)
	assert.NotContains(t, h, "pixzoom")
}
