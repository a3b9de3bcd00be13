package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/remote"
)

// browserEnvCommand is `oracle browser-env ENGINE`: on a browser host, it writes the
// pinned environment's files and prints, one KEY=VALUE a line, the environment that
// host's Playwright server or WebKitWebDriver must run with (docs/remote.md).
func browserEnvCommand(args []string, out, errw io.Writer) int {
	if len(args) == 1 && cli.IsHelp(args[0]) {
		fmt.Fprintln(errw, "usage: oracle browser-env chromium|firefox|webkit")
		return cli.ExitOK
	}
	if len(args) != 1 || (args[0] != browser.Chromium && args[0] != browser.Firefox && args[0] != browser.WebKit) {
		fmt.Fprintln(errw, "usage: oracle browser-env chromium|firefox|webkit")
		return 2
	}
	env, err := remote.BrowserHostEnv(args[0])
	if err != nil {
		fmt.Fprintln(errw, "oracle browser-env:", err)
		return 1
	}
	fmt.Fprintln(out, strings.Join(env, "\n"))
	return 0
}
