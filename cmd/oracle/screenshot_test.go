package main

// Screenshots from the real three engines: each is a decodable 800x600
// PNG of the case's page as the walk measured it (the red box is where its dump says),
// taken before the reset; with --screenshot-dir, the same as a file the dump names.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const shotCase = `<!doctype html><style>html,body{margin:0;background:#fff}</style>` +
	`<div style="position:absolute;left:40px;top:60px;width:200px;height:100px;background:rgb(255,0,0)"></div>`

// checkShot decodes png and requires the viewport size, red inside the box the dump
// gives and white outside it.
func checkShot(t *testing.T, engine string, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err, "%s: screenshot is not a decodable PNG", engine)
	assert.Equal(t, image.Rect(0, 0, 800, 600), img.Bounds(), "%s: screenshot size", engine)
	rgb := func(x, y int) [3]uint32 {
		r, g, b, _ := img.At(x, y).RGBA()
		return [3]uint32{r >> 8, g >> 8, b >> 8}
	}
	assert.Equal(t, [3]uint32{255, 0, 0}, rgb(140, 110), "%s: the box's middle", engine)
	assert.Equal(t, [3]uint32{255, 255, 255}, rgb(400, 400), "%s: outside the box", engine)
	assert.Equal(t, [3]uint32{255, 255, 255}, rgb(30, 50), "%s: just outside the box's corner", engine)
}

func TestScreenshotIsTheWalkedPageInEveryEngine(t *testing.T) {
	c := shared.get(t)
	plain := c.send(t, map[string]any{"html": shotCase})
	resp := c.send(t, map[string]any{"html": shotCase, "screenshot": true})
	require.Nil(t, resp["errors"])
	dumps := resp["dumps"].(map[string]any)
	require.Len(t, dumps, 3)
	for _, e := range engines {
		d := dumps[e].(map[string]any)
		b, err := base64.StdEncoding.DecodeString(d["screenshot"].(string))
		require.NoError(t, err, e)
		checkShot(t, e, b)

		// The box is where the dump says, and the dump is otherwise the one a request
		// without "screenshot" gets.
		nodes := d["nodes"].([]any)
		box := nodes[len(nodes)-1].(map[string]any)["bounding"]
		assert.Equal(t, map[string]any{"x": 40.0, "y": 60.0, "w": 200.0, "h": 100.0}, box, e)
		delete(d, "screenshot")
		want, _ := json.Marshal(plain["dumps"].(map[string]any)[e])
		got, _ := json.Marshal(d)
		assert.JSONEq(t, string(want), string(got), "%s: dump with the screenshot taken out", e)
		_, has := plain["dumps"].(map[string]any)[e].(map[string]any)["screenshot"]
		assert.False(t, has, "%s: no screenshot unless asked", e)
	}

	bad := c.send(t, map[string]any{"op": "reflect", "html": "<input id=a>", "screenshot": true,
		"probes": []any{map[string]any{"selector": "#a", "attr": "value"}}})
	assert.Contains(t, bad["error"], `"screenshot" is for geometry requests only`)
}

// On webContent, whose --screenshot-dir is wcArtifacts: its other tests ask for no
// screenshot, so the flag changes none of their answers. Files an earlier run left
// under the names this one would take first are skipped, not written over.
func TestScreenshotArtifactsAreFiles(t *testing.T) {
	c := wcOracle(t)
	dir := wcArtifacts
	earlier := map[string]bool{}
	for n := 1; n <= 20; n++ {
		for _, e := range engines {
			name := filepath.Join(dir, fmt.Sprintf("%06d-_a_.._b_-%s.png", n, e))
			require.NoError(t, os.WriteFile(name, []byte("an earlier run's"), 0o644))
			earlier[name] = true
		}
	}
	resp := c.send(t, map[string]any{"id": "a/../b", "html": shotCase, "screenshot": true})
	require.Nil(t, resp["errors"])
	for _, e := range engines {
		d := resp["dumps"].(map[string]any)[e].(map[string]any)
		assert.NotContains(t, d, "screenshot", "%s: a file, not base64", e)
		path := d["screenshot_file"].(string)
		assert.Equal(t, dir, filepath.Dir(path), "%s: the file is in --screenshot-dir, whatever the id", e)
		assert.False(t, earlier[path], "%s: %s is an earlier run's file", e, path)
		b, err := os.ReadFile(path)
		require.NoError(t, err, e)
		checkShot(t, e, b)
	}
	for name := range earlier {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.Equal(t, "an earlier run's", string(b), "%s was written over", name)
	}
}
