package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"time"
)

type Stats struct {
	Path    string `json:"path"`
	Entries int64  `json:"entries"`
	Hits    int64  `json:"hits"`
	Misses  int64  `json:"misses"`
	Writes  int64  `json:"writes"`
	Dropped int64  `json:"dropped,omitempty"`
	Failed  int64  `json:"failed,omitempty"` // answers whose write failed (full disk, I/O error)
	// BuildMismatches counts engines whose live launch reported another build than
	// the one recorded for their fingerprint (builds.go); each is logged as an error.
	BuildMismatches int64 `json:"build_mismatches,omitempty"`
	// Unstable counts live answers this process stored that differed from the
	// stored answer for their key, marking it unstable (each is logged).
	Unstable int64 `json:"unstable,omitempty"`
}

// Stats reads the counters (entries as of the last write or open: no query).
func (s *Store) Stats() Stats {
	return Stats{Path: s.path, Entries: s.entries.Load(), Hits: s.hits.Load(), Misses: s.misses.Load(),
		Writes: s.writes.Load(), Dropped: s.dropped.Load(), Failed: s.writeFailed.Load(),
		BuildMismatches: s.buildMismatches.Load(), Unstable: s.unstable.Load()}
}

func (s *Store) unstableKeys(ctx context.Context) ([]unstableKey, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT key, engine, engine_version, op, case_hash, runs, unstable FROM answers
		WHERE unstable != '' ORDER BY used DESC, rowid LIMIT ?`, maxListedUnstable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []unstableKey
	for rows.Next() {
		var u unstableKey
		var key []byte
		var col string
		if err := rows.Scan(&key, &u.Engine, &u.EngineVersion, &u.Op, &u.Case, &u.Runs, &col); err != nil {
			return nil, err
		}
		u.Key, u.Items = hex.EncodeToString(key), items(col)
		out = append(out, u)
	}
	return out, rows.Err()
}

// Row is one stored answer, as Each reads it.
type Row struct {
	Meta     Meta
	ID       json.RawMessage
	Answer   []byte
	Created  time.Time
	Used     time.Time
	Runs     int      // identical live runs the answer rests on
	Unstable []string // set when the answer is unstable: the items its runs differed on
}

// Each calls fn with every row that passes its checks (as a lookup would serve it),
// ordered by case and then by creation: the rows of one case come together.
func (s *Store) Each(ctx context.Context, fn func(Row) error) error {
	rows, err := s.read.QueryContext(ctx, `SELECT format, walk, environment, profile, engine, engine_version, route, op, case_hash, id, answer, sum, created, used, `+
		s.stabilitySelect()+` FROM answers ORDER BY case_hash, created`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r Row
		var packed, sum []byte
		var created, used, runs int64
		var unstable string
		m := &r.Meta
		if err := rows.Scan(&m.Format, &m.Walk, &m.Environment, &m.Profile, &m.Engine, &m.EngineVersion, &m.Route, &m.Op, &m.Case,
			&r.ID, &packed, &sum, &created, &used, &runs, &unstable); err != nil {
			return err
		}
		answer, err := unpack(packed)
		if err != nil || !bytes.Equal(checksum(answer), sum) {
			continue
		}
		r.Answer, r.Created, r.Used = answer, time.Unix(0, created), time.Unix(0, used)
		r.Runs, r.Unstable = int(runs), items(unstable)
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Summary is what `oracle store stats` prints: the file and its rows by engine build.
type Summary struct {
	Path      string           `json:"path"`
	Entries   int64            `json:"entries"`
	FileBytes int64            `json:"file_bytes"`
	UsedBytes int64            `json:"used_bytes"`
	Answers   int64            `json:"answer_bytes"` // uncompressed answers' JSON
	ByBuild   map[string]int64 `json:"by_build"`     // "engine engine_version" -> entries
	// FailedWrites is the answers whose write failed, over every process, as far as
	// a later commit could record them (none can while the disk is full).
	FailedWrites int64 `json:"failed_writes"`
	// Unstable is how many stored answers are unstable; UnstableKeys lists them
	// (the first maxListedUnstable, most recently used first).
	Unstable     int64         `json:"unstable"`
	UnstableKeys []unstableKey `json:"unstable_keys,omitempty"`
}

// unstableKey is one unstable stored answer, as `oracle store stats` lists it.
type unstableKey struct {
	Key           string   `json:"key"`
	Engine        string   `json:"engine"`
	EngineVersion string   `json:"engine_version"`
	Op            string   `json:"op"`
	Case          string   `json:"case"`
	Runs          int      `json:"runs"`
	Items         []string `json:"items"`
}

// maxListedUnstable bounds Summary.UnstableKeys (Unstable counts them all).
const maxListedUnstable = 1000

// Summarize reads the whole table's counts (a scan: for the stats command, not ping).
func (s *Store) Summarize(ctx context.Context) (Summary, error) {
	sum := Summary{Path: s.path, ByBuild: map[string]int64{}}
	rows, err := s.read.QueryContext(ctx, `SELECT engine, engine_version, count(*), coalesce(sum(size), 0) FROM answers GROUP BY engine, engine_version`)
	if err != nil {
		return sum, err
	}
	defer rows.Close()
	for rows.Next() {
		var e, v string
		var n, size int64
		if err := rows.Scan(&e, &v, &n, &size); err != nil {
			return sum, err
		}
		sum.ByBuild[e+" "+v] = n
		sum.Entries += n
		sum.Answers += size
	}
	if err := rows.Err(); err != nil {
		return sum, err
	}
	if sum.UsedBytes, err = s.usedBytes(ctx, s.read); err != nil {
		return sum, err
	}
	if s.stability {
		if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM answers WHERE unstable != ''`).Scan(&sum.Unstable); err != nil {
			return sum, err
		}
		if sum.UnstableKeys, err = s.unstableKeys(ctx); err != nil {
			return sum, err
		}
	}
	// No row (or no table, in a file no writer opened since it was added): none failed.
	_ = s.read.QueryRowContext(ctx, `SELECT value FROM counters WHERE name = 'failed_writes'`).Scan(&sum.FailedWrites)
	for _, f := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(f); err == nil {
			sum.FileBytes += fi.Size()
		}
	}
	return sum, nil
}
