package client_test

// A unit test of the client only: the oracle is a fake speaking the protocol (no
// engine). A throw-away kind (kindstest.Title) reaches a caller through package
// kinds' registry; unregistered, its answer is the call's error, not an empty answer.

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/kinds/kindstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAKindReachesTheClientOnceRegistered(t *testing.T) {
	c, p := attach(t, client.Options{})
	go func() {
		for range 2 {
			l := readReq(t, p.br)
			fmt.Fprintf(p.w, `{"id":%s,"titles":{"chromium":{"engine":"chromium","title":"x"}},"errors":{"webkit":"no"}}`+"\n", l.id)
		}
	}()
	req := client.Request{Op: "title", HTML: client.Str("<title>x</title>")}

	_, err := c.Do(context.Background(), req)
	assert.EqualError(t, err, `client: the answer has ["titles"], the field of no kind this client knows (known: `+kinds.Fields()+`): build the client from the oracle's tree`)

	t.Run("registered", func(t *testing.T) {
		kindstest.Register(t)
		r, err := c.Do(context.Background(), req)
		require.NoError(t, err)
		assert.Equal(t, "title", r.Kind)
		assert.Equal(t, map[string]json.RawMessage{"chromium": json.RawMessage(`{"engine":"chromium","title":"x"}`)}, r.Answers)
		assert.Equal(t, []string{"chromium"}, r.Engines())
		assert.Equal(t, "no", r.Errors["webkit"])
	})
}

// Every registered kind fills Kind and Answers as well as its typed field, whichever
// kinds the tree has.
func TestEveryKindFillsKindAndAnswers(t *testing.T) {
	all := kinds.All()
	c, p := attach(t, client.Options{})
	go func() {
		for _, k := range all {
			l := readReq(t, p.br)
			fmt.Fprintf(p.w, `{"id":%s,%q:{"chromium":null},"errors":{"webkit":"no"}}`+"\n", l.id, k.About().Field)
		}
	}()
	for _, k := range all {
		r, err := c.Do(context.Background(), client.Request{HTML: client.Str("")})
		require.NoError(t, err)
		assert.Equal(t, k.About().Name, r.Kind)
		assert.Equal(t, []string{"chromium"}, r.Engines())
	}
}
