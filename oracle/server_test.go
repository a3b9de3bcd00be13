package oracle

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// waitAtMost on work that never ends returns after its bound and leaves no goroutine
// behind: before, each call left one blocked on WaitGroup.Wait for good.
func TestWaitAtMostLeavesNoGoroutine(t *testing.T) {
	var o Oracle
	o.resets.Add(1) // a reset that never ends
	before := runtime.NumGoroutine()
	start := time.Now()
	for range 50 {
		waitAtMost(&o.resets, time.Millisecond)
	}
	assert.Less(t, time.Since(start), 5*time.Second, "each wait ends at its bound")
	time.Sleep(50 * time.Millisecond) // anything that would end has ended
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "goroutines left behind by waitAtMost")

	done := make(chan struct{})
	go func() { waitAtMost(&o.resets, time.Minute); close(done) }()
	o.resets.Done() // the wait ends with the work, not at its bound
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("waitAtMost did not return when the work ended")
	}
	o.resets.Wait() // none under way: at once
}
