// Package routetest is what the route packages' tests share: the own-client routes'
// conformance suite (Run), and reading a browser's processes from /proc. Only tests
// import it.
package routetest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/require"
)

// runGeometry runs one geometry case as the oracle does (oracle/runcase.go) and resets after it.
func runGeometry(t *testing.T, e browser.Engine, html, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := e.Load(ctx, html, browser.WithCaseScript(dump.WalkJS), script, dump.StyleProperties, 100000, 512, 64)
	require.NoError(t, err, "%s: %s", e.Route(), html)
	require.NoError(t, e.Reset(ctx))
	return string(raw)
}

// GroupProcs lists the live processes of process group pgid, by /proc.
func GroupProcs(pgid int) map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if state, pg, comm, ok := procStat(pid); ok && pg == pgid && state != "Z" {
			out[pid] = comm
		}
	}
	return out
}

// procStat reads a process's state, process group and command name.
func procStat(pid int) (state string, pgid int, comm string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, "", false
	}
	s := string(b)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", 0, "", false
	}
	f := strings.Fields(s[j+1:]) // state ppid pgrp ...
	if len(f) < 3 {
		return "", 0, "", false
	}
	pgid, _ = strconv.Atoi(f[2])
	return f[0], pgid, s[i+1 : j], true
}

// Alive says whether process pid runs (it exists and is not a zombie).
func Alive(pid int) bool {
	state, _, _, ok := procStat(pid)
	return ok && state != "Z"
}
