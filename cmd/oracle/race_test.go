//go:build race

package main

import "os"

// raceBuild makes TestMain build the oracle binary with -race too, when the tests
// run under -race and ORACLE_TEST_RACE_BINARY is set: the end-to-end tests then
// check the server's own goroutines (this found playwright-go's racy
// Page.IsClosed). Not by default: the race-built binary cannot serve the 50 MB
// hostile case within its 10 s deadline on 2 cores (no answer in 2 minutes).
var raceBuild = os.Getenv("ORACLE_TEST_RACE_BINARY") != ""
