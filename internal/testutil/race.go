//go:build race

package testutil

// race is true when the tests were built with -race.
const race = true
