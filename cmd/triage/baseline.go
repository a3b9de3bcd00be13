package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/client"
)

// baseline is an earlier run's entries (--baseline DIR), read from its
// buckets.json: what this run's entries are new, still or fixed against.
type baseline struct {
	dir     string
	entries []*Bucket // its failing entries (not those it listed as fixed), BaselineRank set
}

// readBaseline reads DIR/buckets.json. A directory without one, or one that is not
// triage's, is an error naming it.
func readBaseline(dir string) (*baseline, error) {
	b, err := os.ReadFile(filepath.Join(dir, "buckets.json"))
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: %v (want an earlier triage --out directory)", dir, err)
	}
	var all []*Bucket
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("--baseline %s: buckets.json is not triage's: %v", dir, err)
	}
	base := &baseline{dir: dir}
	for i, e := range all {
		if e == nil || len(e.Variants) == 0 || e.Variants[0] == nil {
			return nil, fmt.Errorf("--baseline %s: buckets.json entry %d has no variants (not triage's)", dir, i+1)
		}
		if e.Status == "fixed" {
			continue // fixed already then
		}
		e.BaselineRank = i + 1
		base.entries = append(base.entries, e)
	}
	return base, nil
}

// identity is the signatures an entry shows as (its variants'): two entries of two
// runs are one defect when they share one, whatever their ranks, and whether or
// not variants were folded differently.
func identity(e *Bucket) map[string]bool {
	out := map[string]bool{}
	for _, v := range e.Variants {
		if v != nil {
			out[v.Signature.Key()] = true
		}
	}
	return out
}

// baselineCounts is summary.json's "baseline".
type baselineCounts struct {
	Dir   string `json:"dir"`
	New   int    `json:"new"`
	Still int    `json:"still"`
	Fixed int    `json:"fixed"`
	// Recheck counts the baseline's reduced cases rerun first in this build by
	// their outcome: "fails" (the defect shows), "passes", "cannot judge".
	Recheck map[string]int `json:"recheck,omitempty"`
}

// compareBaseline sets each entry's Status against the baseline (and the
// Recheck of the baseline entry it matches) and returns the baseline's entries no
// entry matches, as fixed, and the counts.
func compareBaseline(entries []*Bucket, base *baseline, recheck map[int]string) ([]*Bucket, *baselineCounts) {
	n := &baselineCounts{Dir: base.dir}
	if len(recheck) > 0 {
		n.Recheck = map[string]int{}
		for _, r := range recheck {
			n.Recheck[r]++
		}
	}
	matched := map[*Bucket]bool{}
	for _, e := range entries {
		id := identity(e)
		e.Status, e.Recheck, e.BaselineRank = "new", "", 0
		for _, old := range base.entries {
			for k := range identity(old) {
				if id[k] {
					if e.Status == "new" {
						e.Status, e.Recheck, e.BaselineRank = "still", recheck[old.BaselineRank], old.BaselineRank
					}
					matched[old] = true
					break
				}
			}
		}
		if e.Status == "new" {
			n.New++
		} else {
			n.Still++
		}
	}
	var fixed []*Bucket
	for _, old := range base.entries {
		if matched[old] {
			continue
		}
		f := *old
		f.Status, f.Recheck, f.Report, f.Rerun = "fixed", recheck[old.BaselineRank], "", ""
		if f.Reduced != nil {
			r := *f.Reduced
			r.Page = "" // the baseline's page, not in this directory
			f.Reduced = &r
		}
		fixed = append(fixed, &f)
	}
	n.Fixed = len(fixed)
	return fixed, n
}

// recheckBaseline reruns the baseline's entries' cases (reduced, else the
// representative its entry.json holds) through oracle o and the candidate before
// the corpus: is each defect fixed in this build? It returns each
// rechecked entry's outcome by its baseline rank ("fails", "passes", "cannot
// judge") and says each on stderr.
func (t *triage) recheckBaseline(ctx context.Context, o *client.Client) map[int]string {
	var todo []*Bucket
	html := map[*Bucket]string{}
	for _, e := range t.cfg.base.entries {
		if e.Reduced != nil && e.Reduced.Error == "" && e.Reduced.HTML != "" {
			html[e] = e.Reduced.HTML
		} else if ef := t.cfg.base.entryFile(e); ef != nil {
			html[e] = ef.HTML // not reduced: its representative
		} else {
			continue
		}
		todo = append(todo, e)
	}
	out := map[int]string{}
	if len(todo) == 0 {
		t.say("triage: --baseline %s: no case of its entries to recheck", t.cfg.base.dir)
		return out
	}
	t.say("triage: --baseline: rechecking its entries' %d cases (reduced, else representative) in this build first", len(todo))
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	o.WaitReady(rctx, 500*time.Millisecond) // its engines up: each case is asked once
	cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, t.cfg.parallel)
	for _, e := range todo {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := t.ask(ctx, o, html[e])
			code, why := rerunVerdict(p, variantSignatures(e))
			mu.Lock()
			defer mu.Unlock()
			out[e.BaselineRank] = recheckWords[code]
			t.say("triage: baseline entry #%d %s: %s in this build (%s)", e.BaselineRank, e.Signature.Label(), recheckWords[code], why)
		})
	}
	wg.Wait()
	return out
}

// entryFile is the baseline's entries/N/entry.json of e, nil when it has none
// (an older run) or its rerun is not named entries/N/rerun.sh.
func (b *baseline) entryFile(e *Bucket) *entryFile {
	if !entryRerun.MatchString(e.Rerun) {
		return nil
	}
	ef, err := readEntryFile(filepath.Join(b.dir, filepath.Dir(filepath.FromSlash(e.Rerun))))
	if err != nil {
		return nil
	}
	return ef
}

var entryRerun = regexp.MustCompile(`^entries/[0-9]+/rerun\.sh$`)

// recheckWords names a rerun's exit status.
var recheckWords = map[int]string{exitOK: "passes", exitFail: "fails", exitBadInput: "cannot judge"}

// variantSignatures are an entry's variants' signatures: any of them showing is
// the entry's defect showing.
func variantSignatures(e *Bucket) []Signature {
	var out []Signature
	for _, v := range e.Variants {
		out = append(out, v.Signature)
	}
	return out
}
