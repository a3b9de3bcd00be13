package oracle

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Trace cases, each on an origin (and so a site) of its own, run in the content
// process the page already has (processmodel.go): after a first trace case, three
// more start no new content process in Chromium or Firefox. With a process per site
// (the old launch settings) every one of them started or took another process, and
// a trace cost 2-3x a geometry case.
func TestTraceCasesKeepTheirContentProcess(t *testing.T) {
	testutil.NeedsBrowsers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o, err := Launch(ctx, Config{Routes: routes.Table, Engines: []string{browser.Chromium, browser.Firefox}, Pages: 1}, testLogger(t))
	require.NoError(t, err)
	defer o.Close()
	for _, name := range []string{browser.Chromium, browser.Firefox} {
		t.Run(name, func(t *testing.T) {
			e := o.engines[name].All()[0]
			trace := func(i int) {
				m := handle(t, o, fmt.Sprintf(`{"id":"t%d","op":"trace","engines":["%s"],"html":"<p>case %d</p>","script":"trace.done()"}`, i, name, i))
				require.Nil(t, m["errors"], "trace %d", i)
			}
			trace(0)
			waitResets(o)
			before := browser.ContentProcesses(e)
			require.NotEmpty(t, before, "no content process found")
			for i := 1; i <= 3; i++ {
				trace(i)
				waitResets(o)
			}
			var started []int
			for pid := range browser.ContentProcesses(e) {
				if !before[pid] {
					started = append(started, pid)
				}
			}
			assert.Empty(t, started, "content processes started by three trace cases")
		})
	}
}
