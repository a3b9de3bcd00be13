package store

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"io"
	"strings"
	"sync"
	"time"
)

// Answer is one stored answer found by LookupAnswers.
type Answer struct {
	Answer []byte
	// Runs is how many identical live runs it rests on.
	Runs int
	// Unstable lists the items its runs differed on; set, the answer is unstable
	// and must be served with this list, never as stable. "*": items unknown.
	Unstable []string
}

// LookupOptions select which stored answers a lookup serves.
type LookupOptions struct {
	// MinRuns serves only stable answers resting on at least this many identical
	// live runs (0 is 1). Unstable answers are served whatever it is: they carry
	// their unstable list, and measuring them again cannot make them stable.
	MinRuns int
}

// LookupAnswers finds the stored answers of metas that opt allows, at most
// LookupTimeout in all. A meta with no valid row, or whose row opt leaves out, is
// absent from the result and counted a miss; so is every meta when the store fails
// or is slow (logged), since a miss only costs a live answer.
func (s *Store) LookupAnswers(ctx context.Context, metas []Meta, opt LookupOptions) map[caseKey]Answer {
	return s.lookup(ctx, metas, opt, true)
}

func (s *Store) lookup(ctx context.Context, metas []Meta, opt LookupOptions, withUnstable bool) map[caseKey]Answer {
	found := map[caseKey]Answer{}
	if len(metas) == 0 {
		return found
	}
	if time.Now().UnixNano() < s.bypassUntil.Load() {
		s.misses.Add(int64(len(metas)))
		return found
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.LookupTimeout)
	defer cancel()
	found, err := s.getAll(ctx, metas)
	if err != nil {
		s.failed(err)
		s.misses.Add(int64(len(metas)))
		return map[caseKey]Answer{}
	}
	s.failures.Store(0)
	for k, a := range found {
		if a.Unstable != nil && !withUnstable || a.Unstable == nil && a.Runs < max(opt.MinRuns, 1) {
			delete(found, k)
		}
	}
	s.hits.Add(int64(len(found)))
	s.misses.Add(int64(len(metas) - len(found)))
	return found
}

// failed logs a failed lookup and, after breakerFailures in a row, bypasses the
// store for a while.
func (s *Store) failed(err error) {
	n := s.failures.Add(1)
	if n >= breakerFailures {
		s.bypassUntil.Store(time.Now().Add(breakerPause).UnixNano())
		s.failures.Store(0)
		s.log.Error().Err(err).Dur("pause", breakerPause).Msg("store lookups keep failing; answering live without the store for a while")
		return
	}
	s.log.Warn().Err(err).Msg("store lookup failed; answering live")
}

// getAll reads the rows of metas in one query and checks each: its columns must be
// its meta (a row rewritten to another version never answers for this one), and its
// answer must decompress to bytes with the stored checksum. A row that fails a check
// is no answer. A hit's use time is refreshed (for eviction) when older than
// touchAfter, so a warm rerun does not turn every lookup into a write.
func (s *Store) getAll(ctx context.Context, metas []Meta) (map[caseKey]Answer, error) {
	want := make(map[caseKey]Meta, len(metas))
	args := make([]any, 0, len(metas))
	for _, m := range metas {
		k := KeyOf(m)
		if _, dup := want[k]; !dup {
			want[k] = m
			args = append(args, k[:])
		}
	}
	rows, err := s.read.QueryContext(ctx, `SELECT key, format, walk, environment, profile, engine, engine_version, route, op, case_hash, answer, sum, used, `+
		s.stabilitySelect()+` FROM answers WHERE key IN (?`+strings.Repeat(",?", len(args)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := map[caseKey]Answer{}
	now := time.Now()
	for rows.Next() {
		var row Meta
		var key, packed, sum []byte
		var used, runs int64
		var unstable string
		if err := rows.Scan(&key, &row.Format, &row.Walk, &row.Environment, &row.Profile, &row.Engine,
			&row.EngineVersion, &row.Route, &row.Op, &row.Case, &packed, &sum, &used, &runs, &unstable); err != nil {
			return nil, err
		}
		var k caseKey
		copy(k[:], key)
		if m, ok := want[k]; !ok || row != m {
			s.log.Warn().Str("key", k.String()).Msg("stored row does not match its key; not served")
			continue
		}
		answer, err := unpack(packed)
		if err != nil || !bytes.Equal(checksum(answer), sum) {
			s.log.Warn().Str("key", k.String()).Msg("stored answer fails its checksum; not served")
			continue
		}
		found[k] = Answer{Answer: answer, Runs: int(runs), Unstable: items(unstable)}
		if now.Sub(time.Unix(0, used)) > touchAfter {
			s.touch(k)
		}
	}
	return found, rows.Err()
}

func checksum(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}

func pack(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// inflaters are reused: a new flate reader allocates tens of KiB of state.
var inflaters sync.Pool

func unpack(b []byte) ([]byte, error) {
	r, _ := inflaters.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(bytes.NewReader(b))
	} else if err := r.(flate.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(r)
	if err == nil {
		inflaters.Put(r)
	}
	return out, err
}
