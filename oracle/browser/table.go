package browser

// The route table's rows as the oracle reads them. Each route package (cdp, bidi,
// webdriver, playwright) exports one Route, and package routes lists them, once each
// (wptrunner's product files are the model). Everything the oracle does that depends
// on a route reads the table: the --ENGINE-route flags, their help and validation,
// the launch of a page, the build fingerprint and the endpoint protocols. So a new
// route is its package and a row of the table.

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/rs/zerolog"
)

// Route is one way of driving a page of an engine, as the route table names it.
type Route interface {
	// Name is the route's name: a value of --ENGINE-route, and the protocol of a
	// remote endpoint it connects to.
	Name() string
	// Engines are the engines whose system build the route drives.
	Engines() []string
	// Help says what the route is, for --ENGINE-route's help.
	Help() string
	// Emulates says whether the route applies a launch profile's emulated hardware.
	Emulates() bool
	// Launch launches one page of engine's system build (or l.Exe) over the route.
	Launch(ctx context.Context, engine string, l RouteLaunch, log zerolog.Logger) (Engine, error)
	// BuildFiles are the files whose identity is the build a launch of engine runs
	// over the route (exe: the binary override, "": the system build); ok is false
	// where no sound list is known (a script could run anything, a missing file).
	BuildFiles(engine, exe string) (files []string, ok bool)
	// Programs are the in-page programs the route keeps beside its code (its
	// embedded inpage/ folder), nil for none: the store's key hashes them with
	// package inpage's, so an edit of one makes the answers stored before it miss.
	Programs() fs.FS
}

// RouteLaunch is what one launch of a page over a route is given.
type RouteLaunch struct {
	Exe      string // the engine's binary override; "": the system build
	Absent   string // BundledAbsent's path, when the auto route found no bundled build
	Settings LaunchSettings
}

// A Bundler is a route that also runs builds of its own, installed beside it
// (Playwright's), which --browsers chooses: RoutePlaywright, or RouteAuto where
// installed.
type Bundler interface {
	Route
	// LaunchBundled launches one page of engine under --browsers (RoutePlaywright,
	// or RouteAuto with no binary override): the bundled build where browsers says
	// so or, under auto, where it is installed; else the system build over route
	// (the engine's resolved route, which may be the Bundler itself), with the path
	// where the bundled build was looked for as BundledAbsent.
	LaunchBundled(ctx context.Context, engine, browsers string, route Route, l RouteLaunch, log zerolog.Logger) (Engine, error)
	// AutoRoute is the --browsers route the auto choice takes for engine, once for
	// every page: RoutePlaywright when its bundled build is installed, else
	// RouteSystem and where it was looked for; RouteAuto leaves the choice to each
	// page, which reports why.
	AutoRoute(engine string, log zerolog.Logger) (route, absent string)
	// LookupPrint is what decides where a bundled build is looked for (its version,
	// the environment it reads), for the build fingerprint of an auto launch.
	LookupPrint() string
	// Install installs what the route runs (`oracle install-driver`).
	Install(log zerolog.Logger) error
}

// A Connector is a route that also opens pages on remote endpoints; an endpoint's
// protocol is the route's Name.
type Connector interface {
	Route
	Connect(ctx context.Context, engine string, r RemoteLaunch, log zerolog.Logger) (Engine, error)
}

// RemoteLaunch is what a page on a remote endpoint is opened with: the launch
// settings every engine of the oracle gets and, for a server that launches its own
// browsers, the --browsers route, the engine's binary override and the proxy the
// browser is told to use.
type RemoteLaunch struct {
	URL      string
	Settings LaunchSettings
	Browsers string // --browsers
	Exe      string // the endpoint's engine's binary override, or ""
	Proxy    string // host:port of the oracle's origin
}

// Routes is the route table: its rows in the order auto chooses among them.
type Routes []Route

// RouteAutoChoice is the value of --ENGINE-route that lets the table choose: the
// first row that drives the engine, or, under a launch profile that emulates
// hardware, the first that also applies it.
const RouteAutoChoice = "auto"

// rowsFor is the rows that drive engine's system build, in the table's order.
func (t Routes) rowsFor(engine string) []Route {
	var out []Route
	for _, r := range t {
		if slices.Contains(r.Engines(), engine) {
			out = append(out, r)
		}
	}
	return out
}

// Named is the row called name, or nil.
func (t Routes) Named(name string) Route {
	for _, r := range t {
		if r.Name() == name {
			return r
		}
	}
	return nil
}

// Bundler is the table's Bundler row, or nil.
func (t Routes) Bundler() Bundler {
	for _, r := range t {
		if b, ok := r.(Bundler); ok {
			return b
		}
	}
	return nil
}

// Choosable are the engines with more than one row, each of which gets a
// --ENGINE-route flag.
func (t Routes) Choosable() []string {
	var out []string
	for _, e := range AllEngines {
		if len(t.rowsFor(e)) > 1 {
			out = append(out, e)
		}
	}
	return out
}

// FlagHelp is --ENGINE-route's help for engine, read from its rows.
func (t Routes) FlagHelp(engine string) string {
	rows := t.rowsFor(engine)
	var parts []string
	for _, r := range rows {
		parts = append(parts, r.Name()+" ("+r.Help()+")")
	}
	help := fmt.Sprintf("how the system %s is driven: %s, or %s: %s", engine, strings.Join(parts, ", "), RouteAutoChoice, rows[0].Name())
	if i := slices.IndexFunc(rows, Route.Emulates); i > 0 {
		help += ", except under a launch profile that emulates hardware, which only the " + rows[i].Name() + " route applies"
	}
	if b := t.Bundler(); b != nil {
		help += ". Bundled builds are always " + b.Name() + "'s"
	}
	return help
}

// Resolve is engine's route by its --ENGINE-route value choice ("" is
// RouteAutoChoice) under a launch profile that emulates hardware or not; nil where
// no row drives engine's system build.
func (t Routes) Resolve(engine, choice string, emulates bool) (Route, error) {
	rows := t.rowsFor(engine)
	if choice == "" || choice == RouteAutoChoice {
		if len(rows) == 0 {
			return nil, nil
		}
		if i := slices.IndexFunc(rows, Route.Emulates); emulates && i >= 0 {
			return rows[i], nil
		}
		return rows[0], nil
	}
	for _, r := range rows {
		if r.Name() == choice {
			return r, nil
		}
	}
	known := []string{RouteAutoChoice}
	for _, r := range rows {
		known = append(known, r.Name())
	}
	return nil, fmt.Errorf("unknown --%s-route %q (known: %s)", engine, choice, strings.Join(known, ", "))
}

// Launch launches one page of engine under --browsers over route (the engine's
// resolved route; nil: none drives its system build): the system build (or l.Exe)
// over route, or, where browsers lets the table's Bundler choose, through it.
func (t Routes) Launch(ctx context.Context, engine, browsers string, route Route, l RouteLaunch, log zerolog.Logger) (Engine, error) {
	b := t.Bundler()
	if b != nil && browsers != RouteSystem && (l.Exe == "" || route == nil) {
		return b.LaunchBundled(ctx, engine, browsers, route, l, log)
	}
	if route == nil {
		return nil, EngineErrorf(engine, "no route of the table drives its system build")
	}
	return route.Launch(ctx, engine, l, log)
}
