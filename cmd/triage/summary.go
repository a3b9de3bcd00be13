package main

// The summary: what a run measured, written to DIR/summary.json and printed.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/outdir"
)

// summary is what a run measured (DIR/summary.json, and stdout).
type summary struct {
	Cases          int            `json:"cases"`
	Skipped        int            `json:"skipped"` // scripted or non-geometry cases
	Verdicts       map[string]int `json:"verdicts"`
	Failing        int            `json:"failing"` // fail + counted candidate errors
	Causes         int            `json:"causes"`
	Buckets        int            `json:"buckets"`           // entries
	CausesPerBkt   float64        `json:"causes_per_bucket"` // per entry
	Stored         int            `json:"cases_answered_from_store"`
	ScoreSeconds   float64        `json:"score_seconds"`
	CasesPerSecond float64        `json:"cases_per_second"`
	OracleSeconds  float64        `json:"oracle_seconds"`    // summed over cases (they overlap)
	CandSeconds    float64        `json:"candidate_seconds"` // summed over cases
	OracleShare    float64        `json:"oracle_share"`
	CandShare      float64        `json:"candidate_share"`
	Reduced        []reducedStat  `json:"reduced,omitempty"`
	ReduceSeconds  float64        `json:"reduce_seconds"`
	MedianRatio    float64        `json:"median_reduced_ratio,omitempty"`
	Reproduced     int            `json:"reproduced"`
	WallSeconds    float64        `json:"wall_seconds"`
	Environment    string         `json:"candidate_environment"`
	Candidate      string         `json:"candidate"` // how it ran: the command, "server: CMD" or "webdriver: URL (...)"
	Out            string         `json:"out"`
	// Baseline counts the entries against --baseline (new, still, fixed).
	Baseline *baselineCounts `json:"baseline,omitempty"`
	Resumed  int             `json:"cases_resumed,omitempty"` // answered by the interrupted run (--resume)
	Shard    string          `json:"shard,omitempty"`         // --shard I/N
}

type reducedStat struct {
	Rank        int     `json:"rank"`
	Signature   string  `json:"signature"`
	Cases       int     `json:"cases"`
	Causes      int     `json:"causes"`
	BytesBefore int     `json:"bytes_before"`
	BytesAfter  int     `json:"bytes_after"`
	Seconds     float64 `json:"seconds"`
	Reproduced  bool    `json:"reproduced"`
}

// writeSummary writes sum as JSON; a summary that cannot be (a measure that is
// not a finite number) is an error, not an empty file.
func writeSummary(dir *outdir.Dir, sum *summary) error {
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %v", err)
	}
	return dir.WriteFile("summary.json", append(b, '\n'))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func verdictText(v map[string]int) string {
	out := ""
	for _, k := range []string{"pass", "fail", "candidate-error", "candidate-overflow", "discarded", "untrustworthy", "no-vote"} {
		if v[k] > 0 {
			if out != "" {
				out += ", "
			}
			out += fmt.Sprintf("%d %s", v[k], k)
		}
	}
	return out
}

func (s *summary) print(w io.Writer) {
	fmt.Fprintf(w, "cases %d: %s\n", s.Cases, verdictText(s.Verdicts))
	fmt.Fprintf(w, "scoring: %.1fs, %.2f cases/s (%d answered from the store); time share: oracle %.0f%%, candidate %.0f%%\n",
		s.ScoreSeconds, s.CasesPerSecond, s.Stored, 100*s.OracleShare, 100*s.CandShare)
	fmt.Fprintf(w, "failing cases %d, causes %d, entries %d (%.1f causes per entry)\n", s.Failing, s.Causes, s.Buckets, s.CausesPerBkt)
	for _, r := range s.Reduced {
		fmt.Fprintf(w, "  #%d %s: %d cases, %d causes; reduced %d -> %d bytes in %.1fs, reproduced %v\n",
			r.Rank, cli.Printable(r.Signature), r.Cases, r.Causes, r.BytesBefore, r.BytesAfter, r.Seconds, r.Reproduced)
	}
	if len(s.Reduced) > 0 {
		fmt.Fprintf(w, "reduction: %.1fs, median reduced size %.1f%% of the representative, %d of %d reproduced in a fresh oracle and candidate run\n",
			s.ReduceSeconds, 100*s.MedianRatio, s.Reproduced, len(s.Reduced))
	}
	if b := s.Baseline; b != nil {
		fmt.Fprintf(w, "against the baseline %s: %d new, %d still, %d fixed", b.Dir, b.New, b.Still, b.Fixed)
		if len(b.Recheck) > 0 {
			fmt.Fprintf(w, "; its reduced cases in this build: %d fail, %d pass, %d cannot judge", b.Recheck["fails"], b.Recheck["passes"], b.Recheck["cannot judge"])
		}
		fmt.Fprintln(w)
	}
	if s.Resumed > 0 || s.Shard != "" {
		fmt.Fprintf(w, "cases answered by the interrupted run (--resume): %d; shard: %s\n", s.Resumed, cmp.Or(s.Shard, "all"))
	}
	fmt.Fprintf(w, "candidate: %s\n", s.Candidate)
	fmt.Fprintf(w, "wall %.1fs; wrote %s\n", s.WallSeconds, filepath.Join(s.Out, "index.html"))
}
