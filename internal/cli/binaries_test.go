package cli_test

// Every binary's command line, run as built (go build ./cmd/...): -h and --help
// exit 0 with the usage, --version names the build, and every flag -h lists is
// documented. No browser starts: each run ends at its flags.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/internal/testutil"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds ./cmd/... once into a temporary directory, as `make build` does.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "cli-bins")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("make", "-s", "-C", repoRoot(), "build", "BIN="+binDir).CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	require.NoError(t, buildErr)
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// runBin runs bin with args (no stdin) and returns its exit status and output.
func runBin(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binaries(t), bin), args...)
	cmd.Env = append(os.Environ(), "ORACLE_STORE=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stdout.String(), stderr.String()
}

var all = []string{"oracle", "probe", "wpt", "compare", "reduce", "bench", "triage", "planted"}

// One usage style: -h, --help and `help` print on stderr a usage that starts with
// "usage: NAME" and exit 0, in every binary, every wpt command and every subcommand.
func TestHelpExitsZeroInEveryBinary(t *testing.T) {
	helps := [][]string{}
	for _, bin := range all {
		helps = append(helps, []string{bin, "-h"}, []string{bin, "--help"}, []string{bin, "help"})
	}
	for _, sub := range []string{"requests", "summary", "run", "compare", "mine"} {
		helps = append(helps, []string{"wpt", sub, "-h"}, []string{"wpt", "help", sub})
	}
	helps = append(helps, []string{"triage", "candidate-env", "--help"}, []string{"triage", "rerun", "-h"}, []string{"oracle", "store", "-h"})
	for _, h := range helps {
		code, stdout, stderr := runBin(t, h[0], h[1:]...)
		assert.Equal(t, 0, code, "%v: %s", h, stderr)
		assert.Empty(t, stdout, "%v: the usage goes to stderr", h)
		name := h[0]
		if len(h) > 2 && h[1] != "help" {
			name += " " + h[1]
		} else if len(h) > 2 {
			name += " " + h[2]
		}
		assert.True(t, strings.HasPrefix(stderr, "usage: "+name), "%v starts with %q: %q", h, "usage: "+name, firstLine(stderr))
	}
}

func firstLine(s string) string { line, _, _ := strings.Cut(s, "\n"); return line }

// A mistake on the command line is exit 2 and a line that names it.
func TestUsageErrorsNameTheMistake(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"oracle", "store", "frob"}, `unknown command "frob"`},
		{[]string{"oracle", "--engines=chrome"}, `unknown engine "chrome"`},
		{[]string{"bench", "stray"}, `unexpected argument "stray"`},
		{[]string{"wpt", "frob"}, `unknown command "frob"`},
		{[]string{"triage", "candidate-env", "--frob"}, `unknown flag "--frob"`},
	} {
		code, _, stderr := runBin(t, c.args[0], c.args[1:]...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.says, "%v", c.args)
	}
	code, _, stderr := runBin(t, "oracle", "store", "stats", "--store", filepath.Join(t.TempDir(), "missing.db"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no store file at")
}

// repoRoot is the module's root, where the Makefile is.
func repoRoot() string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "../.."
	}
	return strings.TrimSpace(string(out))
}

// `make build` in a git clone names the commit it built: the module's version from
// the commit (or its tag) and the full revision, whatever GOFLAGS says.
func TestMakeBuildNamesTheCommit(t *testing.T) {
	root := repoRoot()
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		t.Skip("not a git clone (a linked worktree or a tarball): the go command stamps no revision")
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	code, stdout, stderr := runBin(t, "oracle", "--version")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "(revision "+strings.TrimSpace(string(head)), "the revision is HEAD's")
	assert.NotContains(t, stdout, "(devel)", "the version comes from the commit or its tag")
}

func TestVersionInEveryBinary(t *testing.T) {
	for _, bin := range all {
		code, stdout, stderr := runBin(t, bin, "--version")
		require.Equal(t, 0, code, "%s --version: %s", bin, stderr)
		// The revision is "unknown" where the go command stamps none (-buildvcs=false,
		// or a git work tree it does not recognize, as here: a linked worktree).
		assert.Regexp(t, `^`+bin+` \S+ \(revision ([0-9a-f]{40}(, modified)?|unknown); go\S+\)\n$`, stdout, bin)
	}
}

// A stray argument ("oracle stor") is a usage error, not an oracle on the default
// store; so is a bad flag.
func TestOracleRefusesStrayArguments(t *testing.T) {
	code, stdout, stderr := runBin(t, "oracle", "stor")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unexpected argument "stor"`)
	assert.Contains(t, stderr, "usage: oracle")
	assert.Empty(t, stdout)
	code, _, _ = runBin(t, "oracle", "--no-such-flag")
	assert.Equal(t, 2, code)
	code, _, stderr = runBin(t, "oracle", "store", "-h")
	assert.Equal(t, 0, code, stderr)
}

// docPages is where each binary's flags are documented.
var docPages = map[string]string{
	"oracle": "docs/protocol.md", "probe": "docs/probes.md", "compare": "docs/compare.md",
	"reduce": "docs/reduce.md", "bench": "cmd/bench/README.md", "wpt": "docs/web-content.md",
	"triage": "docs/triage.md", "planted": "docs/planted.md",
}

var flagLine = regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)

// Every flag a binary's -h lists (each wpt command's too) appears as --NAME in the
// binary's doc page: the docs name every flag there is. --version, common to all,
// is documented once, in docs/protocol.md.
func TestEveryFlagIsDocumented(t *testing.T) {
	for bin, page := range docPages {
		doc, err := os.ReadFile(filepath.Join("..", "..", page))
		require.NoError(t, err)
		helps := [][]string{{}}
		if bin == "wpt" {
			helps = [][]string{{"requests"}, {"summary"}, {"run"}, {"compare"}, {"mine"}}
		}
		if bin == "planted" {
			helps = [][]string{{"serve"}, {"run"}, {"stdio"}, {"bench"}}
		}
		for _, pre := range helps {
			_, stdout, stderr := runBin(t, bin, append(pre, "-h")...)
			flags := flagLine.FindAllStringSubmatch(stdout+stderr, -1)
			require.NotEmpty(t, flags, "%s %v -h lists no flag", bin, pre)
			for _, f := range flags {
				if f[1] == "version" && bin != "oracle" {
					continue
				}
				assert.True(t, strings.Contains(string(doc), "--"+f[1]), "%s %s: --%s is not in %s", bin, strings.Join(pre, " "), f[1], page)
			}
		}
	}
}

// A usage error on a terminal comes out through zerolog's console writer, for a
// person; on a pipe it stays one JSON object a line, for a program.
func TestUsageErrorsReadableOnATerminal(t *testing.T) {
	bin := filepath.Join(binaries(t), "oracle")
	code, _, stderr := runBin(t, "oracle", "--profile=nope")
	assert.Equal(t, 2, code)
	assert.Regexp(t, `^\{"level":"error".*"message":"bad --profile"\}\n$`, stderr)

	master, slave := testutil.OpenPTY(t)
	cmd := exec.Command(bin, "--profile=nope")
	cmd.Env = append(os.Environ(), "ORACLE_STORE=off")
	cmd.Stderr = slave
	require.NoError(t, cmd.Start())
	var exit *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &exit)
	assert.Equal(t, 2, exit.ExitCode())
	slave.Close()
	buf := make([]byte, 4096)
	n, _ := master.Read(buf)
	out := string(buf[:n])
	assert.Contains(t, out, "bad --profile")
	assert.NotContains(t, out, `"level"`)
	assert.Contains(t, out, "ERR")
}

// triage refuses a flag after its corpus instead of reading it as a file name.
func TestTriageRefusesAFlagAfterTheCorpus(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), "c.ndjson")
	require.NoError(t, os.WriteFile(corpus, []byte(`{"id":"a","html":"<p>"}`+"\n"), 0o644))
	code, _, stderr := runBin(t, "triage", "--candidate-cmd", "cat", "--out", t.TempDir(), corpus, "--reduce=0")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--reduce=0 after the corpus")
}

// One name per meaning: each renamed flag's -h lists the new name only, and the old
// spelling still works, says "PROG: --OLD ... is deprecated, use --NEW ..." on
// stderr and sets what the new name sets, seen in what the command then does. No
// browser starts: each run ends at a check of its flags or reads no case.
func TestRenamedFlagsKeepTheirOldSpellings(t *testing.T) {
	tmp := t.TempDir()
	answers := filepath.Join(tmp, "answers.ndjson")
	require.NoError(t, os.WriteFile(answers, nil, 0o644))
	empty := filepath.Join(tmp, "none.ndjson")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	notDir := filepath.Join(answers, "shots") // under a file: no directory can be made there
	for _, c := range []struct {
		cmd      []string // the binary and its subcommand
		old, new string
		args     []string // the run with the old spelling (flags after cmd)
		code     int
		does     func(t *testing.T, stderr string) // what shows the value was set
	}{
		{[]string{"oracle"}, "inflight", "parallel", []string{"--inflight=2", "--engines=chrome"}, 2,
			func(t *testing.T, stderr string) { assert.Contains(t, stderr, `unknown engine "chrome"`) }},
		{[]string{"oracle"}, "artifacts", "screenshot-dir", []string{"--artifacts", notDir}, 2,
			func(t *testing.T, stderr string) { assert.Contains(t, stderr, "bad --screenshot-dir") }},
		{[]string{"compare"}, "html", "out", []string{"--answers", answers, "--html", filepath.Join(tmp, "report")}, 2, // 2: no case

			func(t *testing.T, _ string) { assert.FileExists(t, filepath.Join(tmp, "report", "index.html")) }},
		{[]string{"compare"}, "artifacts", "screenshot-dir", []string{"--answers", answers, "--artifacts", tmp}, 2,
			func(t *testing.T, stderr string) {
				assert.Contains(t, stderr, "--screenshot-dir is where the report (--out) reads")
			}},
		{[]string{"reduce"}, "bench-out", "out", []string{"--bench", empty, "--bench-out", filepath.Join(tmp, "reduced.ndjson")}, 0,
			func(t *testing.T, _ string) { assert.FileExists(t, filepath.Join(tmp, "reduced.ndjson")) }},
		{[]string{"reduce"}, "stats-json", "json", []string{"--stats-json", "--keep=frob"}, 2,
			func(t *testing.T, stderr string) { assert.Contains(t, stderr, "frob") }},
		{[]string{"wpt", "run"}, "inflight", "parallel", []string{"--root", tmp, "--inflight=0", "x"}, 2,
			func(t *testing.T, stderr string) { assert.Contains(t, stderr, "usage: wpt run") }},
	} {
		name := strings.Join(c.cmd, " ")
		_, _, help := runBin(t, c.cmd[0], append(c.cmd[1:], "-h")...)
		assert.Regexp(t, `(?m)^  -`+c.new+`\b`, help, "%s -h lists --%s", name, c.new)
		assert.NotRegexp(t, `(?m)^  -`+c.old+`\b`, help, "%s -h leaves --%s out", name, c.old)

		code, _, stderr := runBin(t, c.cmd[0], append(c.cmd[1:], c.args...)...)
		assert.Equal(t, c.code, code, "%s %v: %s", name, c.args, stderr)
		assert.Regexp(t, `(?m)^`+name+`: --`+c.old+`( \S+)? is deprecated, use --`+c.new+`( \S+)?$`, stderr, "%s --%s", name, c.old)
		c.does(t, stderr)
	}
}
