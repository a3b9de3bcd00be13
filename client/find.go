package client

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// FindOracle is the oracle binary a tool spawns: flagValue when given, else the
// oracle beside the running binary (make builds every command into bin/), else
// oracle on PATH.
func FindOracle(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "oracle")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath("oracle")
	if err != nil {
		return "", fmt.Errorf("no oracle binary beside %s or on PATH (give --oracle BIN): %w", filepath.Base(os.Args[0]), err)
	}
	return p, nil
}

// NamesStore says whether oracle flags choose a store (-store or --store, with its
// value after '=' or as the next argument), so a tool that measures engines adds
// --store=off only when the user did not (--store-min-runs is not --store).
func NamesStore(args []string) bool { return NamesFlag(args, "store") }

// NamesFlag says whether oracle flags set the flag name (-name or --name, with its
// value after '=' or as the next argument).
func NamesFlag(args []string, name string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name {
			return true
		}
	}
	return false
}
