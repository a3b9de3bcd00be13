package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/layout-oracle/oracle/dump"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// screenshot is a 20x10 white PNG (base64) with the given pixels set, a unit test's
// stand-in for an engine's screenshot.
func screenshot(t *testing.T, set map[image.Point]color.RGBA) string {
	img := image.NewRGBA(image.Rect(0, 0, 20, 10))
	for y := 0; y < 10; y++ {
		for x := 0; x < 20; x++ {
			img.Set(x, y, color.RGBA{255, 255, 255, 255})
		}
	}
	for p, c := range set {
		img.Set(p.X, p.Y, c)
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

func TestPixelDiffCountsAsWptrunnersPILDoes(t *testing.T) {
	white := screenshot(t, nil)
	three := screenshot(t, map[image.Point]color.RGBA{{1, 1}: {245, 255, 255, 255}, {2, 1}: {255, 250, 255, 255}, {3, 3}: {255, 255, 235, 255}})
	maxChannel, n, err := pixelDiff(white, three)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, 20, maxChannel)
	// A difference of 1 in red alone has a luma of 0 in PIL's "L": not counted.
	maxChannel, n, err = pixelDiff(white, screenshot(t, map[image.Point]color.RGBA{{0, 0}: {254, 255, 255, 255}}))
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	assert.Equal(t, 0, maxChannel)
	small := image.NewRGBA(image.Rect(0, 0, 2, 2))
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, small))
	_, _, err = pixelDiff(white, base64.StdEncoding.EncodeToString(b.Bytes()))
	assert.ErrorContains(t, err, "differ in size")
}

func TestFuzzyMetasFollowWPTsSyntax(t *testing.T) {
	got := fuzzyMetas("css/x/t.html", []byte(`<meta name="fuzzy" content="maxDifference=10-15;totalPixels=200-300">
<meta content='3;40' name=fuzzy><meta name=fuzzy content="r-ref.html:0-2;0-5"><meta name=fuzzy content="/css/y/o.html==a-ref.html:7;9">
<meta name=fuzzy content="nonsense"><meta name=viewport content="1;2">`))
	assert.Equal(t, []fuzzy{
		{MaxDiff: [2]int{10, 15}, TotalPixels: [2]int{200, 300}},
		{MaxDiff: [2]int{3, 3}, TotalPixels: [2]int{40, 40}},
		{Ref: "css/x/r-ref.html", MaxDiff: [2]int{0, 2}, TotalPixels: [2]int{0, 5}},
		{Ref: "css/x/a-ref.html", MaxDiff: [2]int{7, 7}, TotalPixels: [2]int{9, 9}},
	}, got)
	assert.Equal(t, "css/x/r-ref.html", fuzzyFor(got, "css/x/r-ref.html").Ref)
	assert.Equal(t, [2]int{3, 3}, fuzzyFor(got, "css/x/other.html").MaxDiff, "the last unprefixed value applies to any other reference")
	assert.Nil(t, fuzzyFor(nil, "css/x/r-ref.html"))
}

// The pixel verdict decides when every page has a screenshot; the geometry verdict
// is given beside it. Unit test on constructed dumps (no browser).
func TestReftestResultIsAPixelVerdictWithScreenshots(t *testing.T) {
	tol := dump.DefaultTolerance
	with := func(d *dump.Dump, shot string) *dump.Dump { d.Screenshot = shot; return d }
	white := screenshot(t, nil)
	three := screenshot(t, map[image.Point]color.RGBA{{1, 1}: {245, 255, 255, 255}, {2, 1}: {255, 250, 255, 255}, {3, 3}: {255, 255, 235, 255}})

	// Layouts that differ but paint the same pixels pass, as in wptrunner.
	st, m := reftestResult(with(page(100, 50), white), []refAnswer{{URL: "/r.html", Dump: with(page(100, 51), white)}}, tol)
	assert.Equal(t, "PASS", st)
	assert.Contains(t, *m, "pixel verdict: == /r.html: 0 pixels differ, max channel difference 0 (geometry: layouts differ")

	st, m = reftestResult(with(page(100, 50), white), []refAnswer{{URL: "/r.html", Dump: with(page(100, 50), three)}}, tol)
	assert.Equal(t, "FAIL", st, "identical layouts, different pixels")
	assert.Contains(t, *m, "3 pixels differ, max channel difference 20 (geometry: layouts equal)")

	for _, c := range []struct {
		f    fuzzy
		want string
	}{
		{fuzzy{MaxDiff: [2]int{0, 20}, TotalPixels: [2]int{0, 3}}, "PASS"},
		{fuzzy{MaxDiff: [2]int{20, 20}, TotalPixels: [2]int{3, 3}}, "PASS"},
		{fuzzy{MaxDiff: [2]int{0, 19}, TotalPixels: [2]int{0, 3}}, "FAIL"},
		{fuzzy{MaxDiff: [2]int{0, 20}, TotalPixels: [2]int{4, 9}}, "FAIL"},
	} {
		st, m = reftestResult(with(page(100, 50), white), []refAnswer{{URL: "/r.html", Dump: with(page(100, 50), three), Fuzzy: &c.f}}, tol)
		assert.Equal(t, c.want, st, "%+v: %s", c.f, *m)
	}
	st, _ = reftestResult(with(page(100, 50), white), []refAnswer{{URL: "/n.html", Mismatch: true, Dump: with(page(100, 50), three)}}, tol)
	assert.Equal(t, "PASS", st, "a mismatch reference whose pixels differ")
	st, _ = reftestResult(with(page(100, 50), white), []refAnswer{{URL: "/n.html", Mismatch: true, Dump: with(page(100, 52), white)}}, tol)
	assert.Equal(t, "FAIL", st, "a mismatch reference that paints the same pixels, though its layout differs")

	st, m = reftestResult(with(page(100, 50), white), []refAnswer{{URL: "/r.html", Dump: page(100, 50)}}, tol)
	assert.Equal(t, "PASS", st)
	assert.Contains(t, *m, "geometry verdict (no screenshots", "a reference without a screenshot: the geometry verdict decides")
}
