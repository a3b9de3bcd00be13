package main

// Ranking: the entries in order, best first, and again once reduction has
// split, merged and folded them.

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// ranked is every entry, best first (docs/triage.md, "Ranking"): by severity,
// then (aloneFirst: the entries where the candidate is alone against all the
// engines first) by what a fix buys, greedily: each next entry is the one that
// covers most of the failures left once the entries above it are fixed, a case
// counting 1/its unfixed entries, then the one whose fix makes the most cases
// pass. Passes alone are myopic where defects share cases: a defect on every P
// whose cases all hold a second defect makes none pass by itself, and would rank
// below a two-case difference.
func (b *bucketer) ranked(aloneFirst bool) []*Bucket {
	for _, v := range b.by {
		v.Display = ""
		best := 0
		for d, n := range v.displays {
			if n*2 > v.Causes && n > best {
				v.Display, best = d, n
			}
		}
		v.AgreeingEngines = []string{}
		for e, n := range v.agree {
			if n*2 > v.Causes {
				v.AgreeingEngines = append(v.AgreeingEngines, e)
			}
		}
		slices.Sort(v.AgreeingEngines)
	}
	byKey := map[string]*Bucket{}
	var entries []*Bucket
	for _, k := range slices.Sorted(maps.Keys(b.by)) {
		v := b.by[k]
		ek := entryKey(v)
		e := byKey[ek]
		if e == nil {
			e = &Bucket{key: ek}
			byKey[ek] = e
			entries = append(entries, e)
		}
		e.Variants = append(e.Variants, v)
	}
	for _, e := range entries {
		e.finish()
	}
	return b.rank(entries, aloneFirst)
}

// rank orders entries as ranked says, filling each one's Cases and Fixes.
func (b *bucketer) rank(entries []*Bucket, aloneFirst bool) []*Bucket {
	entryOf := map[string]*Bucket{} // variant key -> entry
	for _, e := range entries {
		e.Cases = nil
		for _, v := range e.Variants {
			entryOf[v.key] = e
		}
	}
	// Cases of each entry, in corpus order, and entries of each case.
	caseEntries := map[string][]*Bucket{}
	for _, id := range b.caseIDs {
		seen := map[*Bucket]bool{}
		for _, k := range b.byCase[id] {
			e := entryOf[k]
			if !seen[e] {
				seen[e] = true
				e.Cases = append(e.Cases, id)
				caseEntries[id] = append(caseEntries[id], e)
			}
		}
	}
	tier := func(e *Bucket) int {
		_, sev := severity(e.Variants[0].Signature)
		t := 2 * sev
		if aloneFirst && sev == 3 && len(e.AgreeingEngines) > 0 {
			t++
		}
		return t
	}
	fixed := map[*Bucket]bool{}
	left := func(id string) int { // entries of case id not fixed yet
		n := 0
		for _, e := range caseEntries[id] {
			if !fixed[e] {
				n++
			}
		}
		return n
	}
	gain := func(e *Bucket) (int, float64) {
		pass, part := 0, 0.0
		for _, id := range e.Cases {
			l := left(id)
			if l == 1 {
				pass++
			}
			part += 1 / float64(l)
		}
		return pass, part
	}
	var out []*Bucket
	for len(out) < len(entries) {
		var best *Bucket
		var bestPass int
		var bestPart float64
		for _, e := range entries {
			if fixed[e] {
				continue
			}
			pass, part := gain(e)
			if best == nil || cmp.Or(cmp.Compare(tier(e), tier(best)), -cmp.Compare(part, bestPart), -cmp.Compare(pass, bestPass),
				-cmp.Compare(len(e.Cases), len(best.Cases)), -cmp.Compare(e.Causes, best.Causes),
				-cmp.Compare(e.Items, best.Items), strings.Compare(e.key, best.key)) < 0 {
				best, bestPass, bestPart = e, pass, part
			}
		}
		best.Fixes = bestPass
		fixed[best] = true
		out = append(out, best)
	}
	return out
}

// refine applies the evidence reduction gathered and ranks the entries again:
// a variant whose tag, swapped into the entry's reduced case, did not fail the
// same way (split) becomes an entry of its own (with the others of its tag),
// and entries of one kind and properties whose reduced cases are the same page
// are one entry.
func (b *bucketer) refine(entries []*Bucket, aloneFirst bool) []*Bucket {
	var out []*Bucket
	for _, e := range entries {
		out = append(out, e)
		if len(e.split) == 0 {
			continue
		}
		byTag := map[string]*Bucket{}
		for _, v := range e.split {
			n := byTag[v.Signature.Tag]
			if n == nil {
				n = &Bucket{key: e.key + "|" + v.Signature.Tag}
				byTag[v.Signature.Tag] = n
				out = append(out, n)
			}
			n.Variants = append(n.Variants, v)
			e.Variants = slices.DeleteFunc(e.Variants, func(x *Variant) bool { return x == v })
		}
		for _, n := range byTag {
			n.finish()
		}
		e.split = nil
		e.finish()
	}
	same := map[string]*Bucket{}
	merged := out[:0]
	var sheet *Bucket // the stylesheet-parsing entry
	for _, e := range out {
		if e.stylesheet {
			if sheet != nil {
				sheet.Variants = append(sheet.Variants, e.Variants...)
				sheet.Merged = append(sheet.Merged, e.Signature.Label())
				sheet.finish()
				continue
			}
			sheet = e
		}
		if r := e.Reduced; r != nil && r.Reproduced && r.Error == "" {
			// The same page, and the same kind and properties: two defects that
			// fall on one box (a wrong margin and a wrong height) reduce to one
			// page too, and stay two entries.
			page := strings.Join(append(strings.Fields(r.HTML), e.Signature.Kind, strings.Join(e.Signature.Props, ",")), " ")
			if into := same[page]; into != nil && into.Severity == e.Severity {
				into.Variants = append(into.Variants, e.Variants...)
				into.Merged = append(into.Merged, e.Signature.Label())
				into.finish()
				continue
			}
			same[page] = e
		}
		merged = append(merged, e)
	}
	return b.rank(foldConsequences(merged), aloneFirst)
}

// foldConsequences folds an entry into another whose defect it only shows
// through: every case of the entry is one of the other's, its reduced case still
// fails one of the other's signatures (no smaller page shows it without that
// failure), and the other's reduced case fails nothing else (its page shows its
// defect alone). A table cell padding defect on TH shows as the width and height
// of the TD beside it, in a subset of its cases, and those reduce to tables that
// keep the TH padding. Two defects that fall on one box keep two entries: each
// reduced case holds the other's failure too, so neither shows alone.
func foldConsequences(entries []*Bucket) []*Bucket {
	alone := func(e *Bucket) bool {
		r := e.Reduced
		return r != nil && r.Reproduced && r.Error == "" && len(r.OtherFailures) == 0 && e.Severity == "failure"
	}
	into := func(e *Bucket) *Bucket {
		r := e.Reduced
		if r == nil || !r.Reproduced || r.Error != "" || e.Severity != "failure" {
			return nil
		}
		for _, f := range entries {
			if f == e || !alone(f) || len(f.Cases) < len(e.Cases) || !subset(e.Cases, f.Cases) {
				continue
			}
			for _, v := range f.Variants {
				if slices.Contains(r.OtherFailures, v.Signature.Label()) {
					return f
				}
			}
		}
		return nil
	}
	folded := map[*Bucket]*Bucket{}
	for _, e := range entries {
		if f := into(e); f != nil {
			folded[e] = f
		}
	}
	var out []*Bucket
	for _, e := range entries {
		f, ok := folded[e]
		if !ok {
			out = append(out, e)
			continue
		}
		f.Variants = append(f.Variants, e.Variants...)
		f.Merged = append(f.Merged, e.Signature.Label())
	}
	for _, f := range folded {
		f.finish()
	}
	return out
}

// subset says every id of a is in b.
func subset(a, b []string) bool {
	in := make(map[string]bool, len(b))
	for _, id := range b {
		in[id] = true
	}
	for _, id := range a {
		if !in[id] {
			return false
		}
	}
	return true
}
