package oracle

import (
	"testing"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/rs/zerolog"
)

func testLogger(tb testing.TB) zerolog.Logger { return testutil.Logger(tb) }

type lockedBuffer = testutil.LockedBuffer
