package candidate

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A dump over MaxDump (the oracle's own bound on one engine's dump) is refused by
// its size, before any of it is decoded: a valid dump padded past the bound with
// spaces, which decodes fine, is refused at once.
func TestDumpOverTheBoundIsRefusedBeforeDecoding(t *testing.T) {
	bare, err := os.ReadFile("../../testdata/compare/bare.json")
	require.NoError(t, err)
	d, err := Decode(bare)
	require.NoError(t, err, "the fixture is a valid dump")
	require.NotEmpty(t, d.Nodes)

	padded := append(bytes.Clone(bare), bytes.Repeat([]byte(" "), int(maxDump)+1-len(bare))...)
	_, err = Decode(padded)
	var ce *Error
	require.True(t, errors.As(err, &ce), "refused: %v", err)
	assert.Equal(t, "output", ce.Kind)
	assert.Contains(t, ce.Msg, "over the")
}
