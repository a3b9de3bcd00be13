package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/layout-oracle/oracle/internal/cli"
)

// benchPass is the flags each case's reduce gets under --bench: every flag set but
// the bench's own (--bench*, --out, --json), each under its name now
// (cli.Canonical: a deprecated spelling would repeat its line per case), and each
// --oracle-flag.
func benchPass(fs *flag.FlagSet, oracleFlags []string) []string {
	var pass []string
	fs.Visit(func(f *flag.Flag) {
		if name := cli.Canonical(f); !strings.HasPrefix(name, "bench") && name != "oracle-flag" && name != "out" && name != "json" {
			pass = append(pass, "--"+name+"="+f.Value.String())
		}
	})
	for _, f := range oracleFlags {
		pass = append(pass, "--oracle-flag="+f)
	}
	return pass
}

// bench reduces every request of file, one reduce process each (a fresh oracle
// per case, as a user runs it), and prints a Markdown row per case as it ends,
// then the medians (make bench-reduce, docs/reduce.md). pass are the flags each
// case's reduce gets; the reduced requests go to results.
func bench(file string, limit int, pass []string, results io.Writer, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "reduce: %v\n", err)
		return exitBadInput
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "reduce: %v\n", err)
		return exitBadInput
	}
	var lines [][]byte
	for l := range bytes.SplitSeq(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	if limit > 0 && limit < len(lines) {
		lines = lines[:limit]
	}
	fmt.Fprintln(stdout, "| case | bytes before | bytes after | % | oracle calls | wall s | reproduced |")
	fmt.Fprintln(stdout, "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
	var pct, wall []float64
	reproduced := 0
	for _, l := range lines {
		cmd := exec.Command(self, append(slices.Clone(pass), "--json")...)
		cmd.Stdin = bytes.NewReader(append(l, '\n'))
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Stdout = results
		_ = cmd.Run() // exit 1 is a result (not reproduced), read from the stats
		var s summary
		log := errb.String()
		sc := bufio.NewScanner(&errb)
		for sc.Scan() {
			if t := sc.Bytes(); len(t) > 0 && t[0] == '{' {
				_ = json.Unmarshal(t, &s)
			}
		}
		if s.ID == "" {
			var id struct{ ID string }
			_ = json.Unmarshal(l, &id)
			fmt.Fprintf(stdout, "| %s | not reduced: %s | | | | | |\n", id.ID, strings.TrimSpace(lastLine(log)))
			continue
		}
		p := 100 * float64(s.BytesAfter) / float64(max(s.BytesBefore, 1))
		pct, wall = append(pct, p), append(wall, s.Seconds)
		if s.Reproduced {
			reproduced++
		}
		fmt.Fprintf(stdout, "| %s | %d | %d | %.1f | %d | %.0f | %v |\n", s.ID, s.BytesBefore, s.BytesAfter, p, s.OracleCalls, s.Seconds, s.Reproduced)
	}
	fmt.Fprintf(stdout, "\n%d cases reduced of %d, %d reproduced; median reduced size %.1f%% of the original, median wall time %.0f s\n",
		len(pct), len(lines), reproduced, median(pct), median(wall))
	if reproduced < len(lines) {
		return exitNotKept
	}
	return exitOK
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
