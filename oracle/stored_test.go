package oracle

// Unit tests of the store key (no browser): which request fields enter it, and that
// the encoding is canonical. The store itself against the real engines is tested in
// cmd/oracle/store_test.go.

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/store"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every field of Request is classified for the store key. A new field (the docroot
// work's "url", say) fails this test until someone decides whether it changes the
// answer (keyedFields), does not (unkeyedFields), or makes the answer unstorable
// (unstoredFields). Until then caseEncoding keys on it, so nothing wrong is served.
func TestStoreKeyCoversEveryRequestField(t *testing.T) {
	typ := reflect.TypeOf(Request{})
	for i := 0; i < typ.NumField(); i++ {
		name := typ.Field(i).Name
		n := 0
		for _, list := range [][]string{keyedFields, unkeyedFields, unstoredFields} {
			if contains(list, name) {
				n++
			}
		}
		assert.Equal(t, 1, n, "Request.%s must be named in exactly one of keyedFields, unkeyedFields, unstoredFields (oracle/stored.go): does it change an engine's answer?", name)
	}
	for _, list := range [][]string{keyedFields, unkeyedFields} {
		for _, name := range list {
			_, ok := typ.FieldByName(name)
			assert.True(t, ok, "%s is classified but Request has no such field", name)
		}
	}
}

func parse(t *testing.T, line string) *Request {
	t.Helper()
	req, _, err := ParseRequest([]byte(line))
	require.NoError(t, err, line)
	return req
}

func hashOf(t *testing.T, line string) string {
	t.Helper()
	h, ok := caseHash(parse(t, line))
	require.True(t, ok, line)
	return h
}

// Two spellings of one request are one case; the id and the engines named are not
// part of it (except a trace's id, its page's title).
func TestCaseHashIsCanonical(t *testing.T) {
	base := hashOf(t, `{"id":"a","html":"<p>x</p>","script":"1"}`)
	assert.Equal(t, base, hashOf(t, `{ "script" : "\u0031", "html":"<p>x<\/p>", "id": 7, "engines":["webkit"] }`))
	assert.NotEqual(t, base, hashOf(t, `{"id":"a","html":"<p>x</p>","script":"2"}`), "script")
	assert.NotEqual(t, base, hashOf(t, `{"id":"a","html":"<p>y</p>","script":"1"}`), "html")
	assert.NotEqual(t, base, hashOf(t, `{"id":"a","html":"<p>x</p>"}`), "no script")

	r := `{"id":"r","op":"reflect","html":"<input id=a>","probes":[{"selector":"#a","attr":"value"}]}`
	assert.NotEqual(t, hashOf(t, r), hashOf(t, `{"id":"r","op":"reflect","html":"<input id=a>","probes":[{"selector":"#a","attr":"max"}]}`), "probes")
	assert.NotEqual(t, hashOf(t, r), hashOf(t, `{"id":"r","op":"reflect","html":"<input id=a>","probes":[{"selector":"#a","attr":"value","idl":"defaultValue"}]}`), "probe idl")

	tr := `{"id":"t1","op":"trace","script":"trace.done()"}`
	assert.NotEqual(t, hashOf(t, tr), hashOf(t, `{"id":"t2","op":"trace","script":"trace.done()"}`), "a trace's id is its page's title")
	assert.NotEqual(t, hashOf(t, `{"id":"a","op":"trace","html":"<p>","script":"1"}`), hashOf(t, `{"id":"a","html":"<p>","script":"1"}`), "op")
}

// Every part of the key changes it: the case, the engine build, the route, the
// profile, the walk, the environment.
func TestStoreKeyNamesTheEngineBuildAndEverythingElse(t *testing.T) {
	base := store.Meta{Format: store.Format, Walk: walkKey(routes.Table), Environment: environmentKey(), Profile: "default",
		Engine: browser.Chromium, EngineVersion: "1.0", Route: "r", Op: "geometry", Case: "c"}
	k := store.KeyOf(base)
	for name, change := range map[string]func(*store.Meta){
		"format":         func(m *store.Meta) { m.Format++ },
		"walk":           func(m *store.Meta) { m.Walk += "x" },
		"environment":    func(m *store.Meta) { m.Environment += "x" },
		"profile":        func(m *store.Meta) { m.Profile = "media" },
		"engine":         func(m *store.Meta) { m.Engine = browser.Firefox },
		"engine_version": func(m *store.Meta) { m.EngineVersion = "1.0.1" },
		"route":          func(m *store.Meta) { m.Route = "r2" },
		"op":             func(m *store.Meta) { m.Op = "reflect" },
		"case":           func(m *store.Meta) { m.Case = "d" },
	} {
		m := base
		change(&m)
		assert.NotEqual(t, k, store.KeyOf(m), name)
	}
	assert.Regexp(t, `^walk-`+walkVersion+`/[0-9a-f]{16}$`, walkKey(routes.Table))
	assert.Regexp(t, `^pinned-`+environment.Version+`/[0-9a-f]{16}$`, environmentKey())
}

// editedPrograms is a route whose own in-page programs are fsys.
type editedPrograms struct {
	browser.Route
	fsys fs.FS
}

func (r editedPrograms) Programs() fs.FS { return r.fsys }

// A route's own in-page programs enter the walk key as inpage's do: an edit of any
// one makes the answers stored before it miss.
func TestWalkKeyHashesEveryRoutesPrograms(t *testing.T) {
	base := walkKey(routes.Table)
	assert.Equal(t, base, walkKey(slices.Clone(routes.Table)))
	edited := 0
	for i, r := range routes.Table {
		if r.Programs() == nil {
			continue
		}
		files, err := fs.Glob(r.Programs(), "inpage/*.js")
		require.NoError(t, err)
		require.NotEmpty(t, files, r.Name())
		for _, name := range files {
			m := fstest.MapFS{}
			for _, f := range files {
				b, err := fs.ReadFile(r.Programs(), f)
				require.NoError(t, err)
				if f == name {
					b = append([]byte(" "), b...)
				}
				m[f] = &fstest.MapFile{Data: b}
			}
			table := slices.Clone(routes.Table)
			table[i] = editedPrograms{r, m}
			assert.NotEqual(t, base, walkKey(table), "%s's %s edited", r.Name(), name)
			edited++
		}
	}
	assert.NotZero(t, edited, "no route keeps programs of its own")
}

// The default profile's keys are those from before profiles were hashed; any other
// profile's environment part names it and changes with its definition.
func TestStoreKeyHashesTheProfilesDefinition(t *testing.T) {
	assert.Equal(t, environmentKey(), profileEnvironment("default"))
	media := profileEnvironment("media")
	assert.Regexp(t, `^pinned-`+environment.Version+`/[0-9a-f]{16}\+media-[0-9a-f]{12}$`, media)
	assert.NotEqual(t, media, profileEnvironment("emulation"))
	saved := profiles.FixedEmulation.Geolocation
	defer func() { profiles.FixedEmulation.Geolocation = saved }()
	before := profileEnvironment("emulation")
	profiles.FixedEmulation.Geolocation.Latitude++
	assert.NotEqual(t, before, profileEnvironment("emulation"), "an emulated value changed")
}

// A stored answer written out raw (Serve) and decoded (Handle for library callers)
// encodes to the same bytes as the live answer, plus "stored". Unit test with the
// stand-in engines of protocol_test.go (no browser); the real engines' byte identity
// is cmd/oracle's TestRerunIsAnsweredFromTheStoreByteForByte.
func TestStoredAnswerEncodesLikeTheLiveOne(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{}, zerolog.Nop())
	require.NoError(t, err)
	defer st.Close()
	o := fakeOracle(&fakeEngine{name: browser.Chromium}, &fakeEngine{name: browser.WebKit})
	o.store = st
	req := parse(t, `{"id":"a","html":"<p>"}`)
	live, err := json.Marshal(o.Handle(context.Background(), req))
	require.NoError(t, err)
	assert.NotContains(t, string(live), "stored")
	st.Flush(10 * time.Second)

	want := strings.TrimSuffix(string(live), "}") + `,"stored":["chromium","webkit"]}`
	for name, ctx := range map[string]context.Context{"wire": forTheWire(context.Background()), "decoded": context.Background()} {
		resp := o.Handle(ctx, req).(geometryResponse)
		got, err := json.Marshal(resp)
		require.NoError(t, err)
		assert.Equal(t, want, string(got), name)
		if name == "decoded" {
			assert.Len(t, resp.Answers, 2, "library callers get the stored dumps decoded")
		}
	}
	// A partial hit mixes a live and a raw stored answer, keys still in order.
	o2 := fakeOracle(&fakeEngine{name: browser.Chromium}, &fakeEngine{name: browser.Firefox}, &fakeEngine{name: browser.WebKit})
	o2.store = st
	got, err := json.Marshal(o2.Handle(forTheWire(context.Background()), req))
	require.NoError(t, err)
	assert.Regexp(t, `^\{"id":"a","dumps":\{"chromium":\{.*\},"firefox":\{.*\},"webkit":\{.*\}\},"stored":\["chromium","webkit"\]\}$`, string(got))
}

// An engine still starting whose build is known from its fingerprint record
// (warmstart.go) has its stored answers served before it is up; under another
// recorded build nothing is served and the case waits for the engine. Unit test with
// the stand-in engines of protocol_test.go (no browser); the real engines' warm start
// is cmd/oracle's warmstart_test.go.
func TestAKnownBuildIsServedWhileItsEngineStarts(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{}, zerolog.Nop())
	require.NoError(t, err)
	defer st.Close()
	o := fakeOracle(&fakeEngine{name: browser.Firefox})
	o.store = st
	req := parse(t, `{"id":"a","html":"<p>","engines":["firefox"]}`)
	live, err := json.Marshal(o.Handle(context.Background(), req))
	require.NoError(t, err)
	st.Flush(10 * time.Second)

	starting := func(b engineBuild) *Oracle {
		o := fakeOracle()
		o.store, o.failed = st, map[string]string{}
		o.starting = map[string]chan struct{}{browser.Firefox: make(chan struct{})} // never decided
		o.predicted = map[string]engineBuild{browser.Firefox: b}
		return o
	}
	ctx, cancel := context.WithTimeout(forTheWire(context.Background()), 2*time.Second)
	defer cancel()
	got, err := json.Marshal(starting(engineBuild{"0.0-fake", "fake"}).Handle(ctx, req))
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSuffix(string(live), "}")+`,"stored":["firefox"]}`, string(got), "served before the engine is up")

	ctx, cancel = context.WithTimeout(forTheWire(context.Background()), 300*time.Millisecond)
	defer cancel()
	resp := starting(engineBuild{"0.1-other", "fake"}).Handle(ctx, req).(geometryResponse)
	assert.Empty(t, resp.Stored, "an answer of another build is never served")
	assert.Contains(t, resp.Errors[browser.Firefox], "still starting", "it waited for the live engine")
}
