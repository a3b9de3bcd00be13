// Package cli is what every binary's command line does alike: -h/--help (usage,
// exit 0), --version (the module version and VCS revision from the build info,
// exit 0), a usage error's exit status 2, and zerolog output that a person reads on
// a terminal and a program reads on a pipe.
//
// One usage style in every binary: "usage: NAME ..." on stderr for -h, --help and
// `NAME help`, exit 0; a mistake is exit 2 and a line that names it. It is built on
// the standard flag package rather than kong or ff: the binaries' flags, their
// deprecated spellings (Alias) and the test that every flag is documented already
// go through this one package, and a subcommand is at most one level deep (oracle
// store, wpt COMMAND, triage candidate-env), which a switch reads plainly; a parser
// library would rewrite every binary's flags for the same behaviour.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// Exit statuses of a parse that ends the program.
const (
	ExitOK    = 0 // -h, --help, --version
	ExitUsage = 2 // a bad flag
)

// Parse adds --version to fs and parses args. done is true when the program should
// exit with code: after -h, --help or a first argument "help" (fs's usage printed, ExitOK), after --version
// (the version printed on stdout, ExitOK), or on a bad flag (the error, the usage,
// and the error again as the last line, ExitUsage). A flag given under both its
// deprecated and its new name (Alias) is a bad flag. fs comes from NewFlagSet.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	version := fs.Bool("version", false, "print the version (module version, VCS revision) and exit")
	if len(args) > 0 && args[0] == "help" { // `NAME help`, as `NAME -h`, in every binary
		args = []string{"-h"}
	}
	err := fs.Parse(args)
	if err == nil {
		if err = bothSpellings(fs); err != nil { // as flag reports its own: the error, then the usage
			fmt.Fprintln(fs.Output(), err)
			fs.Usage()
		}
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, true
		}
		// Again below the usage flag printed after it: the last line a terminal
		// shows, and the one a caller keeping the end of stderr (client.ExitError) sees.
		fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
		return ExitUsage, true
	}
	if *version {
		fmt.Fprintln(stdout, Version(fs.Name()))
		return ExitOK, true
	}
	return 0, false
}

// NewFlagSet is every binary's flag set: errors returned (Parse turns them into
// exit statuses), and a usage in every binary's one style, "usage: NAME [FLAGS]"
// and then the flags less the deprecated spellings (PrintDefaults). A binary with a
// synopsis of its own sets Usage after, through Usage.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = Usage(fs, name+" [FLAGS]")
	return fs
}

// IsHelp says whether arg asks for help the way flag does (-h, --help, -help).
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// IsVersion says whether arg is --version (or -version).
func IsVersion(arg string) bool { return arg == "--version" || arg == "-version" }

// Version is "NAME VERSION (revision REV[, modified]; GOVERSION)": the main module's
// version ("(devel)" for a build from a checkout) and the VCS revision Go stamped
// into the binary (go build in a git work tree; "unknown" under go run or go test).
func Version(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return name + " (no build information)"
	}
	return version(name, bi)
}

func version(name string, bi *debug.BuildInfo) string {
	rev, modified := "unknown", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		rev += ", modified"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	return fmt.Sprintf("%s %s (revision %s; %s)", name, v, rev, bi.GoVersion)
}

// Locked is w with each Write under one lock: one file the logs of several
// oracles (goroutines) write to, a line at a time.
func Locked(w io.Writer) io.Writer { return &lockedWriter{w: w} }

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// LogOutput is where a binary's zerolog logger writes: w itself (one JSON object a
// line) unless w is a terminal, where a person reads it through zerolog's
// ConsoleWriter.
func LogOutput(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return zerolog.ConsoleWriter{Out: w}
	}
	return w
}

// Usage prints "usage: LINE" and fs's flags (PrintDefaults) to fs's output.
func Usage(fs *flag.FlagSet, lines ...string) func() {
	return func() {
		fmt.Fprintln(fs.Output(), "usage: "+strings.Join(lines, "\n       "))
		PrintDefaults(fs)
	}
}

// FlagAmong is the first of args, a command's positional arguments, that looks
// like a flag, or "": Go's flag package stops at the first positional argument, so
// a flag after it would otherwise be read as a file or pattern.
func FlagAmong(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// SplitList parses a comma-separated flag value (--engines=chromium,webkit),
// dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ShellQuote is s as one sh word, single-quoted (a quote in s closes the quotes,
// is escaped and reopens them): any bytes, a newline or "$(...)" included, stay
// literal.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Printable is s as a tool may write it to a terminal: every control character (tab
// and newline included), every bidirectional control and every byte that is not
// UTF-8 written as a Go escape (\x1b, \u202e). An id, a tag or an error message comes
// from a case, a candidate or an answers file, and must not move the cursor, retitle
// the terminal, reorder what a person reads or forge a line of the tool's output.
func Printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < utf8.RuneSelf && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
