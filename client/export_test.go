package client

import "time"

// SetStdoutGrace sets stdoutGrace for a test, returning the old value.
func SetStdoutGrace(d time.Duration) time.Duration {
	old := stdoutGrace
	stdoutGrace = d
	return old
}
