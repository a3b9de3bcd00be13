package client

import "testing"

// Unit test of the flag check every tool uses before adding --store=off.
func TestNamesStore(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--store", "s.db"}, true},
		{[]string{"--store=off"}, true},
		{[]string{"-store=x"}, true},
		{[]string{"--store-min-runs=2", "--store-max", "1G"}, false},
		{[]string{"--docroot", "store"}, false},
	} {
		if got := NamesStore(c.args); got != c.want {
			t.Errorf("NamesStore(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
