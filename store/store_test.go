package store

// Tests of the store file on its own (no browser: the answers are made-up bytes).
// The oracle serving from it against the real engines is tested in
// cmd/oracle/store_test.go.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func meta(c string) Meta {
	return Meta{Format: Format, Walk: "w", Environment: "e", Profile: "default", Engine: "chromium",
		EngineVersion: "1.0", Route: "r", Op: "geometry", Case: c}
}

func open(t *testing.T, path string, opts Options) (*Store, *testutil.LockedBuffer) {
	t.Helper()
	var logs testutil.LockedBuffer
	s, err := Open(path, opts, zerolog.New(&logs))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, &logs
}

func answer(c string) []byte { return []byte(`{"engine":"chromium","case":"` + c + `"}`) }

func putAndFlush(s *Store, cases ...string) {
	for _, c := range cases {
		s.Put(Record{Meta: meta(c), ID: []byte(`"` + c + `"`), Answer: answer(c)})
	}
	s.Flush(10 * time.Second)
}

func TestStoredAnswerComesBackExactly(t *testing.T) {
	s, _ := open(t, filepath.Join(t.TempDir(), "s.sqlite"), Options{})
	putAndFlush(s, "a", "b")
	got := lookupStable(s, context.Background(), []Meta{meta("a"), meta("b"), meta("c")})
	assert.Equal(t, answer("a"), got[KeyOf(meta("a"))])
	assert.Equal(t, answer("b"), got[KeyOf(meta("b"))])
	assert.NotContains(t, got, KeyOf(meta("c")))
	st := s.Stats()
	assert.Equal(t, int64(2), st.Hits)
	assert.Equal(t, int64(1), st.Misses)
	assert.Equal(t, int64(2), st.Entries)
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// A row whose answer was altered on disk, or whose columns no longer match the key it
// sits under, is never served.
func TestDamagedOrRewrittenRowIsNotServed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	s, logs := open(t, path, Options{})
	putAndFlush(s, "a", "b")
	db := rawDB(t, path)
	a, b := KeyOf(meta("a")), KeyOf(meta("b"))
	_, err := db.Exec(`UPDATE answers SET answer = ? WHERE key = ?`, pack([]byte(`{"engine":"chromium","case":"x"}`)), a[:])
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE answers SET engine_version = '0.9' WHERE key = ?`, b[:])
	require.NoError(t, err)
	got := lookupStable(s, context.Background(), []Meta{meta("a"), meta("b")})
	assert.Empty(t, got)
	assert.Contains(t, logs.String(), "fails its checksum")
	assert.Contains(t, logs.String(), "does not match its key")

	// The live answers that replace them are served again.
	putAndFlush(s, "a", "b")
	got = lookupStable(s, context.Background(), []Meta{meta("a"), meta("b")})
	assert.Equal(t, answer("a"), got[a])
	assert.Equal(t, answer("b"), got[b])
}

// Past MaxBytes the least recently used answers go; a recently looked-up one stays.
func TestEvictionDropsLeastRecentlyUsed(t *testing.T) {
	defer func(d time.Duration) { touchAfter = d }(touchAfter)
	touchAfter = 0 // every hit counts as a use
	path := filepath.Join(t.TempDir(), "s.sqlite")
	// This test is of eviction order, not of lookup latency: a CI run (2 cores, -race)
	// had a lookup of "keep" pass the default 500 ms bound during an eviction and
	// count as a miss ("evicted although used at 300").
	s, _ := open(t, path, Options{MaxBytes: 256 << 10, LookupTimeout: time.Minute})
	big := func(c string) []byte { // incompressible enough: distinct hex per row
		var b strings.Builder
		for i := 0; b.Len() < 8<<10; i++ {
			fmt.Fprintf(&b, "%x", KeyOf(meta(fmt.Sprint(c, i))))
		}
		return []byte(`"` + b.String() + `"`)
	}
	s.Put(Record{Meta: meta("keep"), Answer: big("keep")})
	s.Flush(10 * time.Second)
	for i := 0; i < 600; i++ {
		if i%50 == 0 { // keep "keep" recently used
			s.Flush(10 * time.Second)
			require.Len(t, lookupStable(s, context.Background(), []Meta{meta("keep")}), 1, "evicted although used at %d", i)
		}
		c := fmt.Sprint("c", i)
		s.Put(Record{Meta: meta(c), Answer: big(c)})
	}
	s.Flush(10 * time.Second)
	used, err := s.usedBytes(context.Background(), s.read)
	require.NoError(t, err)
	assert.LessOrEqual(t, used, int64(256<<10)+int64(evictEvery*16<<10), "used pages stay near the bound")
	assert.Less(t, s.Stats().Entries, int64(400), "eviction runs every %d answers", evictEvery)
	assert.Len(t, lookupStable(s, context.Background(), []Meta{meta("keep")}), 1)
	assert.Empty(t, lookupStable(s, context.Background(), []Meta{meta("c0")}), "the oldest unused answer is gone")
}

// Two stores (two processes' worth of connections) on one file: each serves what the
// other wrote, while both write.
func TestTwoStoresShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	// This test is of sharing, not of the bounds: under -race on a loaded machine the
	// pure-Go SQLite is many times slower, and the default bounds would drop work.
	defer func(d time.Duration) { writerBusy = d }(writerBusy)
	writerBusy = time.Minute
	s1, l1 := open(t, path, Options{LookupTimeout: time.Minute})
	s2, l2 := open(t, path, Options{LookupTimeout: time.Minute})
	defer func() {
		if t.Failed() {
			t.Logf("logs:\n%s\n%s", l1, l2)
		}
	}()
	var wg sync.WaitGroup
	for i, s := range []*Store{s1, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				c := fmt.Sprint(i, "-", j)
				s.Put(Record{Meta: meta(c), Answer: answer(c)})
			}
			s.Flush(2 * time.Minute)
		}()
	}
	wg.Wait()
	for i, s := range []*Store{s2, s1} { // each reads the other's
		found := 0
		for j := 0; j < 200; j++ { // one lookup per case, as the oracle does
			found += len(lookupStable(s, context.Background(), []Meta{meta(fmt.Sprint(i, "-", j))}))
		}
		assert.Equal(t, 200, found)
	}
	assert.Zero(t, s1.Stats().Dropped+s2.Stats().Dropped)
}

// Another process holding the write lock (a long write transaction) neither stops
// lookups (WAL readers never wait for the writer) nor blocks Put: the writer waits
// for the lock in the background, at most writerBusy, then drops its batch with a log
// line.
func TestWriteLockedStoreStillServesAndPutNeverWaits(t *testing.T) {
	defer func(d time.Duration, n int) { writerBusy, writeQueue = d, n }(writerBusy, writeQueue)
	writerBusy, writeQueue = 300*time.Millisecond, 64
	path := filepath.Join(t.TempDir(), "s.sqlite")
	s, logs := open(t, path, Options{})
	putAndFlush(s, "a")

	db := rawDB(t, path)
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.Exec(`INSERT INTO answers (key, format, walk, environment, profile, engine, engine_version, route, op, case_hash, id, answer, sum, size, created, used)
		VALUES (x'00', 0, '', '', '', '', '', '', '', '', 'null', x'', x'', 0, 0, 0)`)
	require.NoError(t, err, "the test holds the write lock")

	start := time.Now()
	assert.Len(t, lookupStable(s, context.Background(), []Meta{meta("a")}), 1)
	// Enough that some must drop: the writer may take up to maxBatch off the queue
	// while these go in (it did in CI, under -race) before it waits for the lock with
	// them, and the queue holds writeQueue more.
	for i := 0; i < maxBatch+2*writeQueue; i++ {
		s.Put(Record{Meta: meta(fmt.Sprint("p", i)), Answer: answer("p")})
	}
	assert.Less(t, time.Since(start), time.Second, "lookups and Put never wait for the lock")
	assert.NotZero(t, s.Stats().Dropped, "a full queue drops answers")
	for end := time.Now().Add(3 * writerBusy); time.Now().Before(end) && !strings.Contains(logs.String(), "store write failed"); {
		time.Sleep(50 * time.Millisecond)
	}
	assert.Contains(t, logs.String(), "store write failed")
	require.NoError(t, tx.Rollback())
	s.Put(Record{Meta: meta("b"), Answer: answer("b")})
	s.Flush(30 * time.Second)
	assert.Len(t, lookupStable(s, context.Background(), []Meta{meta("b")}), 1, "writes resume once the lock is gone")
}

// Lookups that fail are misses with a log line; after breakerFailures in a row the
// store is bypassed without trying.
func TestFailingStoreIsBypassed(t *testing.T) {
	s, logs := open(t, filepath.Join(t.TempDir(), "s.sqlite"), Options{})
	putAndFlush(s, "a")
	s.read.Close() // every lookup now fails
	for i := 0; i < breakerFailures; i++ {
		assert.Empty(t, lookupStable(s, context.Background(), []Meta{meta("a")}))
	}
	assert.Contains(t, logs.String(), "store lookup failed")
	assert.Contains(t, logs.String(), "keep failing")
	assert.Less(t, s.bypassUntil.Load()-time.Now().UnixNano(), int64(breakerPause)+1)
	assert.Greater(t, s.bypassUntil.Load(), time.Now().UnixNano(), "bypassed for a while")
	assert.Equal(t, int64(breakerFailures), s.Stats().Misses)
}

// A file another process holds exclusively (rollback-journal mode) cannot be opened
// within the bound: Open fails, and the oracle serves live.
func TestExclusivelyLockedFileFailsToOpenInTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	db := rawDB(t, path)
	db.SetMaxOpenConns(1)
	_, err := db.Exec(`PRAGMA locking_mode=EXCLUSIVE; CREATE TABLE x(a); INSERT INTO x VALUES (1)`)
	require.NoError(t, err)
	start := time.Now()
	_, err = Open(path, Options{}, zerolog.Nop())
	require.Error(t, err)
	assert.Less(t, time.Since(start), openBusy+3*time.Second)
}

// A file that is not a store cannot be opened (the oracle then serves live), and the
// file is left as it was.
func TestNotAStoreIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	junk := []byte(strings.Repeat("not a database\n", 500))
	require.NoError(t, os.WriteFile(path, junk, 0o644))
	_, err := Open(path, Options{}, zerolog.Nop())
	require.Error(t, err)
	got, _ := os.ReadFile(path)
	assert.Equal(t, junk, got)
}

// Answers whose write fails (here a trigger refuses them, as a full disk would) are
// counted in Stats (ping's store object), and recorded in the file by the next
// commit that succeeds, for `oracle store stats`. Before, they showed
// nowhere: writes stayed put and no dropped appeared.
func TestFailedWritesAreCounted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	s, logs := open(t, path, Options{})
	putAndFlush(s, "ok")
	db := rawDB(t, path)
	_, err := db.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON answers BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END`)
	require.NoError(t, err)
	putAndFlush(s, "a", "b", "c")
	st := s.Stats()
	assert.Equal(t, int64(1), st.Writes)
	assert.Equal(t, int64(3), st.Failed, "failed writes in Stats")
	assert.Contains(t, logs.String(), "store write failed")

	_, err = db.Exec(`DROP TRIGGER refuse`)
	require.NoError(t, err)
	putAndFlush(s, "d") // succeeds, and records the 3 failed before it
	assert.Equal(t, int64(3), s.Stats().Failed)
	require.NoError(t, s.Close())
	ro, _ := open(t, path, Options{ReadOnly: true})
	sum, err := ro.Summarize(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(3), sum.FailedWrites, "failed writes in the file, for oracle store stats")
	assert.Equal(t, int64(2), sum.Entries)
}

// The write queue is bounded in bytes as well as in answers: with the writer held by
// another process's write lock, a few huge answers fill writeQueueBytes and the rest
// are dropped, where the answer count alone (4096) took them all into memory.
func TestWriteQueueIsBoundedInBytes(t *testing.T) {
	defer func(d time.Duration, n int64) { writerBusy, writeQueueBytes = d, n }(writerBusy, writeQueueBytes)
	writerBusy, writeQueueBytes = 2*time.Second, 4<<20
	path := filepath.Join(t.TempDir(), "s.sqlite")
	s, _ := open(t, path, Options{})
	putAndFlush(s, "a")

	tx, err := rawDB(t, path).Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.Exec(`INSERT INTO answers (key, format, walk, environment, profile, engine, engine_version, route, op, case_hash, id, answer, sum, size, created, used)
		VALUES (x'00', 0, '', '', '', '', '', '', '', '', 'null', x'', x'', 0, 0, 0)`)
	require.NoError(t, err, "the test holds the write lock")

	huge := []byte(`"` + strings.Repeat("x", 1<<20) + `"`) // one backing array for all
	for i := 0; i < 20; i++ {
		s.Put(Record{Meta: meta(fmt.Sprint("huge", i)), Answer: huge})
		assert.LessOrEqual(t, s.queuedBytes.Load(), writeQueueBytes, "after %d answers", i+1)
	}
	st := s.Stats()
	assert.Equal(t, int64(20-3), st.Dropped, "three answers of 1 MiB (and their overhead) fit in 4 MiB")

	// Once written (or failed), their bytes are free again.
	require.NoError(t, tx.Rollback())
	s.Flush(30 * time.Second)
	assert.Zero(t, s.queuedBytes.Load())
	s.Put(Record{Meta: meta("after"), Answer: huge})
	s.Flush(30 * time.Second)
	assert.Len(t, lookupStable(s, context.Background(), []Meta{meta("after")}), 1)
}

// The entry count is kept by the writer (no count(*) per batch): a replaced answer
// does not count twice, an evicted one counts out, and Prune reports what it deleted.
func TestEntriesFollowWritesReplacementsAndPrune(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sqlite")
	s, _ := open(t, path, Options{})
	putAndFlush(s, "a", "b", "c")
	putAndFlush(s, "a", "b", "d") // a and b replaced, d new
	assert.Equal(t, int64(4), s.Stats().Entries)
	var n int64
	require.NoError(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM answers`).Scan(&n))
	assert.Equal(t, int64(4), n)
	deleted, err := s.Prune(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, int64(4), deleted)
	assert.Zero(t, s.Stats().Entries)
	putAndFlush(s, "e")
	assert.Equal(t, int64(1), s.Stats().Entries)
}

// lookupStable finds the stored stable answers of metas (LookupAnswers with MinRuns 1,
// leaving out unstable answers, which this result could not mark as such).
func lookupStable(s *Store, ctx context.Context, metas []Meta) map[caseKey][]byte {
	found := map[caseKey][]byte{}
	for k, a := range s.lookup(ctx, metas, LookupOptions{}, false) {
		found[k] = a.Answer
	}
	return found
}
