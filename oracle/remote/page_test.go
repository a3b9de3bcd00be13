package remote

import (
	"context"
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backend is a stand-in for a remote route's page (a unit test of Page's own
// forwarding, no browser): it has the optional methods a route may have.
type backend struct {
	browser.Engine
	keep bool
}

func (b backend) Keep() bool                                  { return b.keep }
func (backend) Emulated() []string                            { return []string{"screen", "dpr"} }
func (backend) OpenWindows(context.Context) (int, int, error) { return 1, 2, nil }

// standing is an endpoint that serves.
type standing struct{}

func (standing) Refuse(string)   {}
func (standing) Refused() string { return "" }

// A remote page has its backend's optional methods: it keeps inert windows where the
// route does, and its traces name what the route emulated.
func TestARemotePageHasItsBackendsOptionalMethods(t *testing.T) {
	p := NewPage(backend{keep: true}, standing{})
	k, ok := browser.Engine(p).(browser.Keeper)
	require.True(t, ok, "a remote page is a Keeper")
	assert.True(t, k.Keep())
	assert.False(t, keeps(NewPage(backend{keep: false}, standing{})))
	assert.Equal(t, []string{"screen", "dpr"}, browser.Emulated(p))
	pages, contexts, err := browser.OpenWindows(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 2}, [2]int{pages, contexts})

	// A backend without them: nothing kept, nothing emulated.
	bare := NewPage(struct{ browser.Engine }{}, standing{})
	assert.False(t, keeps(bare))
	assert.Nil(t, browser.Emulated(bare))
}

// keeps is what the pool asks of a page after an inert case (pool.Keep).
func keeps(e browser.Engine) bool {
	k, ok := e.(browser.Keeper)
	return ok && k.Keep()
}
