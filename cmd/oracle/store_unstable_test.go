package main

// Pure (no browser): `oracle store stats` lists unstable keys, and export carries
// their "unstable" lists, on a store filled with made-up answers through package
// store.

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/store"
)

func TestStoreStatsListUnstableKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.sqlite")
	s, err := store.Open(path, store.Options{}, zerolog.Nop())
	require.NoError(t, err)
	walk, env := oracle.StoreVersions("default", routes.Table)
	meta := func(engine string) store.Meta {
		return store.Meta{Format: store.Format, Walk: walk, Environment: env, Profile: "default", Engine: engine,
			EngineVersion: "1", Route: "r", Op: "reflect", Case: "c1"}
	}
	s.Put(store.Record{Meta: meta("chromium"), ID: json.RawMessage(`"x"`), Answer: []byte(`{"engine":"chromium"}`)})
	s.Put(store.Record{Meta: meta("firefox"), ID: json.RawMessage(`"x"`), Answer: []byte(`{"engine":"firefox"}`)})
	s.Flush(10 * time.Second)
	// firefox answers differently on a second live run: the key becomes unstable.
	s.Put(store.Record{Meta: meta("firefox"), ID: json.RawMessage(`"x"`), Answer: []byte(`{"engine":"firefox","other":1}`)})
	s.Flush(10 * time.Second)
	require.Equal(t, int64(1), s.Stats().Unstable)
	require.NoError(t, s.Close())

	var out, errb bytes.Buffer
	require.Equal(t, 0, storeCommand([]string{"stats", "--store", path}, &out, &errb), errb.String())
	var sum store.Summary
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum))
	assert.Equal(t, int64(1), sum.Unstable)
	require.Len(t, sum.UnstableKeys, 1)
	assert.Equal(t, "firefox", sum.UnstableKeys[0].Engine)
	assert.Equal(t, []string{"*"}, sum.UnstableKeys[0].Items)
	assert.Equal(t, 2, sum.UnstableKeys[0].Runs)

	out.Reset()
	require.Equal(t, 0, storeCommand([]string{"export", "--store", path}, &out, &errb), errb.String())
	var line struct {
		States   map[string]json.RawMessage `json:"states"`
		Unstable map[string][]string        `json:"unstable"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out.String())), &line), out.String())
	assert.Len(t, line.States, 2)
	assert.Equal(t, map[string][]string{"firefox": {"*"}}, line.Unstable)
}
