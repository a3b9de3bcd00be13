package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// runStartup is --startup N: it starts the oracle N times, one after another, with
// --engines and args, and prints each run's time to the first ping answer and to
// every engine serving, then their medians. Each oracle is closed (EOF) before the
// next starts.
func runStartup(c config, args []string, stdout, stderr io.Writer) int {
	args = append([]string{"--engines=" + strings.Join(c.engines, ","), "--log-level=info"}, args...)
	fmt.Fprintf(stdout, "startup of %s %s, %d runs (load average at start %s)\n", c.oracleBin, strings.Join(args, " "), c.startupRuns, loadavg())
	var first, all []time.Duration
	for i := 0; i < c.startupRuns; i++ {
		p, st, err := startOracle(c.oracleBin, args, filepath.Join(c.logDir, fmt.Sprintf("oracle-startup-%d.log", i)))
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		if err := p.close(); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
		first, all = append(first, st.FirstPing), append(all, st.AllReady)
		fmt.Fprintf(stdout, "run %d: first ping answered %.1fs, every engine serving %.1fs\n", i+1, st.FirstPing.Seconds(), st.AllReady.Seconds())
	}
	fmt.Fprintf(stdout, "median: first ping answered %.1fs, every engine serving %.1fs\n", median(first).Seconds(), median(all).Seconds())
	return 0
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
