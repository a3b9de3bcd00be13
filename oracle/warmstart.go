package oracle

// Warm starts (docs/store.md, "Warm starts"): an engine's build is known before its
// browser is up, from a fingerprint of the files the launch will run, recorded in the
// store with the build the last live launch on those files reported. Stored answers
// of that build are then served while the engine still launches.

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/buildprint"
	"github.com/layout-oracle/oracle/store"
)

// buildPrint is the fingerprint of name's local launch under cfg (buildprint.Of);
// an engine with remote endpoints has none.
func buildPrint(cfg Config, name string) (print string, ok bool) {
	if len(cfg.endpointsFor(name)) > 0 {
		return "", false
	}
	route, err := cfg.routeOf(name)
	if err != nil {
		return "", false
	}
	return buildprint.Of(buildprint.Launch{Engine: name, Browsers: cfg.Browsers, Exe: cfg.executablePath(name), Route: route, Bundler: cfg.Routes.Bundler()})
}

// predictBuilds looks up, for every local engine, the build recorded for its
// fingerprint; a record whose Absent path now exists (a bundled build was installed:
// the auto route would launch it) is not used. Run before any engine starts.
func (o *Oracle) predictBuilds(ctx context.Context, cfg Config, names []string) {
	if o.store == nil {
		return
	}
	for _, name := range names {
		fp, ok := buildPrint(cfg, name)
		if !ok {
			o.log.Debug().Str("engine", name).Msg("no build fingerprint for this route: stored answers wait for the live engine")
			continue
		}
		o.prints[name] = fp
		rec, found, err := o.store.LookupBuild(ctx, name, fp)
		switch {
		case err != nil:
			o.log.Warn().Str("engine", name).Err(err).Msg("store: build lookup failed; stored answers wait for the live engine")
			continue
		case !found:
			continue
		}
		if rec.Absent != "" {
			if _, err := os.Stat(rec.Absent); !errors.Is(err, fs.ErrNotExist) {
				o.log.Info().Str("engine", name).Str("bundled", rec.Absent).Msg("a bundled build may now be installed: stored answers wait for the live engine")
				continue
			}
		}
		o.predicted[name] = engineBuild{rec.Version, rec.Route}
		o.log.Info().Str("engine", name).Str("version", rec.Version).Str("route", rec.Route).
			Msg("build known from its fingerprint: stored answers served while it launches")
	}
}

// settleBuild compares the build name's live launch reported with the one its
// fingerprint predicted, and records it for the next start. A contradiction is logged
// as an error, counted (ping's store.build_mismatches) and its record dropped.
func (o *Oracle) settleBuild(ctx context.Context, name string, cfg Config, live engineBuild, absent string) {
	fp, ok := o.prints[name]
	if !ok {
		return
	}
	o.stateMu.Lock()
	pred, had := o.predicted[name]
	delete(o.predicted, name)
	o.stateMu.Unlock()
	if had && pred != live {
		o.log.Error().Str("engine", name).Str("recorded_version", pred.version).Str("recorded_route", pred.route).
			Str("version", live.version).Str("route", live.route).
			Msg("the live engine is not the build its fingerprint recorded: answers stored for the recorded build may have been served for it; record dropped")
		if err := o.store.BuildMismatch(ctx, name, fp); err != nil {
			o.log.Warn().Str("engine", name).Err(err).Msg("store: dropping the build record failed")
		}
	}
	if cfg.Browsers == browser.RouteAuto && cfg.executablePath(name) == "" && absent == "" {
		return // the auto route launched a bundled build: not fingerprinted
	}
	if now, ok := buildPrint(cfg, name); !ok || now != fp {
		o.log.Warn().Str("engine", name).Msg("the engine's files changed while it launched; its build is not recorded")
		return
	}
	if had && pred == live {
		return // already recorded
	}
	if err := o.store.PutBuild(ctx, store.Build{Engine: name, Fingerprint: fp, Version: live.version, Route: live.route, Absent: absent}); err != nil {
		o.log.Warn().Str("engine", name).Err(err).Msg("store: recording the build failed")
	}
}
