package kinds_test

// Unit tests of the registry and its run comparison, on made-up answers (no engine).

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	var known []string
	for _, k := range kinds.All() {
		known = append(known, k.About().Name)
	}
	assert.EqualError(t, err, `kinds: no kind "ping" (known: `+strings.Join(known, ", ")+`)`)
}

// A registered kind is found by its op, name and field, and its run comparison
// reaches UnstableAnswers (the store's diff); unregistered, it is an error.
func TestRegisterAddsAThrowAwayKindForItsTestOnly(t *testing.T) {
	x, y := []byte(`{"engine":"chromium","title":"a"}`), []byte(`{"engine":"chromium","title":"b"}`)
	tree, fields := kinds.All(), kinds.Fields()
	_, err := kinds.UnstableAnswers("title", [][]byte{x, y})
	require.Error(t, err)
	assert.Nil(t, kinds.ByField("titles"))

	t.Run("registered", func(t *testing.T) {
		kindstest.Register(t)
		assert.Same(t, kinds.Kind(kindstest.Title), kinds.ByOp("title"))
		assert.Same(t, kinds.Kind(kindstest.Title), kinds.ByField("titles"))
		assert.Equal(t, fields+`, "titles"`, kinds.Fields())
		items, err := kinds.UnstableAnswers("title", [][]byte{x, y})
		require.NoError(t, err)
		assert.Equal(t, []string{"title"}, items)
		items, err = kinds.UnstableAnswers("title", [][]byte{x, x})
		require.NoError(t, err)
		assert.Nil(t, items)
	})
	assert.Nil(t, kinds.ByName("title"), "gone after its test")
	assert.Equal(t, tree, kinds.All())
}

// Register refuses a kind whose op, name or field a registered kind has, and its
// removal removes that kind only, once.
func TestRegisterRefusesAClashAndRemovesItsOwnKind(t *testing.T) {
	tree := kinds.All()
	clash := *kindstest.Title
	clash.Op, clash.Name, clash.Field = "count", "count", tree[0].About().Field
	_, err := kinds.Register(&clash)
	require.ErrorContains(t, err, "kinds: count (op \"count\", field "+strconv.Quote(tree[0].About().Field)+") clashes with the registered "+tree[0].About().Name)

	unregister, err := kinds.Register(kindstest.Title)
	require.NoError(t, err)
	_, err = kinds.Register(kindstest.Title)
	require.EqualError(t, err, "kinds: title is registered already")
	other := *kindstest.Title
	other.Op, other.Name, other.Field = "count", "count", "counts"
	unregisterOther, err := kinds.Register(&other)
	require.NoError(t, err)
	unregister()
	unregister()
	assert.Equal(t, append(slices.Clone(tree), kinds.Kind(&other)), kinds.All(), "the title's removal (twice) leaves the other kind")
	unregisterOther()
	assert.Equal(t, tree, kinds.All())
}

// Tests register and remove kinds while other goroutines look kinds up (an oracle's
// request loop, a client's reader): under -race, the registry's lock is what keeps
// this from being a data race.
func TestTheRegistryIsSafeForConcurrentUse(t *testing.T) {
	tree := kinds.All()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			k := *kindstest.Title
			k.Op, k.Name, k.Field = fmt.Sprint("op", i), fmt.Sprint("name", i), fmt.Sprint("field", i)
			for range 50 {
				unregister, err := kinds.Register(&k)
				if !assert.NoError(t, err) {
					return
				}
				assert.Same(t, kinds.Kind(&k), kinds.ByField(k.Field))
				unregister()
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				assert.NotNil(t, kinds.ByName(tree[0].About().Name))
				assert.Contains(t, kinds.Fields(), tree[len(tree)-1].About().Field)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, tree, kinds.All())
}
