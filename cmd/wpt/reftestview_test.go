package main

import (
	"image"
	"image/color"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The diff marks exactly the pixels pixelDiff counts: here 2 of 3 changed pixels
// (the third differs by 1 in blue, whose luma rounds to 0).
func TestDiffImageMarksTheDifferingPixels(t *testing.T) {
	a := screenshot(t, nil)
	b := screenshot(t, map[image.Point]color.RGBA{{1, 1}: {0, 0, 0, 255}, {5, 2}: {255, 200, 255, 255}, {7, 7}: {255, 255, 254, 255}})
	img, n, box, err := diffImage(a, b)
	require.NoError(t, err)
	_, pixels, _ := pixelDiff(a, b)
	assert.Equal(t, 2, n)
	assert.Equal(t, pixels, n)
	assert.Equal(t, image.Rect(1, 1, 6, 3), box, "the bounding box of (1,1) and (5,2)")
	red := color.RGBA{255, 0, 0, 255}
	assert.Equal(t, red, img.RGBAAt(1, 1))
	assert.Equal(t, red, img.RGBAAt(5, 2))
	assert.NotEqual(t, red, img.RGBAAt(7, 7))
	assert.Equal(t, color.RGBA{254, 254, 254, 255}, img.RGBAAt(0, 0), "white faded stays near white")
	_, _, _, err = diffImage(a, "not base64!")
	assert.Error(t, err)
}

func TestSplitReftestsPutsOneEngineFailuresFirst(t *testing.T) {
	tests := []plannedTest{{URL: "/a", Kind: kindReftest}, {URL: "/b", Kind: kindReftest}, {URL: "/c", Kind: kindReftest}, {URL: "/t", Kind: kindTestharness}}
	results := map[string][]wptResult{
		"chromium": {th("/a", "FAIL"), th("/b", "FAIL"), th("/c", "PASS"), th("/t", "OK")},
		"firefox":  {th("/a", "FAIL"), th("/b", "PASS"), th("/c", "PASS"), th("/t", "ERROR")},
		"webkit":   {th("/a", "PASS"), th("/b", "PASS"), th("/c", "PASS"), th("/t", "OK")},
	}
	got := splitReftests(tests, results)
	require.Len(t, got, 2, "/c passes everywhere, /t is no reftest")
	assert.Equal(t, "/b", got[0].Test)
	assert.Equal(t, []string{"chromium"}, got[0].Failing)
	assert.Equal(t, []string{"firefox", "webkit"}, got[0].Passing)
	assert.Equal(t, "/a", got[1].Test)
}
