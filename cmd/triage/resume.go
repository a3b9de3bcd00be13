package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/internal/candidate"
)

// shard is --shard I/N: this machine's share of the corpus (n 0: all of it).
type shard struct{ i, n int }

func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return shard{}, fmt.Errorf("%q: want I/N with 1 <= I <= N, e.g. 2/4", s)
	}
	return shard{i, n}, nil
}

func (s shard) String() string { return fmt.Sprintf("%d/%d", s.i, s.n) }

// of is the cases of this shard: those whose id (its JSON text, as the corpus
// wrote it, compacted) hashes by 64-bit FNV-1a to i-1 mod n. An id's shard does
// not depend on the files' order or on the other cases, so N machines given the
// same corpus files split it with no case twice and none left out.
func (s shard) of(cases []tcase) []tcase {
	var out []tcase
	for _, c := range cases {
		h := fnv.New64a()
		h.Write(c.raw)
		if h.Sum64()%uint64(s.n) == uint64(s.i-1) {
			out = append(out, c)
		}
	}
	return out
}

// journalName is the file in --out where each case's answers go as soon as the
// case is answered, one line each: {"oracle": its oracle answer line, "candidate":
// its candidate.ndjson record}. --resume reads it back.
const journalName = "answered.ndjson"

type journalLine struct {
	Oracle    json.RawMessage `json:"oracle"`
	Candidate json.RawMessage `json:"candidate"`
}

// candRecord is one line of candidate.ndjson.
type candRecord struct {
	ID    json.RawMessage `json:"id"`
	Dump  json.RawMessage `json:"dump"`
	Error *string         `json:"error"`
}

func parseAnswer(line []byte) (*client.Response, error) {
	var r client.Response
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, err
	}
	r.Raw = append(json.RawMessage(nil), line...)
	return &r, nil
}

// fromRecord is case c scored from its oracle answer and candidate record.
func (t *triage) fromRecord(c tcase, resp *client.Response, rec candRecord) *scored {
	r := &scored{c: c, resp: resp}
	if rec.Error != nil {
		r.candErr = errors.New(*rec.Error)
	} else {
		r.cand, r.candErr = candidate.Decode(rec.Dump)
	}
	t.judge(r)
	return r
}

// resumed reads the journal an interrupted run left in --out: the cases of
// cases it holds, scored, by their index. A line cut short by the interruption
// (the last one) is skipped, and so is an id not among cases.
func (t *triage) resumed(cases []tcase) (map[int]*scored, error) {
	index := map[string]int{}
	for i, c := range cases {
		index[string(c.raw)] = i
	}
	out := map[int]*scored{}
	bad := 0
	err := eachLine(filepath.Join(t.cfg.out, journalName), func(line []byte) error {
		var j journalLine
		var rec candRecord
		var resp *client.Response
		err := json.Unmarshal(line, &j)
		if err == nil {
			resp, err = parseAnswer(j.Oracle)
		}
		if err == nil {
			err = json.Unmarshal(j.Candidate, &rec)
		}
		if err != nil {
			bad++
			return nil
		}
		if i, ok := index[string(compactID(resp.ID))]; ok {
			out[i] = t.fromRecord(cases[i], resp, rec)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		t.say("triage: --resume: no %s in %s: every case is run", journalName, t.cfg.out)
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--resume: %v", err)
	}
	if bad > 0 {
		t.say("triage: --resume: skipped %d unreadable lines of %s (a line cut short): those cases run again", bad, journalName)
	}
	t.say("triage: --resume: %d of %d cases answered by the interrupted run; %d to go", len(out), len(cases), len(cases)-len(out))
	return out, nil
}

// journalEntry is r as one journal line.
func journalEntry(r *scored) []byte {
	b, _ := json.Marshal(journalLine{Oracle: r.resp.Raw, Candidate: candidateRecord(r)})
	return append(b, '\n')
}

// eta is the time left at the rate so far: done of total units after elapsed,
// counting only the units this run did (ran).
func eta(ran, done, total int, elapsed time.Duration) string {
	if ran <= 0 || done >= total {
		return "ETA -"
	}
	left := time.Duration(float64(elapsed) / float64(ran) * float64(total-done))
	return "ETA " + left.Round(time.Second).String()
}
