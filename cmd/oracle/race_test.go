//go:build race

package main

// raceBuild makes TestMain build the oracle binary with -race too when the tests
// run under -race: the end-to-end tests then check the server's own goroutines,
// not only this test process.
const raceBuild = true
