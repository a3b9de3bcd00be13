package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/internal/cli"
)

// benchConfig is one harness run: the planted candidate through triage over a
// corpus, every entry of triage's buckets.json explained by the defects.
type benchConfig struct {
	corpus      string
	out         string
	oracleBin   string
	triageBin   string
	plantedBin  string // this binary: the candidate command triage runs
	engine      string
	defects     []Defect
	reduce      int
	top         int
	parallel    int
	triageFlags []string
	log         io.Writer // progress and the sub-processes' stderr
}

// benchCase is one corpus case the candidate can read (inline html, no script).
type benchCase struct {
	ID   string
	HTML string
}

// Entry is what the harness reads of one buckets.json entry: today's bucket
// (signature, cases, reduced) and the per-defect entry (signature with a tag or a
// list of tags, variants, agreeing_engines) alike.
type Entry struct {
	Signature struct {
		Kind  string          `json:"kind"`
		Tag   json.RawMessage `json:"tag"`
		List  []string        `json:"tags"` // every tag of an entry; tag is then its first
		Props []string        `json:"properties"`
		Sign  string          `json:"sign"`
		Error string          `json:"error"`
	} `json:"signature"`
	Cases           []string `json:"cases"`
	AgreeingEngines []string `json:"agreeing_engines"`
	Reduced         *struct {
		HTML       string `json:"html"`
		Reproduced bool   `json:"reproduced"`
		Error      string `json:"error"`
	} `json:"reduced"`
}

// Tags is the signature's tags, or its tag (a list in an older buckets.json).
func (e Entry) Tags() []string {
	if len(e.Signature.List) > 0 {
		return e.Signature.List
	}
	var one string
	if json.Unmarshal(e.Signature.Tag, &one) == nil {
		if one == "" {
			return nil
		}
		return []string{one}
	}
	var many []string
	json.Unmarshal(e.Signature.Tag, &many)
	return many
}

// Label is the signature in one phrase, as triage's report writes it.
func (e Entry) Label() string {
	if e.Signature.Kind == "error" {
		return "candidate error: " + e.Signature.Error
	}
	l := e.Signature.Kind + " " + strings.Join(e.Tags(), ",")
	if len(e.Signature.Props) > 0 {
		l += " " + strings.Join(e.Signature.Props, ",")
	}
	if e.Signature.Sign != "" {
		l += " " + e.Signature.Sign
	}
	return l
}

// Explained is one entry with the defects that explain it and by which rule.
type Explained struct {
	Rank       int      `json:"rank"` // 1-based, buckets.json's order
	Label      string   `json:"label"`
	Cases      int      `json:"cases"`
	Reduced    bool     `json:"reduced"`
	Reproduced bool     `json:"reproduced"`
	Defects    []string `json:"defects"`
	Rule       string   `json:"rule"` // "reduced" (a) or "cases" (b), "" when none explains it
	// Inherited: no planted defect explains it, and the unplanted engine gives the
	// candidate's value (agreeing_engines holds it): a difference of the engine the
	// candidate is built from against the other two, which the candidate inherits.
	// It is a real difference of the candidate, not triage's noise, and is counted
	// apart from both.
	Inherited bool     `json:"inherited"`
	Agreeing  []string `json:"agreeing_engines"`
}

// Result is a harness run's measurements (report.json; the table prints them).
type Result struct {
	Cases         int                 `json:"cases"`
	Truth         map[string][]string `json:"truth"` // case id -> defects that change its dump alone
	Hits          map[string]int      `json:"hits"`  // defect -> cases it changes
	Entries       []Explained         `json:"entries"`
	Top           int                 `json:"top"`
	Found         map[string]bool     `json:"found"` // defect -> owns a top entry whose reduced case reproduced
	PerDefect     map[string]int      `json:"entries_per_defect"`
	BestRank      map[string]int      `json:"best_rank"`
	Noise         int                 `json:"noise"`      // entries no planted defect explains, inherited ones not counted
	Inherited     int                 `json:"inherited"`  // entries of the unplanted engine's own differences (Explained.Inherited)
	CrashRank     int                 `json:"crash_rank"` // 0: no entry of the crash
	Reduced       int                 `json:"reduced"`    // entries with a reduced case
	Reproduced    int                 `json:"reproduced"` // of those, reproduced
	TruthSeconds  float64             `json:"truth_seconds"`
	TriageSeconds float64             `json:"triage_seconds"`
	TriageExit    int                 `json:"triage_exit"`
	WallSeconds   float64             `json:"wall_seconds"`
	Defects       []string            `json:"defects"`
}

func readBenchCorpus(file string) ([]benchCase, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []benchCase
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var f struct {
			ID     json.RawMessage `json:"id"`
			Op     string          `json:"op"`
			HTML   *string         `json:"html"`
			Script *string         `json:"script"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, n+1, err)
		}
		if f.Op != "" || f.HTML == nil || f.Script != nil && *f.Script != "" {
			continue // triage skips these too
		}
		var id string
		if json.Unmarshal(f.ID, &id) != nil {
			id = string(f.ID)
		}
		out = append(out, benchCase{ID: id, HTML: *f.HTML})
	}
	return out, nil
}

// caseRuns is one case's ground truth: its unplanted dump and its dump under each
// CSS defect alone, and the crash defects whose trigger matches it.
type caseRuns struct {
	base    *dump.Dump
	alone   map[string]*dump.Dump
	crashes []string
}

// changedBy returns the CSS defects of ds that change the case against the
// unplanted engine on a node of tags (all nodes when tags is empty) in an item of
// props (any item when props is empty); with crash, the crash defects whose
// trigger matches it instead.
func (r *caseRuns) changedBy(ds []Defect, tags, props []string, crash bool) []string {
	var hit []string
	for _, d := range ds {
		switch {
		case (d.Crash != nil) != crash:
		case crash:
			if slices.Contains(r.crashes, d.Name) {
				hit = append(hit, d.Name)
			}
		default:
			if got := r.alone[d.Name]; got != nil && differs(r.base, got, tags, props) {
				hit = append(hit, d.Name)
			}
		}
	}
	return hit
}

// runCase runs html unplanted and under each of ds alone.
func runCase(ctx context.Context, p *planter, html string, ds []Defect) (*caseRuns, error) {
	base, err := p.dump(ctx, html, nil)
	if err != nil {
		return nil, err
	}
	r := &caseRuns{base: base, alone: map[string]*dump.Dump{}}
	for _, d := range ds {
		if d.Crash != nil {
			if d.Crash.MatchString(html) {
				r.crashes = append(r.crashes, d.Name)
			}
			continue
		}
		if r.alone[d.Name], err = p.dump(ctx, html, []Defect{d}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// groundTruth runs every case unplanted and under each defect alone.
func groundTruth(ctx context.Context, p *planter, cases []benchCase, ds []Defect, parallel int) (map[string]*caseRuns, error) {
	truth := map[string]*caseRuns{}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, c := range cases {
		sem <- struct{}{}
		wg.Add(1)
		go func(c benchCase) {
			defer func() { <-sem; wg.Done() }()
			r, err := runCase(ctx, p, c.HTML, ds)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("case %s: %w", c.ID, err)
				}
				return
			}
			truth[c.ID] = r
		}(c)
	}
	wg.Wait()
	return truth, firstErr
}

// tolerance is the difference a planted rule must make to count: the oracle's
// default geometry tolerance.
const tolerance = dump.DefaultTolerance

// differs says whether got differs from base on a node whose tag is in tags (any
// node when tags is empty) in an item that props names (triage's folded
// signature properties: bounding.w, bounding.h, rects.count, offset.x, offset.y,
// a style property or a folded one such as padding or display=block; any item
// when props is empty). Dumps of different node counts differ.
func differs(base, got *dump.Dump, tags, props []string) bool {
	if len(base.Nodes) != len(got.Nodes) {
		return true
	}
	for i := range base.Nodes {
		if len(tags) > 0 && !slices.Contains(tags, base.Nodes[i].Tag) {
			continue
		}
		if len(props) == 0 {
			if nodeDiffers(base, got, i, "") {
				return true
			}
			continue
		}
		for _, prop := range props {
			if nodeDiffers(base, got, i, prop) {
				return true
			}
		}
	}
	return false
}

func nodeDiffers(base, got *dump.Dump, i int, prop string) bool {
	b, g := &base.Nodes[i], &got.Nodes[i]
	far := func(x, y float64) bool { return math.Abs(x-y) > tolerance }
	sizes := func(h bool) bool {
		pick := func(r dump.Rect) float64 {
			if h {
				return r.H
			}
			return r.W
		}
		if far(pick(b.Bounding), pick(g.Bounding)) || len(b.Rects) != len(g.Rects) {
			return true
		}
		for j := range b.Rects {
			if far(pick(b.Rects[j]), pick(g.Rects[j])) {
				return true
			}
		}
		return false
	}
	offset := func(x bool) bool {
		pb, pg := 0.0, 0.0
		ob, og := b.Bounding.Y, g.Bounding.Y
		if x {
			ob, og = b.Bounding.X, g.Bounding.X
		}
		if b.Parent >= 0 {
			if x {
				pb, pg = base.Nodes[b.Parent].Bounding.X, got.Nodes[g.Parent].Bounding.X
			} else {
				pb, pg = base.Nodes[b.Parent].Bounding.Y, got.Nodes[g.Parent].Bounding.Y
			}
		}
		return far(ob-pb, og-pg)
	}
	styleDiff := func(match func(name string) bool) bool {
		for k, v := range b.Style {
			if match(k) && g.Style[k] != v {
				return true
			}
		}
		return false
	}
	switch {
	case prop == "":
		return sizes(true) || sizes(false) || offset(true) || offset(false) || styleDiff(func(string) bool { return true })
	case prop == "bounding.h":
		return sizes(true)
	case prop == "bounding.w":
		return sizes(false)
	case prop == "rects.count":
		return len(b.Rects) != len(g.Rects)
	case prop == "offset.x":
		return offset(true)
	case prop == "offset.y":
		return offset(false)
	}
	name, _, _ := strings.Cut(prop, "=")
	name = strings.TrimPrefix(name, "style.")
	switch name { // the folded length properties
	case "min-size":
		return styleDiff(func(k string) bool { return k == "min-width" || k == "min-height" })
	case "max-size":
		return styleDiff(func(k string) bool { return k == "max-width" || k == "max-height" })
	case "padding", "margin", "border-width":
		pre, suf := name, ""
		if name == "border-width" {
			pre, suf = "border", "-width"
		}
		return styleDiff(func(k string) bool { return strings.HasPrefix(k, pre+"-") && strings.HasSuffix(k, suf) })
	}
	return styleDiff(func(k string) bool { return k == name })
}

// explain finds the defects that explain e (docs/planted.md, "Which defect
// explains an entry"): (a) when e has a reduced case that reproduced, the defects
// that, each alone, change that case's dump against the unplanted engine on the
// signature (its tags and properties; an error entry: the crash defects whose
// trigger matches it); (b) otherwise, the defects that do so on more than half of
// e's cases, read from the ground truth.
func explain(ctx context.Context, p *planter, e Entry, ds []Defect, truth map[string]*caseRuns) ([]string, string, error) {
	crash := e.Signature.Kind == "error"
	var props []string
	if !crash && e.Signature.Kind != "shape" {
		props = e.Signature.Props
	}
	if e.Reduced != nil && e.Reduced.HTML != "" && e.Reduced.Reproduced {
		r, err := runCase(ctx, p, e.Reduced.HTML, ds)
		if err != nil {
			return nil, "", err
		}
		if hit := r.changedBy(ds, e.Tags(), props, crash); len(hit) > 0 {
			return hit, "reduced", nil
		}
		return nil, "", nil
	}
	if hit := byCases(e, ds, truth, props, crash); len(hit) > 0 {
		return hit, "cases", nil
	}
	return nil, "", nil
}

// byCases is rule (b): the defects that change more than half of e's cases on
// its signature.
func byCases(e Entry, ds []Defect, truth map[string]*caseRuns, props []string, crash bool) []string {
	n := map[string]int{}
	for _, id := range e.Cases {
		if r := truth[id]; r != nil {
			for _, d := range r.changedBy(ds, e.Tags(), props, crash) {
				n[d]++
			}
		}
	}
	var hit []string
	for _, d := range ds {
		if 2*n[d.Name] > len(e.Cases) {
			hit = append(hit, d.Name)
		}
	}
	return hit
}

// score folds the explained entries into the table's numbers.
func score(res *Result, ds []Defect) {
	res.Found = map[string]bool{}
	res.PerDefect = map[string]int{}
	res.BestRank = map[string]int{}
	for _, d := range ds {
		res.PerDefect[d.Name] = 0
		res.Found[d.Name] = false
	}
	res.Noise, res.Inherited, res.CrashRank, res.Reduced, res.Reproduced = 0, 0, 0, 0, 0
	for _, e := range res.Entries {
		if e.Reduced {
			res.Reduced++
		}
		if e.Reproduced {
			res.Reproduced++
		}
		switch {
		case e.Inherited:
			res.Inherited++
		case len(e.Defects) == 0:
			res.Noise++
		}
		for _, d := range e.Defects {
			res.PerDefect[d]++
			if res.BestRank[d] == 0 {
				res.BestRank[d] = e.Rank
			}
			if e.Rank <= res.Top && e.Reproduced {
				res.Found[d] = true
			}
			if def := findDefect(d); def != nil && def.Crash != nil && res.CrashRank == 0 {
				res.CrashRank = e.Rank
			}
		}
	}
}

// runBench is the whole harness: one oracle, the daemon on a socket, ground
// truth, triage with the planted candidate, the entries explained.
func runBench(ctx context.Context, cfg benchConfig) (*Result, error) {
	start := time.Now()
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return nil, err
	}
	cases, err := readBenchCorpus(cfg.corpus)
	if err != nil {
		return nil, err
	}
	p, err := startPlanter(ctx, cfg.oracleBin, cfg.engine, 2, io.Discard)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	sock := filepath.Join(cfg.out, "planted.sock")
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- serveSocket(sctx, ln, p) }()
	defer func() { stop(); <-served }()

	res := &Result{Cases: len(cases), Top: cfg.top, Defects: names(cfg.defects)}
	t0 := time.Now()
	truth, err := groundTruth(ctx, p, cases, cfg.defects, cfg.parallel)
	if err != nil {
		return nil, fmt.Errorf("ground truth: %w", err)
	}
	res.TruthSeconds = time.Since(t0).Seconds()
	res.Truth, res.Hits = map[string][]string{}, map[string]int{}
	for id, r := range truth {
		hit := append(r.changedBy(cfg.defects, nil, nil, false), r.crashes...)
		res.Truth[id] = hit
		for _, d := range hit {
			res.Hits[d]++
		}
	}
	fmt.Fprintf(cfg.log, "planted: ground truth of %d cases in %.1f s: %v\n", len(cases), res.TruthSeconds, res.Hits)

	triOut := filepath.Join(cfg.out, "triage")
	cand := fmt.Sprintf("%s run --socket %s --defects %s", cli.ShellQuote(cfg.plantedBin), cli.ShellQuote(sock), strings.Join(names(cfg.defects), ","))
	args := append([]string{"--candidate-cmd", cand, "--out", triOut, "--oracle", cfg.oracleBin,
		fmt.Sprintf("--reduce=%d", cfg.reduce)}, cfg.triageFlags...)
	args = append(args, cfg.corpus)
	cmd := exec.CommandContext(ctx, cfg.triageBin, args...)
	logFile, err := os.Create(filepath.Join(cfg.out, "triage.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(cfg.log, logFile), logFile
	t0 = time.Now()
	err = cmd.Run()
	res.TriageSeconds = time.Since(t0).Seconds()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 1: // the candidate fails something: expected
		res.TriageExit = 1
	case err != nil:
		return nil, fmt.Errorf("triage: %v (its log: %s)", err, logFile.Name())
	}

	b, err := os.ReadFile(filepath.Join(triOut, "buckets.json"))
	if err != nil {
		return nil, err
	}
	var entries []Entry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("buckets.json: %w", err)
	}
	for i, e := range entries {
		ex := Explained{Rank: i + 1, Label: e.Label(), Cases: len(e.Cases), Reduced: e.Reduced != nil && e.Reduced.HTML != "", Agreeing: e.AgreeingEngines}
		ex.Reproduced = ex.Reduced && e.Reduced.Reproduced
		ex.Defects, ex.Rule, err = explain(ctx, p, e, cfg.defects, truth)
		if err != nil {
			return nil, fmt.Errorf("entry %d (%s): %w", i+1, ex.Label, err)
		}
		ex.Inherited = len(ex.Defects) == 0 && slices.Contains(e.AgreeingEngines, cfg.engine)
		res.Entries = append(res.Entries, ex)
	}
	score(res, cfg.defects)
	if cfg.reduce > 0 && len(entries) > 0 && res.Reduced == 0 {
		// Recall counts reproduced reduced cases only: say why it is 0.
		fmt.Fprintf(cfg.log, "planted: triage reduced no entry (asked for %d): see %s\n", cfg.reduce, logFile.Name())
	}
	res.WallSeconds = time.Since(start).Seconds()
	rb, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(cfg.out, "report.json"), append(rb, '\n'), 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// printTable writes the harness's table: per defect, then the totals.
func printTable(w io.Writer, res *Result, ds []Defect) {
	fmt.Fprintf(w, "| defect | cases it changes | entries it explains | best rank | found (top %d, reproduced) |\n", res.Top)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	found, css := 0, 0
	for _, d := range ds {
		rank := "-"
		if r := res.BestRank[d.Name]; r > 0 {
			rank = fmt.Sprint(r)
		}
		fmt.Fprintf(w, "| %s | %d of %d | %d | %s | %v |\n", d.Name, res.Hits[d.Name], res.Cases, res.PerDefect[d.Name], rank, res.Found[d.Name])
		if d.Crash == nil {
			css++
			if res.Found[d.Name] {
				found++
			}
		}
	}
	fmt.Fprintln(w)
	crash := "none"
	if res.CrashRank > 0 {
		crash = fmt.Sprint(res.CrashRank)
	}
	fmt.Fprintf(w, "recall: %d of %d CSS defects own a top-%d entry whose reduced case reproduced\n", found, css, res.Top)
	fmt.Fprintf(w, "entries: %d (%d reduced, %d reproduced); noise (explained by no planted defect): %d; inherited (the unplanted engine's own difference, which it agrees with): %d\n",
		len(res.Entries), res.Reduced, res.Reproduced, res.Noise, res.Inherited)
	fmt.Fprintf(w, "crash rank: %s\n", crash)
	fmt.Fprintf(w, "wall: %.1f s (ground truth %.1f s, triage %.1f s)\n", res.WallSeconds, res.TruthSeconds, res.TriageSeconds)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| rank | entry | cases | reduced | reproduced | explained by | rule |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	sort.SliceStable(res.Entries, func(i, j int) bool { return res.Entries[i].Rank < res.Entries[j].Rank })
	for _, e := range res.Entries {
		by := strings.Join(e.Defects, ", ")
		switch {
		case e.Inherited:
			by = "(inherited: " + strings.Join(e.Agreeing, ", ") + " agrees)"
		case by == "":
			by = "(noise)"
		}
		fmt.Fprintf(w, "| %d | %s | %d | %v | %v | %s | %s |\n", e.Rank, e.Label, e.Cases, e.Reduced, e.Reproduced, by, e.Rule)
	}
}
