//go:build !linux

package host

import "github.com/rs/zerolog"

// NoDelayFirefox is Linux-only (host/nodelay_linux.go: pidfd_getfd and /proc): elsewhere
// Firefox's calls after an event keep their delayed-ACK wait.
func NoDelayFirefox(engine string, pids []int, log zerolog.Logger) {}
