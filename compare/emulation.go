package compare

import (
	"maps"
	"slices"
	"strings"
)

// sameEmulation reports whether two emulation sets are the same set: order and
// repeats do not count, and absent (nil) is the empty set. Traces are voted and
// scored only among sides whose sets are the same.
func sameEmulation(a, b []string) bool {
	return slices.Equal(emulationSet(a), emulationSet(b))
}

// emulationSet is s sorted without repeats; nil when empty.
func emulationSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// ComparableEngines splits engines by emulation set: voters is the largest group
// whose sets are the same (SameEmulation); on a tie, the group holding the first
// engine by name, so the choice is deterministic. apart is every other engine: not
// comparable with the voters, so never voted with them and never outvoted. Both
// are sorted.
func ComparableEngines(sets map[string][]string) (voters, apart []string) {
	names := slices.Sorted(maps.Keys(sets))
	for _, lead := range names {
		var group []string
		for _, e := range names {
			if sameEmulation(sets[lead], sets[e]) {
				group = append(group, e)
			}
		}
		if len(group) > len(voters) {
			voters = group
		}
	}
	for _, e := range names {
		if !slices.Contains(voters, e) {
			apart = append(apart, e)
		}
	}
	return voters, apart
}

// EmulationText shows a set for people: "[geolocation, sensors]", "[none]" when empty.
func EmulationText(set []string) string {
	if set = emulationSet(set); len(set) == 0 {
		return "[none]"
	}
	return "[" + strings.Join(set, ", ") + "]"
}
