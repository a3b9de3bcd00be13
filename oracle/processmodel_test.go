package oracle

import (
	"context"
	"fmt"
	"github.com/layout-oracle/oracle/oracle/browser"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contentProcesses lists the content (Firefox) or renderer (Chromium) processes
// below the browser main processes pids.
func contentProcesses(pids []int) map[int]bool {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	below := func(pid int) bool {
		for p, n := parent[pid], 0; p > 1 && n < 20; p, n = parent[p], n+1 {
			for _, root := range pids {
				if p == root {
					return true
				}
			}
		}
		return false
	}
	out := map[int]bool{}
	for pid := range parent {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		c := string(cmd)
		if (strings.Contains(c, "-isForBrowser") || strings.Contains(c, "--type=renderer")) && below(pid) {
			out[pid] = true
		}
	}
	return out
}

// Trace cases, each on an origin (and so a site) of its own, run in the content
// process the page already has (processmodel.go): after a first trace case, three
// more start no new content process in Chromium or Firefox. With a process per site
// (the old launch settings) every one of them started or took another process, and
// a trace cost 2-3x a geometry case.
func TestTraceCasesKeepTheirContentProcess(t *testing.T) {
	testutil.NeedsBrowsers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o, err := Launch(ctx, Config{Engines: []string{browser.Chromium, browser.Firefox}, Pages: 1}, testLogger(t))
	require.NoError(t, err)
	defer o.Close()
	for _, name := range []string{browser.Chromium, browser.Firefox} {
		t.Run(name, func(t *testing.T) {
			e := o.engines[name].pages[0]
			trace := func(i int) {
				m := handle(t, o, fmt.Sprintf(`{"id":"t%d","op":"trace","engines":["%s"],"html":"<p>case %d</p>","script":"trace.done()"}`, i, name, i))
				require.Nil(t, m["errors"], "trace %d", i)
			}
			trace(0)
			waitResets(o)
			before := contentProcesses(browser.BrowserPIDs(e))
			require.NotEmpty(t, before, "no content process found below %v", browser.BrowserPIDs(e))
			for i := 1; i <= 3; i++ {
				trace(i)
				waitResets(o)
			}
			var started []int
			for pid := range contentProcesses(browser.BrowserPIDs(e)) {
				if !before[pid] {
					started = append(started, pid)
				}
			}
			assert.Empty(t, started, "content processes started by three trace cases")
		})
	}
}
