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
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// caseKey is a row's primary key: SHA-256 of Meta's canonical JSON.
type caseKey [32]byte

// KeyOf hashes m.
func KeyOf(m Meta) caseKey {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // a struct of strings and an int always encodes
	}
	return sha256.Sum256(b)
}

func (k caseKey) String() string { return hex.EncodeToString(k[:]) }

// Options configure Open.
type Options struct {
	// MaxBytes bounds the database's used pages; past it the least recently used
	// answers are evicted. 0 means defaultMaxBytes.
	MaxBytes int64
	// LookupTimeout bounds one lookup (all engines of one request); 0 means
	// defaultLookupTimeout. A lookup that takes longer is a miss.
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
	defaultMaxBytes      = 4 << 30
	defaultLookupTimeout = 500 * time.Millisecond
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
	touches  chan caseKey
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
		opts.MaxBytes = defaultMaxBytes
	}
	if opts.LookupTimeout <= 0 {
		opts.LookupTimeout = defaultLookupTimeout
	}
	s := &Store{path: path, opts: opts, log: log.With().Str("store", path).Logger(),
		queue: make(chan Record, writeQueue), touches: make(chan caseKey, writeQueue), done: make(chan struct{})}
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
