package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/layout-oracle/oracle/client"
	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/vote"
)

// keep is what a variant must still show to be interesting, judged on the
// three engines' vote (compare.NodeOutcomes), never on one engine's dump.
type keep struct {
	mode    string // "auto", "outlier", "split", "candidate" (--candidate-cmd)
	engine  string // outlier: the outvoted engine
	item    string // outlier: the item's property ("bounding.w"), or "" for any
	cause   compare.Cause
	rootPro string // auto: the cause's first root item's property
}

func parseKeep(s string) (keep, error) {
	switch {
	case s == "auto" || s == "split":
		return keep{mode: s}, nil
	case strings.HasPrefix(s, "outlier="):
		eng, item, _ := strings.Cut(strings.TrimPrefix(s, "outlier="), ":")
		if !slices.Contains(client.Engines, eng) {
			return keep{}, fmt.Errorf("--keep outlier=ENGINE[:ITEM]: engine %q is not one of %s", eng, strings.Join(client.Engines, ", "))
		}
		return keep{mode: "outlier", engine: eng, item: item}, nil
	}
	return keep{}, fmt.Errorf("--keep %q: want auto, outlier=ENGINE[:ITEM] or split", s)
}

// candidateName is the candidate's name among a cause's engines (compare.Attribute).
const candidateName = "candidate"

// outcomes votes one answer; nil when some engine failed or the vote is refused.
func outcomes(dumps map[string]*dump.Dump, errs map[string]string, tol float64) *compare.Outcomes {
	return scored(dumps, errs, nil, tol)
}

// scored is outcomes with a candidate's dump (got, nil: none) scored against the
// vote, its failures attributed to causes as "candidate".
func scored(dumps map[string]*dump.Dump, errs map[string]string, got *dump.Dump, tol float64) *compare.Outcomes {
	if len(errs) > 0 || len(dumps) < 3 {
		return nil
	}
	out, err := compare.NodeOutcomes(dumps, got, tol)
	if err != nil {
		return nil
	}
	return out
}

// resolve fixes auto to the original case's first cause; an error when the
// original does not show what k asks for.
func (k *keep) resolve(o *compare.Outcomes) error {
	if o == nil {
		return fmt.Errorf("the original case has no three-engine vote (an engine failed)")
	}
	switch k.mode {
	case "auto":
		if len(o.Causes) == 0 {
			return fmt.Errorf("the engines agree on every item: nothing to keep")
		}
		k.cause = o.Causes[0]
	case "candidate":
		i := slices.IndexFunc(o.Causes, func(c compare.Cause) bool { return slices.Contains(c.Engines, candidateName) })
		if i < 0 {
			return fmt.Errorf("the candidate fails no item the engines agree on: nothing to keep")
		}
		k.cause = o.Causes[i]
	}
	if len(k.cause.Items) > 0 {
		k.rootPro = k.cause.Items[0].Property
	}
	if !k.holds(o) {
		return fmt.Errorf("the original case does not show %s", k)
	}
	return nil
}

func (k keep) String() string {
	switch k.mode {
	case "auto", "candidate":
		return fmt.Sprintf("%s (%s)", k.cause.Label(), k.rootPro)
	case "outlier":
		if k.item != "" {
			return k.engine + " outvoted on " + k.item
		}
		return k.engine + " outvoted"
	}
	return "a split vote"
}

// holds says whether o shows what k keeps.
func (k keep) holds(o *compare.Outcomes) bool {
	if o == nil {
		return false
	}
	switch k.mode {
	case "auto", "candidate":
		// The same engines outvoted (or split) on the same kind of item, on a box of
		// the same tag: some cause with the same engines, split, kind and tag whose
		// own (root) items include the original root item's property. For the
		// candidate: some cause the candidate fails (whichever engines are outvoted
		// beside it), of the same kind and tag.
		for _, c := range o.Causes {
			same := slices.Equal(c.Engines, k.cause.Engines) && c.Split == k.cause.Split
			if k.mode == "candidate" {
				same = slices.Contains(c.Engines, candidateName)
			}
			if c.Tag != k.cause.Tag || c.Kind != k.cause.Kind || !same {
				continue
			}
			if k.rootPro == "" || k.rootPro == "shape" {
				return true
			}
			for _, it := range c.Items {
				if it.Node == c.Node && it.Property == k.rootPro {
					return true
				}
			}
		}
		return false
	case "outlier":
		if o.ShapeOutlier == k.engine && (k.item == "" || k.item == "shape") {
			return true
		}
		for _, n := range o.Nodes {
			for _, it := range n.Items {
				if it.Vote == vote.Majority && it.Outlier == k.engine && (k.item == "" || it.Property == k.item) {
					return true
				}
			}
		}
		return false
	}
	for _, n := range o.Nodes { // split
		for _, it := range n.Items {
			if it.Vote == vote.Split || it.Vote == vote.Disagree {
				return true
			}
		}
	}
	return false
}
