package client_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/client"
)

// oracleBin is cmd/oracle built from this tree by TestMain, unless -short.
var oracleBin string

func TestMain(m *testing.M) {
	if os.Getenv("CLIENT_FAKE_ORACLE") == "1" {
		fakeProcess()
		return
	}
	flag.Parse()
	if testing.Short() {
		// The example drives the real browsers. An example cannot skip itself, so
		// -short (the pure tests) leaves it out by the run pattern instead.
		if f := flag.Lookup("test.run"); f.Value.String() == "" {
			f.Value.Set("^Test")
		}
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "client-example-")
	if err != nil {
		panic(err)
	}
	oracleBin = filepath.Join(dir, "oracle")
	build := exec.Command("go", "build", "-o", oracleBin, "github.com/layout-oracle/oracle/cmd/oracle")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build oracle:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// One geometry case through a spawned oracle and its three engines. The oracle is
// the binary built from this tree (TestMain); a tool would name bin/oracle.
func Example() {
	ctx := context.Background()
	c, err := client.Spawn(ctx, oracleBin, []string{"--store=off", "--pages=1", "--log-level=error"},
		client.Options{Stderr: os.Stderr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	// Cases need not wait for startup (a case waits for a starting engine, within
	// a bound); waiting for every engine to serve gives the final set of engines.
	ping, err := c.WaitReady(ctx, 100*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("serving:", strings.Join(ping.Engines, ", "))
	r, err := c.Do(ctx, client.Request{HTML: client.Str(`<div><p>a</p><p>b</p></div>`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("answered:", strings.Join(r.Engines(), ", "))
	for _, e := range r.Engines() {
		fmt.Printf("%s: %d nodes, version known: %v\n", e, len(r.Dumps[e].Nodes), r.Dumps[e].EngineVersion != "")
	}
	for e, msg := range r.Errors {
		fmt.Println("error:", e, msg)
	}
	// Output:
	// serving: chromium, firefox, webkit
	// answered: chromium, firefox, webkit
	// chromium: 6 nodes, version known: true
	// firefox: 6 nodes, version known: true
	// webkit: 6 nodes, version known: true
}

// The real oracle with a small --max-line: a request over it is refused with id
// null and the line's number, and Do returns that refusal instead of waiting
// forever; the requests around it are answered.
func TestDoOfALineOverMaxLineReturnsTheRefusal(t *testing.T) {
	if oracleBin == "" {
		t.Skip("the real oracle (not -short)")
	}
	c, err := client.Spawn(context.Background(), oracleBin, []string{"--store=off", "--engines=chromium", "--pages=1", "--max-line=300", "--log-level=error"},
		client.Options{Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := c.Do(ctx, client.Request{ID: "long", HTML: client.Str("<p>" + strings.Repeat("x", 400))})
	if err != nil {
		t.Fatalf("Do: %v (the refusal should be the answer)", err)
	}
	// Line 1 was Spawn's ping, line 2 the one above.
	if r.Line != 3 || !strings.Contains(r.Error, "exceeds the maximum of 300 bytes") || string(r.ID) != "null" {
		t.Fatalf("want the refusal of line 3, got %s", r.Raw)
	}
	// A line cut short: the oracle cannot read its id, the caller named it.
	r, err = c.DoLine(ctx, []byte(`{"id":"broken", "html":`), json.RawMessage(`"broken"`))
	if err != nil {
		t.Fatalf("DoLine: %v", err)
	}
	if r.Line != 4 || r.Error == "" {
		t.Fatalf("want the refusal of line 4, got %s", r.Raw)
	}
	if _, err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}
