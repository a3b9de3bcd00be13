package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"time"
)

// Put queues rec for the writer and returns at once; when the queue is full the
// answer is dropped (logged): it is measured again next time.
func (s *Store) Put(rec Record) {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.write == nil || s.closed {
		return
	}
	n := recordBytes(rec)
	if !s.reserve(n) {
		s.drop()
		return
	}
	select {
	case s.queue <- rec:
		s.enqueued.Add(1)
	default:
		s.queuedBytes.Add(-n)
		s.drop()
	}
}

// reserve counts n more queued bytes unless that passes writeQueueBytes with
// something already queued.
func (s *Store) reserve(n int64) bool {
	for {
		cur := s.queuedBytes.Load()
		if cur > 0 && cur+n > writeQueueBytes {
			return false
		}
		if s.queuedBytes.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

func (s *Store) drop() {
	if s.dropped.Add(1)%1000 == 1 {
		s.log.Warn().Int64("dropped", s.dropped.Load()).Msg("store write queue full; answer not stored")
	}
}

// touch records a hit's use for LRU eviction, if the writer has room for it.
func (s *Store) touch(k caseKey) {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.write == nil || s.closed {
		return
	}
	select {
	case s.touches <- k:
	default:
	}
}

// maxBatch is the most answers and touches one commit takes off the queues.
const maxBatch = 512

// writer commits queued answers in batches (one transaction each: a kill at any
// moment leaves either the whole batch or none of it), and evicts past MaxBytes.
func (s *Store) writer() {
	defer close(s.done)
	sinceEvict := 0
	unrecorded := int64(0) // failed answers not yet added to the file's counter
	for {
		var batch []Record
		var touched []caseKey
		select {
		case rec, ok := <-s.queue:
			if !ok {
				return
			}
			batch = append(batch, rec)
		case k := <-s.touches:
			touched = append(touched, k)
		}
		// Take whatever else is waiting, so one commit (one fsync) covers many.
	more:
		for len(batch)+len(touched) < maxBatch {
			select {
			case rec, ok := <-s.queue:
				if !ok {
					break more
				}
				batch = append(batch, rec)
			case k := <-s.touches:
				touched = append(touched, k)
			default:
				break more
			}
		}
		err := s.commit(batch, touched, unrecorded)
		if err != nil {
			s.writeFailed.Add(int64(len(batch)))
			unrecorded += int64(len(batch))
		} else {
			unrecorded = 0
		}
		var n int64
		for _, r := range batch {
			n += recordBytes(r)
		}
		s.queuedBytes.Add(-n)
		s.processed.Add(int64(len(batch)))
		if err != nil {
			s.log.Warn().Err(err).Int("answers", len(batch)).Int64("failed", s.writeFailed.Load()).Msg("store write failed; answers not stored")
			continue
		}
		s.writes.Add(int64(len(batch)))
		sinceEvict += len(batch)
		if sinceEvict >= evictEvery {
			sinceEvict = 0
			if err := s.evict(context.Background(), s.opts.MaxBytes); err != nil {
				s.log.Warn().Err(err).Msg("store eviction failed")
			}
			s.recount() // other processes sharing the file write too
		}
	}
}

// commit writes batch and touched in one transaction, and adds failed to the file's
// count of failed writes: the count is stored with the first commit that succeeds
// after them (a full disk stores nothing), for `oracle store stats`.
func (s *Store) commit(batch []Record, touched []caseKey, failed int64) error {
	// No deadline: the writer is off the request path, its lock waits are bounded by
	// busy_timeout, and a slow disk should finish the batch rather than lose it.
	ctx := context.Background()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	added := int64(0)
	for _, r := range batch {
		k := KeyOf(r.Meta)
		m := r.Meta
		id := []byte(r.ID)
		if id == nil {
			id = []byte("null")
		}
		// Insert, else replace the row with that key: two statements rather than one
		// upsert, whose changes() is 1 either way, so the writer knows the new rows
		// without a count(*) per batch.
		args := []any{m.Format, m.Walk, m.Environment, m.Profile, m.Engine, m.EngineVersion, m.Route, m.Op, m.Case,
			id, pack(r.Answer), checksum(r.Answer), len(r.Answer), now, now, r.runs(), itemsColumn(r.Unstable), k[:]}
		res, err := tx.ExecContext(ctx, `INSERT INTO answers (format, walk, environment, profile, engine, engine_version, route, op, case_hash, id, answer, sum, size, created, used, runs, unstable, key)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING`, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			added++
			continue
		}
		if merged, err := s.merge(ctx, tx, k, r, now); err != nil {
			return err
		} else if merged {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE answers SET format = ?, walk = ?, environment = ?, profile = ?, engine = ?,
			engine_version = ?, route = ?, op = ?, case_hash = ?, id = ?, answer = ?, sum = ?, size = ?, created = ?, used = ?,
			runs = ?, unstable = ? WHERE key = ?`, args...); err != nil {
			return err
		}
	}
	for _, k := range touched {
		if _, err := tx.ExecContext(ctx, `UPDATE answers SET used = ? WHERE key = ?`, now, k[:]); err != nil {
			return err
		}
	}
	if failed > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES ('failed_writes', ?)
			ON CONFLICT(name) DO UPDATE SET value = value + excluded.value`, failed); err != nil {
			return err
		}
	}
	if s.holdWrite > 0 && len(batch) > 0 {
		// Test hook: hold the transaction open, written but not committed, so a
		// test can kill the process mid-write (cmd/oracle TestStoreSurvivesKill).
		s.log.Info().Int("answers", len(batch)).Msg("store write in progress (test hold)")
		time.Sleep(s.holdWrite)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.entries.Add(added)
	return nil
}

// merge adds live answer r to the valid row stored under k: the same answer (the
// same bytes, or what Options.Diff finds no item of) adds its runs; another marks
// the key unstable with the items they differ on (logged, counted in Stats). The
// stored answer stays: it is the first run's. merged is false when the row is not
// valid (its columns are not r's meta, or its answer fails its checksum): the caller
// then replaces it.
func (s *Store) merge(ctx context.Context, tx *sql.Tx, k caseKey, r Record, now int64) (merged bool, err error) {
	var row Meta
	var packed, sum []byte
	var runs int64
	var unstable string
	err = tx.QueryRowContext(ctx, `SELECT format, walk, environment, profile, engine, engine_version, route, op, case_hash, answer, sum, runs, unstable
		FROM answers WHERE key = ?`, k[:]).Scan(&row.Format, &row.Walk, &row.Environment, &row.Profile, &row.Engine,
		&row.EngineVersion, &row.Route, &row.Op, &row.Case, &packed, &sum, &runs, &unstable)
	if err != nil {
		return false, err
	}
	stored, uerr := unpack(packed)
	if row != r.Meta || uerr != nil || !bytes.Equal(checksum(stored), sum) {
		return false, nil
	}
	was := items(unstable)
	now2 := union(was, r.Unstable)
	if !bytes.Equal(checksum(r.Answer), sum) {
		diff := []string{"*"}
		if s.opts.Diff != nil {
			d, err := s.opts.Diff(r.Meta.Op, stored, r.Answer)
			if err == nil {
				diff = d
			} else {
				s.log.Warn().Err(err).Str("key", k.String()).Msg("store could not compare a live answer with the stored one; unstable as a whole")
			}
		}
		if len(diff) > 0 {
			now2 = union(now2, diff)
			s.unstable.Add(1)
			s.log.Warn().Str("key", k.String()).Str("engine", r.Meta.Engine).Str("op", r.Meta.Op).Str("case", r.Meta.Case).
				Strs("items", diff).Msg("a live answer differs from the stored one: the key is unstable")
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE answers SET runs = runs + ?, unstable = ?, used = ? WHERE key = ?`,
		r.runs(), itemsColumn(now2), now, k[:])
	return err == nil, err
}

// recount sets entries from the file (other processes sharing it write too).
func (s *Store) recount() {
	var n int64
	if err := s.write.QueryRowContext(context.Background(), `SELECT count(*) FROM answers`).Scan(&n); err == nil {
		s.entries.Store(n)
	}
}

// usedBytes is the database's pages in use (the file less its free pages).
func (s *Store) usedBytes(ctx context.Context, db *sql.DB) (int64, error) {
	var pages, free, size int64
	if err := db.QueryRowContext(ctx, `SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`).Scan(&pages, &free, &size); err != nil {
		return 0, err
	}
	return (pages - free) * size, nil
}

// evict deletes the least recently used answers until the used pages are at most
// 90% of max (freed pages are reused, so the file stops growing near max).
func (s *Store) evict(ctx context.Context, max int64) error {
	for {
		used, err := s.usedBytes(ctx, s.write)
		if err != nil {
			return err
		}
		if used <= max {
			return nil
		}
		// Delete by payload size until the excess (plus 10%) is covered, in chunks.
		target := used - max + max/10
		res, err := s.write.ExecContext(ctx, `DELETE FROM answers WHERE rowid IN (
			SELECT rowid FROM (SELECT rowid, sum(size) OVER (ORDER BY used, rowid) AS running FROM answers ORDER BY used, rowid LIMIT 5000)
			WHERE running - size < ?)`, target)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		s.log.Info().Int64("evicted", n).Int64("used_bytes", used).Int64("max_bytes", max).Msg("store over its bound; least recently used answers evicted")
		s.entries.Add(-n)
		if n == 0 {
			return nil
		}
	}
}

// Prune evicts least recently used answers until the store's used pages are at most
// max bytes (0: everything), then checkpoints and vacuums so the file shrinks.
func (s *Store) Prune(ctx context.Context, max int64) (deleted int64, err error) {
	if s.write == nil {
		return 0, errors.New("store opened read-only")
	}
	before := s.entries.Load()
	if max <= 0 {
		if _, err := s.write.ExecContext(ctx, `DELETE FROM answers`); err != nil {
			return 0, err
		}
		s.entries.Store(0)
	} else if err := s.evict(ctx, max); err != nil {
		return 0, err
	}
	if _, err := s.write.ExecContext(ctx, `VACUUM`); err != nil {
		return 0, err
	}
	if _, err := s.write.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return 0, err
	}
	return before - s.entries.Load(), nil
}

// Flush waits until every answer queued before it was committed or given up on
// (or d passed).
func (s *Store) Flush(d time.Duration) {
	want := s.enqueued.Load()
	deadline := time.Now().Add(d)
	for s.processed.Load() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// Close commits what is queued (bounded by writerBusy) and closes the file.
func (s *Store) Close() error {
	s.stopOnce.Do(func() {
		s.closeMu.Lock()
		s.closed = true
		s.closeMu.Unlock()
		if s.write != nil {
			close(s.queue)
			select {
			case <-s.done:
			case <-time.After(writerBusy + 5*time.Second):
				s.log.Warn().Msg("store writer did not finish in time; unwritten answers dropped")
			}
		}
	})
	s.closeDBs()
	return nil
}

// Stats are the store's counters, as ping and `oracle store stats` report them.
