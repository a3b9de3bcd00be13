// Package store keeps the oracle's successful per-engine answers in one SQLite file
// (modernc.org/sqlite, pure Go), keyed by a hash of everything that determines an
// answer, so a rerun of the same cases on the same engine builds is answered without
// a browser. docs/store.md says why SQLite and how the key is made.
//
// The store never makes a request fail or wait long: lookups are bounded by a short
// timeout and count as misses when they fail; writes are queued to one background
// writer and dropped (with a log line) when the queue is full or the file is locked,
// full or broken.
package store

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Format is the layout of keys and rows. Changing how a Meta is hashed, or what a
// row holds, bumps it: rows of another format are never served (they are in no key).
const Format = 1

// Meta is everything an answer's key is made of. Key hashes its JSON encoding (a
// struct encodes its fields in declaration order, so the encoding is canonical). Each
// field is also a column of the answer's row, so a row can be checked against the
// meta it is looked up by, and rekeyed (tests simulate a new engine build that way).
type Meta struct {
	Format        int    `json:"format"`
	Walk          string `json:"walk"`        // oracle's walk/recorder version and code hash
	Environment   string `json:"environment"` // pinned environment version and content hash
	Profile       string `json:"profile"`
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Route         string `json:"route"`
	Op            string `json:"op"`
	Case          string `json:"case"` // hash of the request's canonical encoding (oracle.CaseHash)
}

// Key is a row's primary key: SHA-256 of Meta's canonical JSON.
type Key [32]byte

// KeyOf hashes m.
func KeyOf(m Meta) Key {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // a struct of strings and an int always encodes
	}
	return sha256.Sum256(b)
}

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Options configure Open.
type Options struct {
	// MaxBytes bounds the database's used pages; past it the least recently used
	// answers are evicted. 0 means DefaultMaxBytes.
	MaxBytes int64
	// LookupTimeout bounds one lookup (all engines of one request); 0 means
	// DefaultLookupTimeout. A lookup that takes longer is a miss.
	LookupTimeout time.Duration
	// ReadOnly opens for lookups only (store stats/export); no writer runs.
	ReadOnly bool
	// Diff, when set, compares a live answer with the stored one for the same key
	// whose bytes differ (compare.UnstableAnswers): the items they differ on, none
	// when they agree within the vote's rules. Unset, or on an error, differing
	// bytes are unstable as a whole ("*").
	Diff func(op string, stored, live []byte) ([]string, error)
}

const (
	DefaultMaxBytes      = 4 << 30
	DefaultLookupTimeout = 500 * time.Millisecond
	// openBusy is how long Open waits for a lock another process holds: the oracle
	// then starts without the store rather than late.
	openBusy = 2 * time.Second
	// readerBusy is how long a lookup waits on a lock (WAL readers normally never do).
	readerBusy = 200 * time.Millisecond
	// breakerFailures consecutive failed lookups bypass the store for breakerPause:
	// a store that keeps failing costs each case nothing after the first few.
	breakerFailures = 3
	breakerPause    = 30 * time.Second
	// evictEvery is how many written answers pass between size checks.
	evictEvery = 256
)

// writeQueue is how many answers wait for the writer, and writeQueueBytes how many
// bytes of them (answer, id and a fixed recordOverhead each) until they are
// committed; past either, new ones are dropped (they will be measured again next
// time), so a slow disk never holds a case nor memory. An answer larger than
// writeQueueBytes is still taken when nothing else waits. (Variables for tests only.)
var (
	writeQueue      = 4096
	writeQueueBytes = int64(64 << 20)
)

// recordOverhead is what a queued Record costs besides its answer and id: its Meta's
// strings and the struct.
const recordOverhead = 512

func recordBytes(r Record) int64 { return int64(len(r.Answer) + len(r.ID) + recordOverhead) }

// touchAfter: a hit refreshes its row's use time only when that is older than this
// (a variable for tests only).
var touchAfter = 10 * time.Minute

// writerBusy is how long the writer waits for another process's write lock (a
// variable for tests only).
var writerBusy = 5 * time.Second

// Store is one open store file.
type Store struct {
	path  string
	opts  Options
	log   zerolog.Logger
	read  *sql.DB
	write *sql.DB // nil when read-only

	queue    chan Record
	touches  chan Key
	done     chan struct{}
	stopOnce sync.Once
	closeMu  sync.RWMutex // Put and touch hold it to read closed; Close to set it
	closed   bool

	hits, misses, writes, dropped, failures atomic.Int64
	unstable                                atomic.Int64 // keys this process marked unstable
	writeFailed                             atomic.Int64 // answers whose write failed (a full disk, an I/O error)
	buildMismatches                         atomic.Int64
	enqueued, processed                     atomic.Int64 // answers queued, and taken off the queue and committed or failed
	queuedBytes                             atomic.Int64 // recordBytes of the answers queued and not yet committed or failed
	entries                                 atomic.Int64 // counted at Open, then kept by commits and evictions
	bypassUntil                             atomic.Int64 // unix nanos; lookups skip the store before it

	holdWrite time.Duration // test hook: ORACLE_STORE_TEST_HOLD_WRITE (see writer)
	// stability: the file has the runs and unstable columns (migrate); false only
	// for a read-only open of a file no newer writer has opened.
	stability bool
}

// Record is one answer to store.
type Record struct {
	Meta   Meta
	ID     json.RawMessage // the id of the request that produced it, for export
	Answer []byte          // the engine's answer, JSON exactly as the response carries it
	// Runs is how many identical live runs Answer rests on (oracle --verify); 0 is 1.
	Runs int
	// Unstable lists the items Answer's runs differed on (compare's names); set, the
	// answer is stored as unstable.
	Unstable []string
}

func (r Record) runs() int64 { return int64(max(r.Runs, 1)) }

// DefaultPath is the store's file under the user's cache directory
// ($XDG_CACHE_HOME, else ~/.cache).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no $XDG_CACHE_HOME and no home directory: %w", err)
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "layout-oracle", "store.sqlite"), nil
}

func dsn(path string, busy time.Duration, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	if !readOnly {
		// WAL: readers never block the writer nor it them, and several processes can
		// share the file; a commit is atomic whatever kills the process.
		// synchronous=NORMAL in WAL loses at most the last commits on power loss,
		// never consistency; a kill -9 loses nothing committed.
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// readDSN is the lookups' connection: query-only, and for a read-only store (stats,
// export) one that never creates the file.
func readDSN(path string, readOnly bool) string {
	d := dsn(path, readerBusy, true)
	if readOnly {
		d += "&mode=ro"
	}
	return d
}

const schema = `
CREATE TABLE IF NOT EXISTS answers (
  key BLOB NOT NULL UNIQUE,
  format INTEGER NOT NULL,
  walk TEXT NOT NULL,
  environment TEXT NOT NULL,
  profile TEXT NOT NULL,
  engine TEXT NOT NULL,
  engine_version TEXT NOT NULL,
  route TEXT NOT NULL,
  op TEXT NOT NULL,
  case_hash TEXT NOT NULL,
  id BLOB NOT NULL,
  answer BLOB NOT NULL,
  sum BLOB NOT NULL,
  size INTEGER NOT NULL,
  created INTEGER NOT NULL,
  used INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_used ON answers(used);
-- runs and unstable are added by migrate: a file made before them gets them too.
CREATE INDEX IF NOT EXISTS answers_case ON answers(case_hash);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS builds (
  engine TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  engine_version TEXT NOT NULL,
  route TEXT NOT NULL,
  absent TEXT NOT NULL,
  seen INTEGER NOT NULL,
  PRIMARY KEY (engine, fingerprint)
);
`

// Open opens (creating when needed) the store at path. A file that is not a store,
// or cannot be opened, is an error: the caller serves without a store.
func Open(path string, opts Options, log zerolog.Logger) (*Store, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.LookupTimeout <= 0 {
		opts.LookupTimeout = DefaultLookupTimeout
	}
	s := &Store{path: path, opts: opts, log: log.With().Str("store", path).Logger(),
		queue: make(chan Record, writeQueue), touches: make(chan Key, writeQueue), done: make(chan struct{})}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("store directory: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*openBusy)
	defer cancel()
	var err error
	if !opts.ReadOnly {
		if s.write, err = sql.Open("sqlite", dsn(path, openBusy, false)); err != nil {
			return nil, err
		}
		s.write.SetMaxOpenConns(1)
		s.write.SetMaxIdleConns(1)
		s.write.SetConnMaxIdleTime(0)
		// The one writer connection waits openBusy for the schema, then writerBusy
		// for every write (it writes off the request path).
		if _, err = s.write.ExecContext(ctx, schema+fmt.Sprintf("PRAGMA busy_timeout=%d;", writerBusy.Milliseconds())); err != nil {
			s.write.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		if err = migrate(ctx, s.write); err != nil {
			s.write.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
	}
	if s.read, err = sql.Open("sqlite", readDSN(path, opts.ReadOnly)); err != nil {
		if s.write != nil {
			s.write.Close()
		}
		return nil, err
	}
	s.read.SetMaxOpenConns(8)
	var n int64
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM answers`).Scan(&n); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s.entries.Store(n)
	if s.stability, err = hasStability(ctx, s.read); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if d, err := time.ParseDuration(os.Getenv("ORACLE_STORE_TEST_HOLD_WRITE")); err == nil {
		s.holdWrite = d
	}
	if opts.ReadOnly {
		close(s.done)
	} else {
		go s.writer()
	}
	return s, nil
}

// stabilityColumns are added to the answers table of any file that lacks them
// (docs/store.md, "Stability"). Old rows read as resting on one run, stable, which
// is what the oracle that wrote them assumed. Format is not bumped: every stored
// answer stays valid, and an older oracle writing this file fills the defaults.
var stabilityColumns = []struct{ name, def string }{
	{"runs", "runs INTEGER NOT NULL DEFAULT 1"},
	{"unstable", "unstable TEXT NOT NULL DEFAULT ''"}, // '' stable, else a JSON array of items
}

// migrate adds the stability columns, in one write transaction so that two
// processes opening an old file at once do not both add them.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	have, err := columns(ctx, tx)
	if err != nil {
		return err
	}
	for _, c := range stabilityColumns {
		if !have[c.name] {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE answers ADD COLUMN `+c.def); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func columns(ctx context.Context, q querier) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM pragma_table_info('answers')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		have[n] = true
	}
	return have, rows.Err()
}

func hasStability(ctx context.Context, db *sql.DB) (bool, error) {
	have, err := columns(ctx, db)
	if err != nil {
		return false, err
	}
	for _, c := range stabilityColumns {
		if !have[c.name] {
			return false, nil
		}
	}
	return true, nil
}

// stabilitySelect is the runs and unstable columns to select: constants (one run,
// stable) in a file without them.
func (s *Store) stabilitySelect() string {
	if s.stability {
		return "runs, unstable"
	}
	return "1, ''"
}

// items decodes an unstable column: nil for a stable row; a list that does not
// decode is unstable as a whole.
func items(col string) []string {
	if col == "" {
		return nil
	}
	var out []string
	if json.Unmarshal([]byte(col), &out) != nil || len(out) == 0 {
		return []string{"*"}
	}
	return out
}

// itemsColumn encodes items for the unstable column.
func itemsColumn(items []string) string {
	if len(items) == 0 {
		return ""
	}
	b, _ := json.Marshal(items)
	return string(b)
}

// union is a's items then b's that a lacks.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, it := range b {
		if !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	return out
}

func (s *Store) closeDBs() {
	if s.write != nil {
		s.write.Close()
	}
	if s.read != nil {
		s.read.Close()
	}
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

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

// Lookup finds the stored stable answers of metas (LookupAnswers with MinRuns 1,
// leaving out unstable answers, which this result could not mark as such).
func (s *Store) Lookup(ctx context.Context, metas []Meta) map[Key][]byte {
	found := map[Key][]byte{}
	for k, a := range s.lookup(ctx, metas, LookupOptions{}, false) {
		found[k] = a.Answer
	}
	return found
}

// LookupAnswers finds the stored answers of metas that opt allows, at most
// LookupTimeout in all. A meta with no valid row, or whose row opt leaves out, is
// absent from the result and counted a miss; so is every meta when the store fails
// or is slow (logged), since a miss only costs a live answer.
func (s *Store) LookupAnswers(ctx context.Context, metas []Meta, opt LookupOptions) map[Key]Answer {
	return s.lookup(ctx, metas, opt, true)
}

func (s *Store) lookup(ctx context.Context, metas []Meta, opt LookupOptions, withUnstable bool) map[Key]Answer {
	found := map[Key]Answer{}
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
		return map[Key]Answer{}
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
func (s *Store) getAll(ctx context.Context, metas []Meta) (map[Key]Answer, error) {
	want := make(map[Key]Meta, len(metas))
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
	found := map[Key]Answer{}
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
		var k Key
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
func (s *Store) touch(k Key) {
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
		var touched []Key
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
func (s *Store) commit(batch []Record, touched []Key, failed int64) error {
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
func (s *Store) merge(ctx context.Context, tx *sql.Tx, k Key, r Record, now int64) (merged bool, err error) {
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

func (s *Store) unstableKeys(ctx context.Context) ([]UnstableKey, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT key, engine, engine_version, op, case_hash, runs, unstable FROM answers
		WHERE unstable != '' ORDER BY used DESC, rowid LIMIT ?`, maxListedUnstable)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UnstableKey
	for rows.Next() {
		var u UnstableKey
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
	UnstableKeys []UnstableKey `json:"unstable_keys,omitempty"`
}

// UnstableKey is one unstable stored answer, as `oracle store stats` lists it.
type UnstableKey struct {
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
