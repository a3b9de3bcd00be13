package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/layout-oracle/oracle/client"
)

// storeReport is what --store-bench measured: one corpus answered cold (every case
// live, filling a fresh store) and then warm (a new oracle process on the same store,
// every case from it).
type storeReport struct {
	Cases        int         `json:"cases"`
	Seed         uint64      `json:"seed"`
	Engines      []string    `json:"engines"`
	ColdWall     float64     `json:"cold_s"`
	WarmWall     float64     `json:"warm_s"`
	Speedup      float64     `json:"speedup"`
	ColdP50      float64     `json:"cold_p50_ms"`
	WarmP50      float64     `json:"warm_p50_ms"`
	ColdErrors   int         `json:"cold_errors"`
	WarmErrors   int         `json:"warm_errors"`
	WarmStored   int         `json:"warm_answers_from_store"`
	StoreBytes   int64       `json:"store_bytes"`
	BytesPerCase float64     `json:"store_bytes_per_case"`
	WarmRSS      []rssSample `json:"warm_rss"` // the oracle process tree, after each quarter of the warm pass
	// Spawn is a third pass, warm, timed from the oracle's exec with every case
	// written at once: no wait for engines.
	Spawn spawnTimes `json:"warm_from_spawn"`
	Goal  goal       `json:"goal"`
	Load  string     `json:"loadavg_at_start"`
}

// runStoreBench answers c.storeBench generated cases twice through the oracle with a
// fresh store: cold, then warm in a new process. It fails (1) when warm is not at
// least 50x faster than cold.
func runStoreBench(c config, stdout, stderr io.Writer) int {
	rep := storeReport{Cases: c.storeBench, Seed: c.seed, Engines: c.engines, Load: loadavg()}
	path := filepath.Join(c.logDir, "store-bench.sqlite")
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	cases := generateCases(c.seed, c.storeBench)
	args := []string{"--engines=" + strings.Join(c.engines, ","), "--log-level=warn", "--store=" + path}

	pass := func(name string, sample bool) (passResult, []rssSample, error) {
		p, startup, err := startOracle(c.oracleBin, args, filepath.Join(c.logDir, "oracle-store-"+name+".log"))
		if err != nil {
			return passResult{}, nil, err
		}
		defer p.kill()
		fmt.Fprintf(stderr, "bench: store %s: oracle up in %.1fs, %d cases\n", name, startup.AllReady.Seconds(), len(cases))
		var all passResult
		var samples []rssSample
		chunk := (len(cases) + 3) / 4
		for i := 0; i < len(cases); i += chunk {
			part := cases[i:min(i+chunk, len(cases))]
			r, err := p.pass(part, name+"-", nil, 0)
			if err != nil {
				return all, samples, err
			}
			all.Wall += r.Wall
			all.Latencies = append(all.Latencies, r.Latencies...)
			all.Errors += r.Errors
			if all.FirstErr == "" {
				all.FirstErr = r.FirstErr
			}
			if sample {
				s := sampleRSS(p.pid())
				s.Cases = i + len(part)
				samples = append(samples, s)
			}
		}
		if name == "warm" {
			rep.WarmStored = storedAnswers(p, stderr)
		}
		// EOF: the oracle commits what its store writer still holds before exiting.
		return all, samples, p.close()
	}
	cold, _, err := pass("cold", false)
	if err != nil {
		fmt.Fprintln(stderr, "bench: store cold:", err)
		return 1
	}
	warm, samples, err := pass("warm", true)
	if err != nil {
		fmt.Fprintln(stderr, "bench: store warm:", err)
		return 1
	}
	rep.Spawn, err = spawnPass(c.oracleBin, args, cases, len(c.engines), filepath.Join(c.logDir, "oracle-store-spawn.log"))
	if err != nil {
		fmt.Fprintln(stderr, "bench: store warm from spawn:", err)
		return 1
	}
	rep.ColdWall, rep.WarmWall = cold.Wall.Seconds(), warm.Wall.Seconds()
	rep.Speedup = rep.ColdWall / rep.WarmWall
	rep.ColdP50 = summarize(cold.Latencies).Median
	rep.WarmP50 = summarize(warm.Latencies).Median
	rep.ColdErrors, rep.WarmErrors = cold.Errors, warm.Errors
	rep.WarmRSS = samples
	for _, f := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(f); err == nil {
			rep.StoreBytes += fi.Size()
		}
	}
	rep.BytesPerCase = float64(rep.StoreBytes) / float64(len(cases))
	rep.Goal = goal{What: "warm pass speedup over cold (x)", Value: rep.Speedup, Limit: ">= 50", Met: rep.Speedup >= 50}

	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return 1
		}
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "store bench: %d cases, engines %s, load %s\n", rep.Cases, strings.Join(rep.Engines, ","), rep.Load)
		fmt.Fprintf(tw, "pass\twall s\tcases/s\tp50 ms\terrors\n")
		fmt.Fprintf(tw, "cold\t%.1f\t%.1f\t%.1f\t%d\n", rep.ColdWall, float64(rep.Cases)/rep.ColdWall, rep.ColdP50, rep.ColdErrors)
		fmt.Fprintf(tw, "warm\t%.2f\t%.0f\t%.2f\t%d\n", rep.WarmWall, float64(rep.Cases)/rep.WarmWall, rep.WarmP50, rep.WarmErrors)
		tw.Flush()
		fmt.Fprintf(stdout, "speedup %.0fx (goal >= 50x: %v); answers from the store in the warm pass: %d\n", rep.Speedup, rep.Goal.Met, rep.WarmStored)
		fmt.Fprintf(stdout, "warm from spawn (every case written at exec): first answer %.2f s, last %.2f s, exit after EOF %.2f s; answers wholly from the store: %d of %d\n",
			rep.Spawn.First, rep.Spawn.Last, rep.Spawn.Exit, rep.Spawn.Stored, rep.Cases)
		fmt.Fprintf(stdout, "store %d bytes, %.0f bytes per case (%d engines)\n", rep.StoreBytes, rep.BytesPerCase, len(rep.Engines))
		fmt.Fprintf(stdout, "warm oracle tree RSS by quarter (MiB):")
		for _, s := range samples {
			fmt.Fprintf(stdout, " %d", s.Total/1024)
		}
		fmt.Fprintf(stdout, "; oracle process alone:")
		for _, s := range samples {
			fmt.Fprintf(stdout, " %d", s.KiB["oracle"]/1024)
		}
		fmt.Fprintln(stdout)
	}
	if !rep.Goal.Met || rep.WarmErrors > 0 || rep.Spawn.Errors > 0 {
		return 1
	}
	return 0
}

// storedAnswers asks the oracle's ping how many lookups hit.
func storedAnswers(p *oracleProc, stderr io.Writer) int {
	ping, err := p.c.Ping(context.Background())
	if err != nil {
		return -1
	}
	var store struct {
		Hits int `json:"hits"`
	}
	if err := json.Unmarshal(ping.Store, &store); err != nil {
		fmt.Fprintln(stderr, "bench: store: ping:", err)
		return -1
	}
	return store.Hits
}

// spawnTimes are seconds from the oracle's exec: to its first and last answer, and to
// its exit (stdin is closed once every case is written).
type spawnTimes struct {
	First  float64 `json:"first_answer_s"`
	Last   float64 `json:"last_answer_s"`
	Exit   float64 `json:"exit_s"`
	Stored int     `json:"answers_wholly_stored"`
	Errors int     `json:"errors"`
}

// spawnPass execs the oracle and writes every case at once, as a user piping a file
// does, without waiting for any engine, closes its stdin, and times the answers
// and the exit from the exec.
func spawnPass(bin string, args []string, cases []benchCase, engines int, logPath string) (spawnTimes, error) {
	var st spawnTimes
	logf, err := os.Create(logPath)
	if err != nil {
		return st, err
	}
	defer logf.Close()
	start := time.Now()
	c, err := client.Spawn(context.Background(), bin, args, client.Options{Stderr: logf, CloseTimeout: 10 * time.Minute})
	if err != nil {
		return st, err
	}
	defer c.Kill()
	done := make(chan *client.Call, len(cases))
	closed := make(chan error, 1)
	var exit time.Duration
	go func() {
		for _, bc := range cases {
			if _, err := c.Start(context.Background(), caseRequest(bc, "spawn-", nil), done); err != nil {
				closed <- err
				return
			}
		}
		err := c.Close() // EOF: the oracle answers what it read, then exits
		exit = time.Since(start)
		closed <- err
	}()
	n := 0
	for n < len(cases) {
		var call *client.Call
		select {
		case call = <-done:
		case err := <-closed:
			return st, fmt.Errorf("oracle: %v after %d answers to %d cases (log %s)", err, n, len(cases), logPath)
		}
		if call.Err != nil {
			return st, fmt.Errorf("oracle: %v after %d answers to %d cases (log %s)", call.Err, n, len(cases), logPath)
		}
		at := call.Received.Sub(start).Seconds()
		if n == 0 {
			st.First = at
		}
		st.Last = at
		n++
		r := call.Response
		st.Errors += len(r.Errors)
		if r.Error != "" {
			st.Errors++
		}
		if len(r.Stored) == engines {
			st.Stored++
		}
	}
	if err := <-closed; err != nil {
		return st, fmt.Errorf("oracle: %v (log %s)", err, logPath)
	}
	st.Exit = exit.Seconds()
	return st, nil
}
