package testutil

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func blockOn(ch chan struct{}) { <-ch }

// The leak check names a goroutine started after its snapshot that is still
// blocked, ignores one that ends within the grace, and ignores the ones before.
func TestLeakedSinceNamesOnlyGoroutinesThatOutliveTheGrace(t *testing.T) {
	old := make(chan struct{})
	defer close(old)
	go blockOn(old) // before the snapshot: never a leak
	time.Sleep(10 * time.Millisecond)
	before := goroutines()

	stuck := make(chan struct{})
	go blockOn(stuck)
	leaked := leakedSince(before, 100*time.Millisecond)
	require.Len(t, leaked, 1, "%v", leaked)
	assert.True(t, strings.Contains(leaked[0], "testutil.blockOn"), leaked[0])

	ending := make(chan struct{})
	go blockOn(ending)
	time.AfterFunc(50*time.Millisecond, func() { close(ending) })
	close(stuck)
	assert.Empty(t, leakedSince(before, 2*time.Second), "goroutines that end within the grace are no leak")
}
