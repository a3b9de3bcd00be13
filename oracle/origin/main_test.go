package origin

import (
	"os"
	"testing"

	"github.com/layout-oracle/oracle/internal/testutil"
)

// The origin tests start servers: each one a test closes must take its goroutines
// with it.
func TestMain(m *testing.M) { os.Exit(testutil.RunCheckingLeaks(m)) }
