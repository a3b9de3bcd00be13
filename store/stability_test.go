package store

// Tests of how the store keeps stability: runs, unstable keys, the min-runs lookup
// and the migration of files made before them (no browser: made-up answers).

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lookupOne(s *Store, opt LookupOptions, c string) (Answer, bool) {
	a, ok := s.LookupAnswers(context.Background(), []Meta{meta(c)}, opt)[KeyOf(meta(c))]
	return a, ok
}

func TestIdenticalPutsAddRunsAndMinRunsServesOnlyThoseAbove(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "s.sqlite"), Options{})
	putAndFlush(s, "a")
	a, ok := lookupOne(s, LookupOptions{}, "a")
	require.True(t, ok)
	assert.Equal(t, Answer{Answer: answer("a"), Runs: 1}, a)
	_, ok = lookupOne(s, LookupOptions{MinRuns: 2}, "a")
	assert.False(t, ok, "an answer resting on one run is not served at min runs 2")

	s.Put(Record{Meta: meta("a"), Answer: answer("a"), Runs: 2}) // a --verify 2 run, identical
	s.Flush(10 * time.Second)
	a, ok = lookupOne(s, LookupOptions{MinRuns: 3}, "a")
	require.True(t, ok)
	assert.Equal(t, 3, a.Runs)
	assert.Nil(t, a.Unstable)
	_, ok = lookupOne(s, LookupOptions{MinRuns: 4}, "a")
	assert.False(t, ok)
	assert.Equal(t, int64(1), s.Stats().Entries)
	assert.Zero(t, s.Stats().Unstable)
	st := s.Stats()
	assert.Equal(t, int64(2), st.Hits)
	assert.Equal(t, int64(2), st.Misses, "left out by min runs is a miss")
}

// A live answer that differs from the stored one marks the key unstable: the first
// answer stays, served only with its unstable list, never as stable (Lookup, which
// cannot mark it, leaves it out).
func TestDifferingPutMarksTheKeyUnstable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	s, logs := open(t, path, Options{})
	putAndFlush(s, "a", "b")
	s.Put(Record{Meta: meta("a"), Answer: []byte(`{"engine":"chromium","case":"a","flaky":1}`)})
	s.Flush(10 * time.Second)

	assert.NotContains(t, lookupStable(s, context.Background(), []Meta{meta("a")}), KeyOf(meta("a")))
	assert.Contains(t, lookupStable(s, context.Background(), []Meta{meta("b")}), KeyOf(meta("b")))
	for _, min := range []int{1, 5} {
		a, ok := lookupOne(s, LookupOptions{MinRuns: min}, "a")
		require.True(t, ok, "an unstable answer is served with its list (min runs %d)", min)
		assert.Equal(t, answer("a"), a.Answer, "the first answer stays")
		assert.Equal(t, []string{"*"}, a.Unstable)
		assert.Equal(t, 2, a.Runs)
	}
	assert.Equal(t, int64(1), s.Stats().Unstable)
	assert.Contains(t, logs.String(), "the key is unstable")

	// An identical answer afterwards does not make it stable again.
	putAndFlush(s, "a")
	a, _ := lookupOne(s, LookupOptions{}, "a")
	assert.Equal(t, []string{"*"}, a.Unstable)
	assert.Equal(t, 3, a.Runs)

	sum, err := s.Summarize(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), sum.Unstable)
	k := KeyOf(meta("a"))
	assert.Equal(t, []unstableKey{{Key: k.String(), Engine: "chromium", EngineVersion: "1.0", Op: "geometry", Case: "a",
		Runs: 3, Items: []string{"*"}}}, sum.UnstableKeys)
}

// With Options.Diff the store names the items, and bytes that differ only within the
// vote's rules are the same answer.
func TestDiffNamesTheItems(t *testing.T) {
	diff := func(op string, stored, live []byte) ([]string, error) {
		switch string(live) {
		case `{"case":"a","noise":1}`:
			return nil, nil
		case `{"case":"a","broken":1}`:
			return nil, errors.New("does not decode")
		}
		return []string{"3:bounding.w"}, nil
	}
	s, _ := open(t, filepath.Join(t.TempDir(), "s.sqlite"), Options{Diff: diff})
	putAndFlush(s, "a", "b")
	s.Put(Record{Meta: meta("a"), Answer: []byte(`{"case":"a","noise":1}`)})
	s.Flush(10 * time.Second)
	a, _ := lookupOne(s, LookupOptions{}, "a")
	assert.Equal(t, Answer{Answer: answer("a"), Runs: 2}, a, "within the vote's rules: one more run")

	s.Put(Record{Meta: meta("a"), Answer: []byte(`{"case":"a","moved":1}`)})
	s.Put(Record{Meta: meta("b"), Answer: []byte(`{"case":"a","broken":1}`)})
	s.Flush(10 * time.Second)
	a, _ = lookupOne(s, LookupOptions{}, "a")
	assert.Equal(t, []string{"3:bounding.w"}, a.Unstable)
	b, _ := lookupOne(s, LookupOptions{}, "b")
	assert.Equal(t, []string{"*"}, b.Unstable, "what Diff cannot compare is unstable as a whole")
	assert.Equal(t, int64(2), s.Stats().Unstable)
}

// An answer verified unstable (--verify) is stored unstable with its list.
func TestRecordUnstableIsStoredUnstable(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "s.sqlite"), Options{})
	s.Put(Record{Meta: meta("a"), Answer: answer("a"), Runs: 3, Unstable: []string{"2:offset.y"}})
	s.Flush(10 * time.Second)
	assert.Empty(t, lookupStable(s, context.Background(), []Meta{meta("a")}))
	a, ok := lookupOne(s, LookupOptions{}, "a")
	require.True(t, ok)
	assert.Equal(t, Answer{Answer: answer("a"), Runs: 3, Unstable: []string{"2:offset.y"}}, a)
	s.Put(Record{Meta: meta("a"), Answer: answer("a"), Runs: 2, Unstable: []string{"4:style.display"}})
	s.Flush(10 * time.Second)
	a, _ = lookupOne(s, LookupOptions{}, "a")
	assert.Equal(t, []string{"2:offset.y", "4:style.display"}, a.Unstable)
	assert.Zero(t, s.Stats().Unstable, "the store found no conflict itself")
}

// makeOld turns a store file into one made before runs and unstable existed.
func makeOld(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path)
	_, err := db.Exec(`ALTER TABLE answers DROP COLUMN runs; ALTER TABLE answers DROP COLUMN unstable`)
	require.NoError(t, err)
	have, err := columns(context.Background(), db)
	require.NoError(t, err)
	require.False(t, have["runs"])
	db.Close()
}

// A file made before the stability columns keeps every answer: read-only it is read
// as one run each, stable; opened for writing it gains the columns (once, also when
// two processes open it at the same time).
func TestOldFileIsMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	s, _ := open(t, path, Options{})
	putAndFlush(s, "a", "b")
	s.Close()
	makeOld(t, path)

	ro, _ := open(t, path, Options{ReadOnly: true})
	a, ok := lookupOne(ro, LookupOptions{}, "a")
	require.True(t, ok)
	assert.Equal(t, Answer{Answer: answer("a"), Runs: 1}, a)
	sum, err := ro.Summarize(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(2), sum.Entries)
	n := 0
	require.NoError(t, ro.Each(context.Background(), func(r Row) error { n++; assert.Equal(t, 1, r.Runs); return nil }))
	assert.Equal(t, 2, n)
	ro.Close()

	var wg sync.WaitGroup
	stores := make([]*Store, 2)
	errs := make([]error, 2)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = Open(path, Options{}, zerolog.Nop())
		}()
	}
	wg.Wait()
	for i, st := range stores {
		require.NoError(t, errs[i])
		t.Cleanup(func() { st.Close() })
	}
	for _, st := range stores {
		a, ok := lookupOne(st, LookupOptions{}, "b")
		require.True(t, ok)
		assert.Equal(t, Answer{Answer: answer("b"), Runs: 1}, a)
	}
	putAndFlush(stores[0], "b")
	a, _ = lookupOne(stores[1], LookupOptions{}, "b")
	assert.Equal(t, 2, a.Runs)
}
