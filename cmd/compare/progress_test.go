package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	code := run([]string{"--oracle", path}, nil, &out, &errOut)
	require.NotEqual(t, exitBadInput, code, errOut.String())
	assert.Empty(t, errOut.String(), "not a terminal: no bar")

	master, slave := openPTY(t)
	got := make(chan string)
	go func() { b, _ := io.ReadAll(master); got <- string(b) }()
	out.Reset()
	code = run([]string{"--oracle", path}, nil, &out, slave)
	require.NotEqual(t, exitBadInput, code)
	slave.Close()
	tty := <-got
	assert.Contains(t, tty, "compare", "the bar's label")
	assert.Contains(t, tty, "records")
	assert.NotContains(t, out.String(), "records", "stdout has the report only")
}
