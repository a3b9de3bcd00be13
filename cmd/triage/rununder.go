package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// runUnder runs args with env added to this process's environment, its standard
// streams ours; its exit status is ours.
func runUnder(args, env []string, stdout, stderr io.Writer) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintf(stderr, "triage candidate-env: %v\n", err)
		return 127
	}
	return 0
}
