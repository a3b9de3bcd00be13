package oracle

import (
	"os"
	"testing"

	"github.com/layout-oracle/oracle/internal/testutil"
)

// The in-process oracle tests launch engines, pools, origins and servers: each one a
// test closes must take its goroutines with it.
func TestMain(m *testing.M) { os.Exit(testutil.RunCheckingLeaks(m)) }
