package main

// A unit test of our own code (no engine: the answers are made up): a throw-away
// kind (kindstest.Title) goes through the store's diff and `oracle store export`,
// which read package kinds' registry, not the three kinds' names.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/kinds/kindstest"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/store"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStoreDiffAndExportReadTheKindRegistry(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{Diff: oracle.StoreDiff}, zerolog.Nop())
	require.NoError(t, err)
	defer st.Close()
	walk, env := oracle.StoreVersions("default", routes.Table)
	meta := func(c, engine string) store.Meta {
		return store.Meta{Format: store.Format, Walk: walk, Environment: env, Profile: "default", Engine: engine,
			EngineVersion: "1", Route: "test", Op: "title", Case: c}
	}
	put := func(c, engine, title string) {
		st.Put(store.Record{Meta: meta(c, engine), ID: json.RawMessage(fmt.Sprintf("%q", c)),
			Answer: []byte(fmt.Sprintf(`{"engine":%q,"title":%q}`, engine, title))})
		st.Flush(10 * time.Second)
	}
	unstable := func(c string) []string {
		a := st.LookupAnswers(context.Background(), []store.Meta{meta(c, "chromium")}, store.LookupOptions{})[store.KeyOf(meta(c, "chromium"))]
		return a.Unstable
	}
	export := func() (string, error) {
		var out bytes.Buffer
		err := export(context.Background(), st, "default", &out)
		return out.String(), err
	}

	// Not registered: the diff cannot compare two answers of the kind (the whole
	// answer is unstable), and export names the cases it leaves out.
	put("a", "chromium", "x")
	put("a", "chromium", "y")
	assert.Equal(t, []string{"*"}, unstable("a"))
	out, err := export()
	assert.EqualError(t, err, `1 stored cases of op "title" not exported: no kind of that name is registered (package kinds)`)
	assert.Empty(t, out)

	t.Run("registered", func(t *testing.T) {
		kindstest.Register(t)
		put("b", "chromium", "x")
		put("b", "firefox", "x")
		put("b", "chromium", "y")
		assert.Equal(t, []string{"title"}, unstable("b"), "the kind's own run comparison")
		put("c", "chromium", "z")
		put("c", "chromium", "z")
		assert.Nil(t, unstable("c"))

		out, err := export()
		require.NoError(t, err)
		assert.Equal(t, `{"id":"a","titles":{"chromium":{"engine":"chromium","title":"x"}},"unstable":{"chromium":["*"]}}`+"\n"+
			`{"id":"b","titles":{"chromium":{"engine":"chromium","title":"x"},"firefox":{"engine":"firefox","title":"x"}},"unstable":{"chromium":["title"]}}`+"\n"+
			`{"id":"c","titles":{"chromium":{"engine":"chromium","title":"z"}}}`+"\n", sortedLines(out))
	})
}

// sortedLines is text's lines in sorted order (export writes in the store's key order).
func sortedLines(text string) string {
	lines := strings.SplitAfter(text, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}
