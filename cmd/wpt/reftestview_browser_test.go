package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/playwright"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// redBounds is the bounding box of the pure red pixels of a diff picture (the
// differing ones: faded pixels are never pure red).
func redBounds(t *testing.T, file string) (image.Rectangle, image.Point) {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	var box image.Rectangle
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r == 0xffff && g == 0 && bl == 0 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box, b.Size()
}

// The reftest view of a test Firefox alone fails (its box narrower), read in the
// oracle's Chromium: Firefox's diff has the red pixels' bounding box outlined where
// they are in the picture as shown, a zoom whose window holds the box enlarged, and
// at the viewer's 800 px every picture, the diff included, lies inside the page's
// width (the row wraps instead of cutting the diff column off).
func TestReftestViewOutlinesAndZoomsTheDiff(t *testing.T) {
	testutil.NeedsBrowsers(t)
	bin := buildOracle(t)
	dir, got := runStatuses(t, bin, "oracle-split/reftest-split-firefox.html")
	require.Equal(t, "FAIL", got["firefox"]["/oracle-split/reftest-split-firefox.html"])
	// The browsers run as another user (docs/sandbox.md): the view goes where they read.
	view := filepath.Join(testutil.BrowserDir(t), "reftests")
	require.NoError(t, os.CopyFS(view, os.DirFS(filepath.Join(dir, "reftests"))))
	require.NoError(t, filepath.WalkDir(view, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chmod(p, map[bool]os.FileMode{true: 0o755, false: 0o644}[de.IsDir()])
	}))
	box, size := redBounds(t, filepath.Join(view, "img", "0001-firefox-diff.png"))
	require.False(t, box.Empty(), "firefox's diff has red pixels")
	t.Logf("red pixels in %v of %v", box, size)

	d, err := playwright.Start(zerolog.Nop())
	require.NoError(t, err)
	defer d.Stop()
	e, err := d.Launch(playwright.Options{Engine: browser.Chromium}, zerolog.Nop())
	require.NoError(t, err)
	defer e.Close()
	type rect struct{ X, Y, W, H float64 }
	var v struct {
		Img, Box, Win, ZoomImg rect
		Caption                string
		Width, MaxRight        float64
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := e.Visit(ctx, "file://"+filepath.Join(view, "index.html"), `async () => {
	  await Promise.all([...document.images].map(i => i.decode().catch(() => {})));
	  const r = el => { const b = el.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width, h: b.height }; };
	  const fig = document.querySelector('figure.pixdiff img[src="img/0001-firefox-diff.png"]').closest("figure");
	  const zoom = fig.nextElementSibling;
	  return { img: r(fig.querySelector("img")), box: r(fig.querySelector(".bbox")),
	    win: r(zoom.querySelector("a")), zoomImg: r(zoom.querySelector("img")),
	    caption: fig.querySelector("figcaption").textContent,
	    width: document.documentElement.clientWidth,
	    maxRight: Math.max(...[...document.querySelectorAll("figure")].map(f => f.getBoundingClientRect().right)) };
	}`)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &v), "%s", raw)

	assert.Contains(t, v.Caption, fmt.Sprintf("the differing pixels lie in x %d to %d, y %d to %d (%dx%d px)",
		box.Min.X, box.Max.X-1, box.Min.Y, box.Max.Y-1, box.Dx(), box.Dy()))
	// The outline, in page px, is the red pixels' box at the picture's scale (its
	// 1 px border aside).
	s := v.Img.W / float64(size.X)
	assert.InDelta(t, v.Img.X+float64(box.Min.X)*s, v.Box.X, 1.5)
	assert.InDelta(t, v.Img.Y+float64(box.Min.Y)*s, v.Box.Y, 1.5)
	assert.InDelta(t, float64(box.Dx())*s, v.Box.W, 1.5)
	assert.InDelta(t, float64(box.Dy())*s, v.Box.H, 1.5)
	// The zoom: the picture enlarged k times, placed so that the box lies inside
	// its window.
	k := v.ZoomImg.W / float64(size.X)
	assert.GreaterOrEqual(t, k, 2.0)
	boxLeft, boxTop := v.ZoomImg.X+float64(box.Min.X)*k, v.ZoomImg.Y+float64(box.Min.Y)*k
	assert.GreaterOrEqual(t, boxLeft, v.Win.X)
	assert.GreaterOrEqual(t, boxTop, v.Win.Y)
	assert.LessOrEqual(t, boxLeft+float64(box.Dx())*k, v.Win.X+v.Win.W)
	assert.LessOrEqual(t, boxTop+float64(box.Dy())*k, v.Win.Y+v.Win.H)
	// Nothing past the right edge.
	assert.LessOrEqual(t, v.MaxRight, v.Width)
}
