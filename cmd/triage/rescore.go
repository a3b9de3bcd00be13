package main

// Scoring again from an earlier run's answers (--from DIR).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/layout-oracle/oracle/client"
)

// rescore is score from an earlier run's files (--from DIR): each corpus case's
// oracle answer and candidate record, found by id, judged again.
func (t *triage) rescore(cases []tcase) ([]*scored, error) {
	answers := map[string]*client.Response{}
	if err := eachLine(filepath.Join(t.cfg.from, "oracle.ndjson"), func(line []byte) error {
		r, err := parseAnswer(line)
		if err != nil {
			return err
		}
		answers[string(compactID(r.ID))] = r
		return nil
	}); err != nil {
		return nil, err
	}
	records := map[string]candRecord{}
	if err := eachLine(filepath.Join(t.cfg.from, "candidate.ndjson"), func(line []byte) error {
		var r candRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		records[string(compactID(r.ID))] = r
		return nil
	}); err != nil {
		return nil, err
	}
	results := make([]*scored, len(cases))
	for i, c := range cases {
		resp := answers[string(c.raw)]
		rec, ok := records[string(c.raw)]
		if resp == nil || !ok {
			return nil, fmt.Errorf("--from %s: no answer for case %q (a run on another corpus?)", t.cfg.from, c.id)
		}
		results[i] = t.fromRecord(c, resp, rec)
	}
	if filepath.Clean(t.cfg.from) != filepath.Clean(t.cfg.out) {
		if err := t.writeAnswers(results); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// writeAnswers writes DIR/oracle.ndjson and DIR/candidate.ndjson from results.
func (t *triage) writeAnswers(results []*scored) error {
	var ob, cb bytes.Buffer
	for _, r := range results {
		ob.Write(r.resp.Raw)
		ob.WriteByte('\n')
		writeCandidateLine(&cb, r)
	}
	return errors.Join(t.cfg.dir.WriteFile("oracle.ndjson", ob.Bytes()),
		t.cfg.dir.WriteFile("candidate.ndjson", cb.Bytes()))
}

func eachLine(path string, f func([]byte) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 512<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := f(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	return sc.Err()
}
