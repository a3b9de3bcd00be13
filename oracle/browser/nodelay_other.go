//go:build !linux

package browser

import "github.com/rs/zerolog"

// noDelayBrowser is Linux-only (nodelay_linux.go: pidfd_getfd and /proc): elsewhere
// Firefox's calls after an event keep their delayed-ACK wait.
func NoDelayBrowser(engine string, pids []int, log zerolog.Logger) {}
