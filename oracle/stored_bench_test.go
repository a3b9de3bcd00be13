package oracle

// The store's hit latency against a live answer, one geometry case through Handle
// on the real Chromium, the response encoded as Serve does:
//
//	go test -run '^$' -bench 'Geometry(Live|Stored)' -benchtime 100x ./oracle/

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/store"
	"github.com/rs/zerolog"
)

func benchOracle(b *testing.B, st *store.Store) *Oracle {
	b.Helper()
	o, err := Launch(context.Background(), Config{Routes: routes.Table, Engines: []string{browser.Chromium}, Pages: 1, Profile: profiles.Default, Store: st}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { o.Close() })
	return o
}

func benchRequest(b *testing.B, i int) *Request {
	html := fmt.Sprintf("<!doctype html><div style='width:%dpx'>case %d</div><p>text</p>", 100+i%50, i%50)
	req, _, err := ParseRequest([]byte(fmt.Sprintf(`{"id":"b%d","html":%q}`, i, html)))
	if err != nil {
		b.Fatal(err)
	}
	return req
}

func BenchmarkGeometryLive(b *testing.B) {
	o := benchOracle(b, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := o.Handle(forTheWire(context.Background()), benchRequest(b, i)).(geometryResponse)
		if len(r.Errors) > 0 {
			b.Fatal(r.Errors)
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGeometryStored(b *testing.B) {
	st, err := store.Open(filepath.Join(b.TempDir(), "s.sqlite"), store.Options{}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	o := benchOracle(b, st)
	for i := 0; i < 50; i++ { // the 50 distinct cases the loop asks, stored
		o.Handle(context.Background(), benchRequest(b, i))
	}
	st.Flush(time.Minute)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := o.Handle(forTheWire(context.Background()), benchRequest(b, i)).(geometryResponse)
		if len(r.Stored) != 1 {
			b.Fatalf("case %d not from the store: %+v", i, r.Errors)
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}
