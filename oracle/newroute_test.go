package oracle_test

// A throw-away route, "cdp-twin", written here as a new route of the tree is written
// in its package (a type that implements browser.Route) and added with one row of the
// table. Everything the oracle does that depends on a route reads the row: the
// --chromium-route flag's help and validation, the launch, the build fingerprint and
// the store key's hash of the route's own in-page programs. It drives Chromium with
// the CDP route's launch, so the test needs no engine of its own.

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/oracle/buildprint"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twin is the whole route: the CDP route's launch under a name, help and programs
// of its own, counting its launches.
type twin struct {
	browser.Route
	launches *atomic.Int32
}

func (twin) Name() string { return "cdp-twin" }
func (twin) Help() string { return "the CDP route under a second name, for a test" }
func (twin) Programs() fs.FS {
	return fstest.MapFS{"inpage/twin.js": &fstest.MapFile{Data: []byte("document.title")}}
}

func (r twin) Launch(ctx context.Context, engine string, l browser.RouteLaunch, log zerolog.Logger) (browser.Engine, error) {
	r.launches.Add(1)
	return r.Route.Launch(ctx, engine, l, log)
}

// A route written in one place and added as one row of the table is offered by the
// engine's route flag, validated, fingerprinted, hashed into the store key and
// launched, with no edit anywhere else.
func TestANewRouteIsOnePackageAndATableRow(t *testing.T) {
	cdp := routes.Table.Named("cdp")
	require.NotNil(t, cdp, "the table has the CDP route")
	route := twin{Route: cdp, launches: &atomic.Int32{}}
	table := append(slices.Clone(routes.Table), route)

	assert.Contains(t, table.FlagHelp(browser.Chromium), "cdp-twin (the CDP route under a second name, for a test)")
	assert.NotContains(t, routes.Table.FlagHelp(browser.Chromium), "cdp-twin")
	got, err := table.Resolve(browser.Chromium, "cdp-twin", false)
	require.NoError(t, err)
	assert.Equal(t, "cdp-twin", got.Name())
	_, err = routes.Table.Resolve(browser.Chromium, "cdp-twin", false)
	assert.ErrorContains(t, err, `unknown --chromium-route "cdp-twin"`)
	_, err = oracle.Launch(context.Background(), oracle.Config{Routes: routes.Table, Engines: []string{browser.Chromium},
		EngineRoutes: map[string]string{browser.Chromium: "cdp-twin"}}, zerolog.Nop())
	assert.ErrorContains(t, err, `unknown --chromium-route "cdp-twin"`, "the table without the row refuses it")

	walk, _ := oracle.StoreVersions("default", table)
	before, _ := oracle.StoreVersions("default", routes.Table)
	assert.NotEqual(t, before, walk, "the row's own programs enter the store key")

	testutil.NeedsBrowsers(t)
	print, ok := buildprint.Of(buildprint.Launch{Engine: browser.Chromium, Browsers: browser.RouteSystem, Route: route, Bundler: table.Bundler()})
	require.True(t, ok, "a fingerprint of the build the row launches")
	assert.Len(t, print, 64)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o, err := oracle.Launch(ctx, oracle.Config{Routes: table, Engines: []string{browser.Chromium}, Pages: 1,
		EngineRoutes: map[string]string{browser.Chromium: "cdp-twin"}}, testutil.Logger(t))
	require.NoError(t, err)
	defer o.Close()
	var out strings.Builder
	require.NoError(t, o.Serve(ctx, strings.NewReader(`{"id":"c","html":"<div style='width:30px;height:20px'></div>"}`+"\n"), &out))
	assert.Contains(t, out.String(), `{"id":"c","dumps":{"chromium":{`, "answered over the new row")
	assert.Equal(t, int32(1), route.launches.Load(), "the page was launched by the row")
}
