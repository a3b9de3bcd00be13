// Package reduce shrinks a geometry request while an interestingness test holds
// (docs/reduce.md): hierarchical delta debugging over the DOM tree (drop subtrees,
// unwrap elements, drop attributes), then CSS (rules, selectors, declarations,
// value components), then text words and script statements. It knows nothing of
// browsers: the test decides, a batch of variants at a time, and each distinct
// variant reaches it at most once.
package reduce

import (
	"context"
	"crypto/sha256"
	"time"
)

// Variant is one candidate request: the fields a geometry request's answer
// depends on.
type Variant struct {
	HTML   string `json:"html"`
	Script string `json:"script,omitempty"`
}

// Size is the variant's bytes (html plus script).
func (v Variant) Size() int { return len(v.HTML) + len(v.Script) }

// key identifies a variant for the cache: a hash of its serialized fields.
func (v Variant) key() [32]byte {
	h := sha256.New()
	h.Write([]byte(v.HTML))
	h.Write([]byte{0})
	h.Write([]byte(v.Script))
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

// test reports, for each variant, whether it is interesting. It may evaluate
// them concurrently; the result has one entry per variant, in order.
type test func(ctx context.Context, vs []Variant) []bool

// Options tune a reduction.
type Options struct {
	// Parallel is how many variants go to the test in one batch (default 4):
	// the reducer takes the first interesting one of a batch in order, so the
	// result does not depend on which finished first.
	Parallel int
	// Rounds bounds the passes over every reducer (default 4); a round that
	// shrinks nothing ends the reduction earlier.
	Rounds int
	// Progress, when set, is called after each batch.
	Progress func(Stats)
}

// Stats describe a reduction.
type Stats struct {
	BytesBefore int           `json:"bytes_before"`
	BytesAfter  int           `json:"bytes_after"`
	Tests       int           `json:"tests"`      // distinct variants the test evaluated
	CacheHits   int           `json:"cache_hits"` // variants answered from the cache
	Batches     int           `json:"batches"`
	Wall        time.Duration `json:"wall_ns"`
}

// reducer holds one reduction's state: the best variant so far and the cache.
type reducer struct {
	test  test
	opts  Options
	cache map[[32]byte]bool
	best  Variant
	stats Stats
	start time.Time
}

// Reduce returns the smallest variant it finds for which test holds, starting
// from v. If test does not hold for v itself, it returns v and ok false. A
// cancelled ctx ends it early with the best variant so far.
func Reduce(ctx context.Context, v Variant, test test, opts Options) (best Variant, stats Stats, ok bool) {
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	if opts.Rounds <= 0 {
		opts.Rounds = 4
	}
	r := &reducer{test: test, opts: opts, cache: map[[32]byte]bool{}, best: v, start: time.Now()}
	r.stats.BytesBefore = v.Size()
	defer func() {
		r.stats.BytesAfter = r.best.Size()
		r.stats.Wall = time.Since(r.start)
		best, stats = r.best, r.stats
	}()
	if !r.eval(ctx, []Variant{v})[0] {
		return
	}
	ok = true
	// The DOM passes work on the parsed and re-serialized document; a case whose
	// serialization does not keep what is interesting is reduced as raw lines.
	dom := false
	if parsed, err := parse(v); err == nil {
		if re, err := parsed.render(nil); err == nil && (re == v || r.eval(ctx, []Variant{re})[0]) {
			dom = true
			r.best = re
		}
	}
	for range opts.Rounds {
		before := r.best.Size()
		passes := rawPasses
		if dom {
			passes = domPasses
		}
		for _, p := range passes {
			r.runPass(ctx, p)
		}
		if ctx.Err() != nil || r.best.Size() >= before {
			break
		}
	}
	if dom {
		r.trimImplied(ctx)
	}
	if r.best.Size() > v.Size() {
		// The serialization added what parsing implied (<p>x came back as
		// <p>x</p>) and nothing came off: the original is the smaller case.
		r.best = v
	}
	return
}

// eval answers a batch, from the cache where it can; it asks test about each
// distinct unseen variant once.
func (r *reducer) eval(ctx context.Context, vs []Variant) []bool {
	out := make([]bool, len(vs))
	var ask []Variant
	idx := map[[32]byte][]int{}
	for i, v := range vs {
		k := v.key()
		if res, seen := r.cache[k]; seen {
			out[i] = res
			r.stats.CacheHits++
			continue
		}
		if _, queued := idx[k]; !queued {
			ask = append(ask, v)
		} else {
			r.stats.CacheHits++
		}
		idx[k] = append(idx[k], i)
	}
	if len(ask) == 0 || ctx.Err() != nil {
		return out
	}
	res := r.test(ctx, ask)
	r.stats.Tests += len(ask)
	r.stats.Batches++
	for j, v := range ask {
		k := v.key()
		got := j < len(res) && res[j]
		if ctx.Err() == nil { // a cancelled answer is not a verdict
			r.cache[k] = got
		}
		for _, i := range idx[k] {
			out[i] = got
		}
	}
	if r.opts.Progress != nil {
		r.stats.BytesAfter = r.best.Size()
		r.stats.Wall = time.Since(r.start)
		r.opts.Progress(r.stats)
	}
	return out
}

// firstInteresting evaluates candidates in batches of Parallel and returns the
// index of the first interesting one, or -1.
func (r *reducer) firstInteresting(ctx context.Context, cands []Variant) int {
	for lo := 0; lo < len(cands) && ctx.Err() == nil; lo += r.opts.Parallel {
		hi := min(lo+r.opts.Parallel, len(cands))
		for i, ok := range r.eval(ctx, cands[lo:hi]) {
			if ok {
				return lo + i
			}
		}
	}
	return -1
}

// A pass enumerates, on the current best variant, units that can each be
// applied (removed, unwrapped, shortened) independently, and builds the variant
// with a set of them applied. levels > 1 runs ddmin once per level (the tree's
// depth, so parents go before their children), re-enumerating after each.
type pass struct {
	name   string
	levels func(v Variant) int
	units  func(v Variant, level int) (n int, build func(applied []bool) (Variant, bool))
}

// runPass runs ddmin for each level of the pass on the best variant.
func (r *reducer) runPass(ctx context.Context, p pass) {
	levels := 1
	if p.levels != nil {
		levels = p.levels(r.best)
	}
	for level := 0; level < levels && ctx.Err() == nil; level++ {
		if p.levels != nil {
			levels = p.levels(r.best) // a removal can make the tree shallower
		}
		n, build := p.units(r.best, level)
		if n == 0 {
			continue
		}
		r.ddmin(ctx, n, build)
	}
}

// ddmin is delta debugging's complement loop over n units: try applying each of
// k chunks (on top of the chunks applied so far), take the first interesting
// one, and refine k until every single unit was tried.
func (r *reducer) ddmin(ctx context.Context, n int, build func(applied []bool) (Variant, bool)) {
	applied := make([]bool, n)
	var live []int // units not yet applied
	for i := range n {
		live = append(live, i)
	}
	k := 2
	if n == 1 {
		k = 1
	}
	for len(live) > 0 && ctx.Err() == nil {
		k = min(k, len(live))
		chunks := split(live, k)
		var cands []Variant
		var which []int
		for ci, c := range chunks {
			try := append([]bool(nil), applied...)
			for _, u := range c {
				try[u] = true
			}
			v, ok := build(try)
			if !ok || v.Size() >= r.best.Size() {
				continue
			}
			cands = append(cands, v)
			which = append(which, ci)
		}
		if i := r.firstInteresting(ctx, cands); i >= 0 {
			for _, u := range chunks[which[i]] {
				applied[u] = true
			}
			r.best = cands[i]
			live = without(live, chunks[which[i]])
			k = max(k-1, 2)
			continue
		}
		if k >= len(live) {
			return
		}
		k = min(2*k, len(live))
	}
}

// split cuts xs into k chunks of near-equal length.
func split(xs []int, k int) [][]int {
	var out [][]int
	for i := range k {
		lo, hi := i*len(xs)/k, (i+1)*len(xs)/k
		if hi > lo {
			out = append(out, xs[lo:hi])
		}
	}
	return out
}

func without(xs, drop []int) []int {
	gone := map[int]bool{}
	for _, d := range drop {
		gone[d] = true
	}
	var out []int
	for _, x := range xs {
		if !gone[x] {
			out = append(out, x)
		}
	}
	return out
}
