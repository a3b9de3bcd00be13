package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
)

// A long compare run shows a progress bar when stderr is a terminal, and writes
// nothing extra to stderr when it is not (a unit test of the command; the dumps are
// the fixture's, no engine runs).
func TestProgressOnlyOnATerminal(t *testing.T) {
	one := strings.TrimSpace(fixture(t, "oracle.ndjson"))
	var b strings.Builder
	for i := 0; i < 100; i++ {
		for _, l := range strings.Split(one, "\n") {
			b.WriteString(strings.Replace(l, `"id":"`, fmt.Sprintf(`"id":"%d-`, i), 1) + "\n")
		}
	}
	path := writeFile(t, b.String())

	var out, errOut bytes.Buffer
	code := run([]string{"--answers", path}, nil, &out, &errOut)
	require.NotEqual(t, exitBadInput, code, errOut.String())
	assert.Empty(t, errOut.String(), "not a terminal: no bar")

	master, slave := testutil.OpenPTY(t)
	got := make(chan string)
	go func() { b, _ := io.ReadAll(master); got <- string(b) }()
	out.Reset()
	// The oracle lines arrive through a pipe with a pause longer than the bar's
	// 200 ms throttle: read from a file, a run that ends within the throttle (a
	// quick machine, or a slow one that read it all in its first reads) never draws
	// the bar past its blank state, and the test failed at random.
	in, feed := io.Pipe()
	lines := b.String()
	go func() {
		half := strings.Index(lines[len(lines)/2:], "\n") + len(lines)/2 + 1
		feed.Write([]byte(lines[:half]))
		time.Sleep(500 * time.Millisecond)
		feed.Write([]byte(lines[half:]))
		feed.Close()
	}()
	code = run([]string{"--oracle", "-"}, in, &out, slave)
	require.NotEqual(t, exitBadInput, code)
	slave.Close()
	tty := <-got
	assert.Contains(t, tty, "compare", "the bar's label")
	assert.Contains(t, tty, "records")
	assert.NotContains(t, out.String(), "records", "stdout has the report only")
}
