package kinds_test

// Unit tests of the registry and its run comparison, on made-up answers (no engine).

import (
	"encoding/json"
	"testing"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/kinds/kindstest"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoBoxes is a valid dump of HTML > BODY, BODY h high.
func twoBoxes(h float64) []byte {
	d := &dump.Dump{Engine: "chromium", EngineVersion: "1.0", Viewport: dump.Viewport}
	for i, tag := range []string{"HTML", "BODY"} {
		style := dump.Style{}
		for _, p := range dump.StyleProperties {
			style[p] = "0px"
		}
		r := dump.Rect{W: 800, H: h}
		d.Nodes = append(d.Nodes, dump.Node{Index: i, Parent: i - 1, Tag: tag, Depth: i, Bounding: r, Rects: []dump.Rect{r}, Style: style})
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}

func state(idl string) []byte {
	v := "5"
	b, _ := json.Marshal(&reflection.State{Engine: "chromium", EngineVersion: "1.0", Observations: []reflection.Observation{
		{Selector: "#a", Attr: "value", AttrValue: &v, IDL: "value", IDLValue: json.RawMessage(idl)},
	}})
	return b
}

func TestUnstableAnswers(t *testing.T) {
	a, b := twoBoxes(100), twoBoxes(107)
	items, err := kinds.UnstableAnswers("geometry", [][]byte{a, a})
	require.NoError(t, err)
	assert.Nil(t, items)
	items, err = kinds.UnstableAnswers("geometry", [][]byte{a, b})
	require.NoError(t, err)
	assert.Equal(t, []string{"0:bounding.h", "0:rects[0].h", "1:bounding.h", "1:rects[0].h"}, items, "both boxes are h high")

	items, err = kinds.UnstableAnswers("reflect", [][]byte{state(`"5"`), state(`"6"`)})
	require.NoError(t, err)
	assert.Equal(t, []string{"0:idl_value(value)"}, items)

	_, err = kinds.UnstableAnswers("geometry", [][]byte{a, []byte("{")})
	assert.Error(t, err)
	_, err = kinds.UnstableAnswers("ping", [][]byte{a, a})
	assert.EqualError(t, err, `kinds: no kind "ping" (known: geometry, trace, reflect)`)
}

// A registered kind is found by its op, name and field, and its run comparison
// reaches UnstableAnswers (the store's diff); unregistered, it is an error.
func TestRegisterAddsAThrowAwayKindForItsTestOnly(t *testing.T) {
	x, y := []byte(`{"engine":"chromium","title":"a"}`), []byte(`{"engine":"chromium","title":"b"}`)
	_, err := kinds.UnstableAnswers("title", [][]byte{x, y})
	require.Error(t, err)
	assert.Nil(t, kinds.ByField("titles"))

	t.Run("registered", func(t *testing.T) {
		kindstest.Register(t)
		assert.Same(t, kinds.Kind(kindstest.Title), kinds.ByOp("title"))
		assert.Same(t, kinds.Kind(kindstest.Title), kinds.ByField("titles"))
		assert.Equal(t, `"dumps", "traces", "states", "titles"`, kinds.Fields())
		items, err := kinds.UnstableAnswers("title", [][]byte{x, y})
		require.NoError(t, err)
		assert.Equal(t, []string{"title"}, items)
		items, err = kinds.UnstableAnswers("title", [][]byte{x, x})
		require.NoError(t, err)
		assert.Nil(t, items)
	})
	assert.Nil(t, kinds.ByName("title"), "gone after its test")
	assert.Len(t, kinds.All(), 3)
}
