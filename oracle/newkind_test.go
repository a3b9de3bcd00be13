package oracle_test

// A throw-away request kind, "charset", written here in one place as a new kind of
// the tree is written in its one file: its description for every reader of answers
// and the oracle's side beside it (kinds.Oracle), then registered with one line
// (kinds.Register here, a line of kinds' registry in the tree). This is an external
// test package: the kind uses nothing of package oracle's internals.

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// charsetAnswer is one engine's answer: the document's character encoding (and
// its title, so that a test can make the answer long).
type charsetAnswer struct {
	Engine  string `json:"engine"`
	Charset string `json:"charset"`
}

// charset is the whole kind.
var charset = &kinds.Of[*charsetAnswer]{
	Info: kinds.Info{Op: "charset", Name: "charset", Field: "charsets", Record: "charset", Case: "a charset"},
	Runs: func(runs []*charsetAnswer) ([]string, error) {
		for _, r := range runs[1:] {
			if r.Charset != runs[0].Charset {
				return []string{"charset"}, nil
			}
		}
		return nil, nil
	},
	Vote: func(map[string]*charsetAnswer, *charsetAnswer, compare.Options) (*compare.Report, error) {
		return nil, errors.New("not voted in this test")
	},
	Oracle: &kinds.Oracle[*charsetAnswer]{
		What: "charset",
		Validate: func(c kinds.Case) error {
			if c.HTML == nil {
				return errors.New(`charset request needs "html"`)
			}
			return nil
		},
		Limit: 200,
		Run: func(ctx context.Context, p kinds.Page) (*charsetAnswer, error) {
			raw, err := p.Run(ctx, `function () { return document.characterSet + document.title; }`)
			if err != nil {
				return nil, err
			}
			var cs string
			if err := json.Unmarshal(raw, &cs); err != nil {
				return nil, err
			}
			return &charsetAnswer{Engine: p.Engine(), Charset: cs}, nil
		},
	},
}

// A kind written in one place and registered with one line is validated, listed
// among the ops, answered by a real engine, stored, served from the store, verified
// and bounded, with no edit anywhere else.
func TestANewKindIsOneValueAndARegistryLine(t *testing.T) {
	_, _, err := oracle.ParseRequest([]byte(`{"id":1,"op":"charset"}`))
	require.ErrorContains(t, err, `unknown op "charset"`)

	unregister, err := kinds.Register(charset)
	require.NoError(t, err)
	t.Cleanup(unregister)
	_, _, err = oracle.ParseRequest([]byte(`{"id":1,"op":"charset"}`))
	require.EqualError(t, err, `charset request needs "html"`)
	_, _, err = oracle.ParseRequest([]byte(`{"id":1,"op":"nope","html":""}`))
	require.ErrorContains(t, err, ", charset,", "listed among the ops")
	_, _, err = oracle.ParseRequest([]byte(`{"id":1,"op":"charset","html":"","screenshot":true}`))
	require.ErrorContains(t, err, `"screenshot" is for geometry requests only`)

	testutil.NeedsBrowsers(t)
	st, err := store.Open(filepath.Join(t.TempDir(), "s.sqlite"), store.Options{}, testutil.Logger(t))
	require.NoError(t, err)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o, err := oracle.Launch(ctx, oracle.Config{Routes: routes.Table, Engines: []string{browser.Firefox}, Pages: 1, Store: st}, testutil.Logger(t))
	require.NoError(t, err)
	defer o.Close()
	serve := func(lines string) []string {
		var out strings.Builder
		require.NoError(t, o.Serve(ctx, strings.NewReader(lines), &out))
		return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	}
	answer := `"charsets":{"firefox":{"engine":"firefox","charset":"UTF-8"}}`
	req := `{"id":"c","op":"charset","html":"<p>x"}` + "\n"
	assert.Equal(t, []string{`{"id":"c",` + answer + `}`}, serve(req))
	st.Flush(10 * time.Second)
	assert.Equal(t, []string{`{"id":"c",` + answer + `,"stored":["firefox"]}`}, serve(req), "from the store, under the kind's name")
	assert.Equal(t, []string{`{"id":"v",` + answer + `}`}, serve(`{"id":"v","op":"charset","html":"<p>y","verify":2}`+"\n"),
		"two runs that agree: no unstable item")
	assert.Equal(t, []string{`{"id":"s","charsets":{},"errors":{"firefox":"script threw: Error: no"}}`},
		serve(`{"id":"s","op":"charset","html":"","script":"throw new Error('no')"}`+"\n"), "the case's script threw")
	long := `{"id":"l","op":"charset","html":"<title>` + strings.Repeat("x", 300) + `</title>"}` + "\n"
	assert.Equal(t, []string{`{"id":"l","charsets":{},"errors":{"firefox":"the charset is 338 bytes, over the 200 one engine's answer may have (docs/untrusted.md)"}}`},
		serve(long), "an answer over the kind's limit is an error")
}
