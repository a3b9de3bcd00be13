package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Build is what an engine's live launch reported (its version and route), recorded
// under a fingerprint of what that launch ran (oracle/buildprint): the files its
// build comes from and the settings that chose them. A later oracle whose fingerprint
// matches knows the build before its engine is up, and serves stored answers of that
// build at once (docs/store.md, "Warm starts").
type Build struct {
	Engine      string
	Fingerprint string
	Version     string
	Route       string
	// Absent, when not "", is a path that did not exist at that launch and must not
	// exist for the record to hold: Playwright's bundled build, which the auto route
	// would launch instead of the system one.
	Absent string
}

// buildTimeout bounds one build lookup or write; they run at startup, off the
// request path.
const buildTimeout = 2 * time.Second

// LookupBuild is the build recorded for engine's fingerprint.
func (s *Store) LookupBuild(ctx context.Context, engine, fingerprint string) (Build, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	b := Build{Engine: engine, Fingerprint: fingerprint}
	err := s.read.QueryRowContext(ctx, `SELECT engine_version, route, absent FROM builds WHERE engine = ? AND fingerprint = ?`,
		engine, fingerprint).Scan(&b.Version, &b.Route, &b.Absent)
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	return b, err == nil, err
}

// PutBuild records b (replacing the record of its engine and fingerprint).
func (s *Store) PutBuild(ctx context.Context, b Build) error {
	if s.write == nil {
		return errors.New("store opened read-only")
	}
	ctx, cancel := context.WithTimeout(ctx, buildTimeout+writerBusy)
	defer cancel()
	_, err := s.write.ExecContext(ctx, `INSERT OR REPLACE INTO builds (engine, fingerprint, engine_version, route, absent, seen) VALUES (?, ?, ?, ?, ?, ?)`,
		b.Engine, b.Fingerprint, b.Version, b.Route, b.Absent, time.Now().Unix())
	return err
}

// BuildMismatch drops the record of engine's fingerprint, whose build a live launch
// contradicted, and counts it (Stats.BuildMismatches).
func (s *Store) BuildMismatch(ctx context.Context, engine, fingerprint string) error {
	s.buildMismatches.Add(1)
	if s.write == nil {
		return errors.New("store opened read-only")
	}
	ctx, cancel := context.WithTimeout(ctx, buildTimeout+writerBusy)
	defer cancel()
	_, err := s.write.ExecContext(ctx, `DELETE FROM builds WHERE engine = ? AND fingerprint = ?`, engine, fingerprint)
	return err
}
