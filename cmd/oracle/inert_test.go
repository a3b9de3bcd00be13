package main

// Inert cases against the real three engines (docs/untrusted.md, "Inert cases"): an
// inert-looking case that runs script in an engine, or leaves its kept window
// scrolled, must not change any later answer on its page, live or stored.
// One page per engine, so each innocent case follows the hostile one on its page.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// poison is what the hostile cases' handlers run: every width 4242 through the
// built-in the walk reads, and nodes added to every later document of the window.
const poison = `Object.defineProperty(DOMRectReadOnly.prototype,'width',{get(){return 4242}});` +
	`setInterval(function(){document.body&&document.body.appendChild(document.createElement('b'))},5)`

// quietPoison is poison without the timer, whose nodes the inert check's observer
// would see: only the replaced built-in, which nothing in the document shows.
const quietPoison = `Object.defineProperty(DOMRectReadOnly.prototype,'width',{get(){return 4242}})`

// hostileInertCases: x/net/html's tokenizer goes into raw text on a
// tag its tree then drops ("in column group"), where the engines' stays in data;
// and a <select> WebKitGTK 2.50 parses by the old rules (no Go parser can know).
var hostileInertCases = map[string]string{
	"noscript":  `<div><template><col><noscript></template><img src=x onerror="` + poison + `">`,
	"plaintext": `<div><template><col><plaintext></template><img src=x onerror="` + poison + `">`,
	"xmp":       `<div><template><col><xmp></template><img src=x onerror="` + poison + `">`,
	"script":    `<div><template><col><script></template><img src=x onerror="` + poison + `">`,
	"noembed":   `<div><template><col><noembed></template><img src=x onerror="` + poison + `">`,
	"iframe":    `<div><template><col><iframe></template><img src=x onerror="` + poison + `">`,
	"select":    `<select><style><input><img src=x onerror="` + poison + `"></style></select>`,
	// x/net/html builds no element after a <template> start tag meets foreign content
	// on the stack (an SVG or MathML integration point), so the classifier judges
	// only the markup before it; the elements before it allow those the engines then
	// build, and the handler sits in a declarative shadow root no observer sees,
	// leaving nothing in the document.
	"foreignObject": `<template></template><div></div><svg><foreignObject><template></template></foreignObject></svg>` +
		`<div><template shadowrootmode=closed><img src=x onerror="` + quietPoison + `"></template></div>`,
	"desc": `<template></template><div></div><svg><desc><template></template></desc></svg>` +
		`<div><template shadowrootmode=open><img src=x onerror="` + quietPoison + `"></template></div>`,
	"mi": `<template></template><div></div><math><mi><template></template></mi></math>` +
		`<div><template shadowrootmode=closed><img src=x onerror="` + quietPoison + `"></template></div>`,
	// WebKitGTK's old <select> parsing builds the <style>'s text as elements there.
	"select shadow": `<template></template><div></div><input><select><style><input><div>` +
		`<template shadowrootmode=closed><img src=x onerror="` + quietPoison + `">`,
}

// hostileNames are hostileInertCases' keys in the order the tests send them.
var hostileNames = []string{"noscript", "plaintext", "xmp", "script", "noembed", "iframe", "select", "foreignObject", "desc", "mi", "select shadow"}

const innocentCase = `<div style="width:100px;height:50px"></div>`

// requireInnocent fails unless every engine measured innocentCase as a new document
// does: a 100 px wide div, and nothing but it in the body.
func requireInnocent(t *testing.T, dumps map[string]dumpJSON, after string) {
	t.Helper()
	for _, e := range engines {
		d := dumps[e]
		assert.Equal(t, 100.0, width(t, d, "DIV", 0), "%s after %s: the div's width", e, after)
		var tags []string
		for _, n := range d.Nodes {
			tags = append(tags, n.Tag)
		}
		assert.Equal(t, []string{"HTML", "HEAD", "BODY", "DIV"}, tags, "%s after %s: the elements", e, after)
	}
}

func TestAnInertLookingCaseThatRunsScriptForgesNoLaterAnswer(t *testing.T) {
	c := gtOracle(t)
	for _, name := range hostileNames {
		gtDumps(t, c, innocentCase, "void 0") // a new window: each vector is tested alone
		gtDumps(t, c, hostileInertCases[name], "")
		for range 2 {
			requireInnocent(t, gtDumps(t, c, innocentCase, ""), name)
		}
	}
}

// A case's CSS that switches state the window keeps past document.open changes no
// later answer in its window, and state an earlier case left changes none of its
// own: each case answers as the same markup in a new document does (a script makes
// a case not inert, so it gets one). Firefox lays out every later tall case with
// classic 12 px root scrollbars after a ::-webkit-scrollbar width, and WebKit
// keeps the default style of a scrollbar an earlier tall case made.
func TestAUAStateACaseSwitchesStaysInItsCase(t *testing.T) {
	c := gtOracle(t)
	tall := `<div style="height:3000px;width:50%"></div>`
	for _, switches := range []string{
		`<style>::-webkit-scrollbar{width:20px}</style><div style="height:3000px"></div>`,
		`<style>::-webkit-scrollbar{width:5px;background:red}</style><div style="height:3000px"></div>`,
	} {
		// One page: the inert cases one after another in its kept window, then each
		// alone in a new document.
		order := []string{tall, switches, innocentCase, tall, `<!DOCTYPE html>` + tall}
		gtDumps(t, c, innocentCase, "void 0") // a new window, whatever an earlier test left
		var kept []map[string]dumpJSON
		for _, html := range order {
			kept = append(kept, gtDumps(t, c, html, ""))
		}
		for i, html := range order {
			fresh := gtDumps(t, c, html, "void 0")
			for _, e := range engines {
				assert.Equal(t, boxes(fresh[e]), boxes(kept[i][e]), "%s: %s after %s, against a new document", e, html, switches)
			}
		}
	}
}

// boxes is each element's tag and bounding box, in order.
func boxes(d dumpJSON) []string {
	var out []string
	for _, n := range d.Nodes {
		b := n.Bounding
		out = append(out, fmt.Sprintf("%s %gx%g@%g,%g", n.Tag, b.W, b.H, b.X, b.Y))
	}
	return out
}

// scrollProbe: the <p> is at page y of the element with id=p in a 5000 px tall case: 8 + 5000
// + the <p>'s 16 px margin at scroll 0.
const scrollProbe = `<div style="height:5000px"></div><p style="width:10px;height:10px">x</p>`

// A kept window starts at the origin, whatever the case before it did to its scroll
// position: snapped to an area 4000 px down, with or without smooth scrolling, or an
// initial scroll target.
func TestAKeptWindowStartsAtTheOrigin(t *testing.T) {
	c := gtOracle(t)
	for _, before := range []string{
		`<style>html{scroll-snap-type:y mandatory}</style><div style="height:4000px"></div><div style="scroll-snap-align:start;height:100px"></div><div style="height:4000px"></div>`,
		`<style>html{scroll-snap-type:y mandatory;scroll-behavior:smooth}</style><div style="height:4000px"></div><div style="scroll-snap-align:start;height:100px"></div><div style="height:4000px"></div>`,
		`<div style="height:4000px"></div><div style="scroll-initial-target:nearest;height:100px"></div><div style="height:4000px"></div>`,
	} {
		gtDumps(t, c, before, "")
		dumps := gtDumps(t, c, scrollProbe, "")
		for _, e := range engines {
			_, b, _ := dumps[e].node(t, "P", 0)
			assert.Equal(t, 5024.0, b.Y, "%s: the <p>'s y after %s", e, before)
		}
	}
}

// A stored answer never rests on a kept window whose check failed: the answers an
// oracle stores after each hostile case are right, and a second oracle serves them
// from the store, right.
func TestTheStoreKeepsNoAnswerOfAForgedWindow(t *testing.T) {
	t.Parallel() // own oracles (docs/testing.md)
	path := filepath.Join(t.TempDir(), "store.sqlite")
	args := []string{"--pages=1", "--self-check=false", "--store", path}
	live := spawnOracle(t, oracleBin, nil, args...)
	defer live.close()
	live.waitStarted(t)
	innocent := func(i int) string {
		return `<div style="width:100px;height:50px" class=n` + string(rune('a'+i)) + `></div>`
	}
	// An answer verified by three runs on the forged window's page agrees with
	// itself: each run must be a new document's, not one forgery three times.
	stored := []string{"noscript", "select", "select shadow", "foreignObject"}
	for i, name := range stored {
		live.send(t, map[string]any{"html": hostileInertCases[name]})
		resp := live.send(t, map[string]any{"html": innocent(i), "verify": 3})
		require.Nil(t, resp["errors"], "%s: engine errors", name)
		assert.Nil(t, resp["unstable"], "%s: the verified answer", name)
		requireInnocent(t, dumpsIn(t, resp), name)
	}
	require.Equal(t, 0, live.exitCode(t, 2*time.Minute), "stderr:\n%s", live.stderr.String())

	warm := spawnOracle(t, oracleBin, nil, args...)
	defer warm.close()
	for i, name := range stored {
		resp := warm.send(t, map[string]any{"html": innocent(i)})
		require.Nil(t, resp["errors"])
		stored, _ := json.Marshal(resp["stored"])
		assert.JSONEq(t, `["chromium","firefox","webkit"]`, string(stored), "%s: served from the store", name)
		requireInnocent(t, dumpsIn(t, resp), name+", from the store")
	}
}

// dumpsIn is an answer's dumps, all three engines'.
func dumpsIn(t *testing.T, resp map[string]any) map[string]dumpJSON {
	t.Helper()
	raw, _ := json.Marshal(resp["dumps"])
	var dumps map[string]dumpJSON
	require.NoError(t, json.Unmarshal(raw, &dumps))
	require.Len(t, dumps, 3)
	return dumps
}
