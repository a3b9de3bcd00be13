//go:build race

package testutil

// Race is true when the tests were built with -race.
const Race = true
