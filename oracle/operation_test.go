package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/kinds/kindstest"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// titleAnswer is the answer of titleKind, a request kind that exists only in tests:
// each engine's document.title after the case's script.
type titleAnswer = kindstest.TitleAnswer

// titleKind is all a new request kind needs (docs/architecture.md, "Adding a request
// kind"): its description (kindstest.Title, a line in package kinds' registry), this
// value, and a line in operations (withKind below stands for both lines).
var titleKind = &kind[*titleAnswer]{
	desc: kindstest.Title,
	kindInfo: kindInfo{what: "title",
		validate: func(r *Request) error {
			if r.HTML == nil {
				return errors.New(`title request needs "html"`)
			}
			return nil
		},
		limit: func(*Oracle) int { return 1 << 10 },
	},
	start: func(ctx context.Context, o *Oracle, req *Request) (context.Context, func(context.Context, browser.Engine) (*titleAnswer, error)) {
		return ctx, func(ctx context.Context, e browser.Engine) (*titleAnswer, error) {
			raw, err := runCase(ctx, e, *req.HTML, deref(req.Script), `function () { return document.title; }`)
			if err != nil {
				return nil, err
			}
			var title string
			if err := json.Unmarshal(raw, &title); err != nil {
				return nil, err
			}
			return &titleAnswer{Engine: e.Name(), Title: title}, nil
		}
	},
}

// withKind registers k for the test, as the line in operations would, and its
// description, as the line in package kinds' registry would.
func withKind(t *testing.T, k *kind[*titleAnswer]) {
	t.Cleanup(kinds.Register(k.desc))
	saved := operations
	operations = append(append([]operation(nil), operations...), k)
	t.Cleanup(func() { operations = saved })
}

// A kind registered with one line is validated, listed, answered by a real engine,
// stored, served from the store and bounded, with no other edit.
func TestANewKindNeedsOnlyItsValueAndARegistryLine(t *testing.T) {
	_, _, err := ParseRequest([]byte(`{"id":1,"op":"title"}`))
	require.ErrorContains(t, err, `unknown op "title" (known: ping, shutdown, trace, reflect, or none for geometry)`)

	withKind(t, titleKind)
	_, _, err = ParseRequest([]byte(`{"id":1,"op":"title"}`))
	require.EqualError(t, err, `title request needs "html"`)
	_, _, err = ParseRequest([]byte(`{"id":1,"op":"nope","html":""}`))
	require.ErrorContains(t, err, "known: ping, shutdown, trace, reflect, title, or none for geometry")
	_, _, err = ParseRequest([]byte(`{"id":1,"op":"title","html":"","screenshot":true}`))
	require.ErrorContains(t, err, `"screenshot" is for geometry requests only`)

	testutil.NeedsBrowsers(t)
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{}, testLogger(t))
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o, err := Launch(ctx, Config{Engines: []string{browser.Chromium}, Pages: 1, Store: st}, testLogger(t))
	require.NoError(t, err)
	defer o.Close()

	serve := func(lines string) []string {
		var out strings.Builder
		require.NoError(t, o.Serve(ctx, strings.NewReader(lines), &out))
		return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	}
	req := `{"id":"t","op":"title","html":"<title>a</title>","script":"document.title += '<b'"}` + "\n"
	assert.Equal(t, []string{`{"id":"t","titles":{"chromium":{"engine":"chromium","title":"a\u003cb"}}}`}, serve(req))
	st.Flush(10 * time.Second)
	assert.Equal(t, []string{`{"id":"t","titles":{"chromium":{"engine":"chromium","title":"a\u003cb"}},"stored":["chromium"]}`}, serve(req),
		"the second answer comes from the store, keyed under the kind's name")
	long := `{"id":"l","op":"title","html":"<title>` + strings.Repeat("x", 2000) + `</title>"}` + "\n"
	assert.Equal(t, []string{`{"id":"l","titles":{},"errors":{"chromium":"the title is 2032 bytes, over the 1024 one engine's answer may have (docs/untrusted.md)"}}`}, serve(long),
		"an answer over the kind's limit is an error")
}

// Each kind the oracle runs is the one package kinds registers under its name, and
// every registered kind is run: the store's diff, export, compare and client read
// kinds, so a kind missing there would be answered and then dropped by them.
func TestEveryOperationIsARegisteredKind(t *testing.T) {
	all := kinds.All()
	require.Len(t, operations, len(all))
	for i, op := range operations {
		k := kinds.ByName(op.about().Name)
		require.NotNil(t, k, op.about().Name)
		assert.Equal(t, op.about(), k.About())
		assert.Equal(t, all[i].About(), op.about(), "one order in both")
	}
}
