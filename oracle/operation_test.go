package oracle

import (
	"bufio"
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
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// titleAnswer is the answer of titleKind, a request kind that exists only in tests:
// each engine's document.title after the case's script.
type titleAnswer = kindstest.TitleAnswer

// titleKind is the oracle's side of a request kind that exists only in tests, attached
// to its description (kindstest.Title): with it, all a new kind needs is a line in
// package kinds' registry (docs/architecture.md, "Adding a request kind"), which
// kindstest.Register stands for.
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

func init() { titleKind.attach() }

// A kind registered with one line is validated, listed, answered by a real engine,
// stored, served from the store and bounded, with no other edit.
func TestANewKindNeedsOnlyItsValueAndARegistryLine(t *testing.T) {
	before := knownOps()
	_, _, err := ParseRequest([]byte(`{"id":1,"op":"title"}`))
	require.EqualError(t, err, `unknown op "title" (known: `+before+`)`)
	require.NotContains(t, before, "title")

	kindstest.Register(t)
	_, _, err = ParseRequest([]byte(`{"id":1,"op":"title"}`))
	require.EqualError(t, err, `title request needs "html"`)
	_, _, err = ParseRequest([]byte(`{"id":1,"op":"nope","html":""}`))
	require.EqualError(t, err, `unknown op "nope" (known: `+knownOps()+`)`)
	last := strings.LastIndex(before, ",")
	assert.Equal(t, before[:last]+", title"+before[last:], knownOps(), "title is listed last of the ops")
	_, _, err = ParseRequest([]byte(`{"id":1,"op":"title","html":"","screenshot":true}`))
	require.ErrorContains(t, err, `"screenshot" is for geometry requests only`)

	testutil.NeedsBrowsers(t)
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{}, testLogger(t))
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o, err := Launch(ctx, Config{Routes: routes.Table, Engines: []string{browser.Chromium}, Pages: 1, Store: st}, testLogger(t))
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

// Each kind of the tree (registered in package kinds, which every reader of answers
// reads) is answered by the oracle, with its own description: a kind there and not
// here would be read by them and refused as an unknown op here.
func TestEveryKindOfTheTreeIsAnswered(t *testing.T) {
	all := kinds.All()
	ops := operations()
	require.Len(t, ops, len(all))
	for i, k := range all {
		assert.Equal(t, k.About(), ops[i].about(), "one order, one description")
		assert.Same(t, k.Runner(), kindFor(k.About().Op))
	}
}

// A kind only readers know (no oracle side) is an unknown op to the oracle, not a
// crash; a response whose answer's type no registered kind has is an error when it
// is written (one error line), not a panic.
func TestAKindTheOracleDoesNotAnswerIsAnErrorNotAPanic(t *testing.T) {
	readersOnly := &kinds.Of[*struct{ N int }]{Info: kinds.Info{Op: "count", Name: "count", Field: "counts", Record: "count", Case: "a count"}}
	kindstest.RegisterKind(t, readersOnly)
	_, _, err := ParseRequest([]byte(`{"id":1,"op":"count","html":""}`))
	require.EqualError(t, err, `unknown op "count" (known: `+knownOps()+`)`)
	assert.NotContains(t, knownOps(), "count")

	r := Response[*struct{ N int }]{ID: json.RawMessage(`1`), Answers: map[string]*struct{ N int }{"chromium": {N: 1}}}
	assert.Empty(t, r.KindName())
	_, err = json.Marshal(r)
	require.ErrorContains(t, err, "oracle: no registered kind answers *struct { N int }")
	_, err = boundLine(r, answerLimits{})
	require.ErrorContains(t, err, "oracle: no registered kind answers")

	var out strings.Builder
	w := &lineWriter{w: bufio.NewWriter(&out), broken: make(chan struct{})}
	w.write(r)
	assert.Equal(t, `{"id":null,"error":"internal: cannot encode response: oracle: no registered kind answers *struct { N int }"}`+"\n", out.String())
}
