package routes

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/bidi"
	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/buildprint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// routePackages are the packages of the table's rows: the route packages.
func routePackages() []string {
	var out []string
	for _, r := range Table {
		out = append(out, reflect.TypeOf(r).PkgPath())
	}
	return out
}

// goList runs `go list` with args from the module's root.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list %v", args)
	return strings.Fields(string(out))
}

// A new route is its package and a row of Table: nothing else of the oracle imports
// a route. A unit test of the import graph (`go list`, no browser): the oracle, its
// pools, its build fingerprint and its remote endpoints depend on no route package,
// not even through another package, and the oracle's program imports the table,
// never a route.
func TestOnlyTheTableImportsARoute(t *testing.T) {
	routes := routePackages()
	require.Len(t, routes, len(Table))
	for _, pkg := range []string{"./oracle", "./oracle/buildprint", "./oracle/remote", "./oracle/pool"} {
		deps := goList(t, "-deps", pkg)
		require.NotEmpty(t, deps)
		for _, dep := range deps {
			assert.NotContains(t, routes, dep, "%s depends on a route package", pkg)
		}
	}
	imports := goList(t, "-f", `{{join .Imports " "}}`, "./cmd/oracle")
	for _, imp := range imports {
		assert.NotContains(t, routes, imp, "cmd/oracle imports a route package")
	}
	assert.Contains(t, imports, "github.com/layout-oracle/oracle/oracle/browser/routes", "cmd/oracle wires the table")
}

// Every row carries what the oracle reads from it, so that its row is all a new
// route needs: a unique name, the engines it drives, its help in its engines'
// --ENGINE-route flag, the flag's validation choosing it by name, and the files of
// its build fingerprint. A unit test of the table (no browser; the fingerprint of a
// system build is checked where that build is installed).
func TestEveryRowHasItsFlagValidationAndFingerprint(t *testing.T) {
	names := map[string]bool{}
	for _, r := range Table {
		require.NotEmpty(t, r.Name())
		assert.False(t, names[r.Name()], "route %s named twice", r.Name())
		names[r.Name()] = true
		assert.NotEmpty(t, r.Help(), r.Name())
		require.NotEmpty(t, r.Engines(), r.Name())
		for _, e := range r.Engines() {
			require.Contains(t, browser.AllEngines, e, r.Name())
			if slices.Contains(Table.Choosable(), e) {
				assert.Contains(t, Table.FlagHelp(e), r.Name()+" ("+r.Help()+")", "--%s-route's help names %s", e, r.Name())
			}
			got, err := Table.Resolve(e, r.Name(), false)
			require.NoError(t, err)
			assert.Equal(t, r.Name(), got.Name(), "--%s-route=%s", e, r.Name())

			files, ok := r.BuildFiles(e, "")
			if _, err := os.Stat(files[0]); !ok && err != nil {
				t.Logf("%s on %s: %s is not installed here: no fingerprint to check", e, r.Name(), files[0])
				continue
			}
			require.True(t, ok, "%s on %s: build files %v", e, r.Name(), files)
			print, ok := buildprint.Of(buildprint.Launch{Engine: e, Browsers: browser.RouteSystem, Route: r, Bundler: Table.Bundler()})
			require.True(t, ok, "%s on %s: a fingerprint", e, r.Name())
			assert.Len(t, print, 64)
		}
	}
	for _, e := range browser.AllEngines {
		r, err := Table.Resolve(e, "", false)
		require.NoError(t, err)
		require.NotNil(t, r, "a route drives %s", e)
		_, err = Table.Resolve(e, "no-such-route", false)
		assert.ErrorContains(t, err, "unknown --"+e+"-route \"no-such-route\"")
	}
	_, err := Table.Resolve(browser.Chromium, "", true)
	require.NoError(t, err)
	emulating, _ := Table.Resolve(browser.Chromium, browser.RouteAutoChoice, true)
	assert.True(t, emulating.Emulates(), "auto under an emulating profile takes a route that emulates")
	require.NotNil(t, Table.Bundler(), "the bundled builds have a row")
	connectors := 0
	for _, r := range Table {
		if _, ok := r.(browser.Connector); ok {
			connectors++
		}
	}
	assert.NotZero(t, connectors, "remote endpoints have rows")
}

// A unit test of our own code (no browser): NoBundledBuilds reads the directory
// Playwright installs its builds in, and defers to the driver where
// PLAYWRIGHT_BROWSERS_PATH names another.
func TestNoBundledBuildsReadsPlaywrightsDirectory(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("PLAYWRIGHT_BROWSERS_PATH", "")
	dir, none := playwright.NoBundledBuilds()
	assert.Equal(t, filepath.Join(cache, "ms-playwright"), dir)
	assert.True(t, none)

	route, absent := Table.Bundler().AutoRoute(browser.WebKit, testutil.Logger(t))
	assert.Equal(t, browser.RouteSystem, route, "no bundled WebKit can be installed")
	assert.Equal(t, dir, absent)

	t.Setenv("PLAYWRIGHT_BROWSERS_PATH", "0")
	_, none = playwright.NoBundledBuilds()
	assert.False(t, none, "with PLAYWRIGHT_BROWSERS_PATH set, only the driver knows")
}

// Where Playwright's builds directory does not exist, no bundled build can be, and
// the auto route takes the own route with no driver started to look: the page's
// BundledAbsent is that directory, not a build's path inside it (which only a
// driver knows). Against the real Firefox.
func TestTheAutoRouteStartsNoDriverOnlyToLook(t *testing.T) {
	testutil.NeedsBrowsers(t)
	dir, none := playwright.NoBundledBuilds()
	if !none {
		t.Skipf("Playwright's builds directory %q exists here: the driver is asked", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := Table.Launch(ctx, browser.Firefox, browser.RouteAuto, bidi.Route, browser.RouteLaunch{}, testutil.Logger(t))
	require.NoError(t, err)
	defer e.Close()
	assert.Contains(t, e.Route(), "WebDriver BiDi (oracle's own client)")
	assert.Equal(t, dir, browser.BundledAbsent(e))
}

// Every file a route embeds as its own programs is one its package reads by name: a
// file nothing reads is a dead program, or one run from somewhere else.
func TestEveryRouteProgramIsRead(t *testing.T) {
	for _, r := range Table {
		programs := r.Programs()
		if programs == nil {
			continue
		}
		dir := filepath.Join("..", path.Base(reflect.TypeOf(r).PkgPath()))
		sources, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		var src strings.Builder
		for _, f := range sources {
			if !strings.HasSuffix(f, "_test.go") {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				src.Write(b)
			}
		}
		files, err := fs.Glob(programs, "inpage/*")
		require.NoError(t, err)
		require.NotEmpty(t, files, "%s's Programs has no inpage/ files", r.Name())
		for _, name := range files {
			assert.True(t, strings.Contains(src.String(), strconv.Quote(name)), "%s embeds %s but its package does not read it", r.Name(), name)
		}
	}
}
