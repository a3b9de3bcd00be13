package host

import (
	"os"
	"strings"
)

// WithEnv is base with every KEY=VALUE of extra set, replacing base's own KEY.
func WithEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	set := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// IsELF says whether path (after symlinks) is an ELF file, not a script: a build
// fingerprint (package buildprint) lists only files whose program is known.
func IsELF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	_, err = f.Read(magic)
	return err == nil && string(magic) == "\x7fELF"
}
