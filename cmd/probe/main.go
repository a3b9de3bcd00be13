// Command probe is the oracle's cross-engine self-check (dump-format.md, "Probes"):
// it launches the oracle in-process, runs the hand-written probes of package probes
// through every engine, and prints per probe each engine's status, the pairwise
// agreement and the three-way vote.
//
// Exit codes: 0 when every probe the profile supports ran in every engine (engines
// disagreeing is a finding, not a failure); 1 when some engine errored or timed out
// on a probe, the failing probes named on stderr; 2 on bad flags or when the oracle
// could not launch.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/internal/progress"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/probes"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/vote"
	"github.com/rs/zerolog"
)

func main() {
	// As the oracle binary does: keep the real stdout for the report, and point file
	// descriptor 1 at stderr, so a child browser's output cannot land in --json.
	out, err := reserveStdout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(2)
	}
	code := run(os.Args[1:], out, os.Stderr)
	out.Close()
	os.Exit(code)
}

func reserveStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("dup stdout: %w", err)
	}
	if err := syscall.Dup2(2, 1); err != nil {
		return nil, fmt.Errorf("redirect stdout to stderr: %w", err)
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "stdout"), nil
}

// Summary is the last line of --json output.
type Summary struct {
	Summary  bool              `json:"summary"`
	Profile  string            `json:"profile"`
	Versions map[string]string `json:"versions"`
	Routes   map[string]string `json:"routes"`
	Probes   int               `json:"probes"`
	Skipped  int               `json:"skipped"`
	Failed   []string          `json:"failed"`
	Vote     map[string]int    `json:"vote"` // probes per vote kind
	OK       bool              `json:"ok"`
	TookMS   int64             `json:"took_ms"`
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("probe")
	fs.SetOutput(stderr)
	profile := fs.String("profile", profiles.Default.Name, "launch profile: "+strings.Join(profiles.Names(), ", "))
	engines := fs.String("engines", strings.Join(browser.AllEngines, ","), "engines to launch and probe, comma-separated")
	browsers := fs.String("browsers", browser.RouteAuto, "system, playwright or auto (as the oracle's flag)")
	asJSON := fs.Bool("json", false, "one JSON object per probe, then a summary line")
	only := fs.String("only", "", "comma-separated probe names (default: all): "+strings.Join(probes.Names(), ", "))
	logLevel := fs.String("log-level", "warn", "stderr log level: debug, info, warn, error")
	chromiumPath := fs.String("chromium-path", "", "Chromium binary (as the oracle's flag)")
	firefoxPath := fs.String("firefox-path", "", "Firefox binary (as the oracle's flag)")
	webkitDriverPath := fs.String("webkit-driver-path", "", "WebKitWebDriver binary (as the oracle's flag)")
	if code, done := cli.Parse(fs, args, stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "probe: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	level, err := zerolog.ParseLevel(*logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "probe: bad --log-level:", err)
		return 2
	}
	prof, err := profiles.Lookup(*profile)
	if err != nil {
		fmt.Fprintln(stderr, "probe:", err)
		return 2
	}
	selected, err := probes.Select(cli.SplitList(*only))
	if err != nil {
		fmt.Fprintln(stderr, "probe:", err)
		return 2
	}
	names := cli.SplitList(*engines)
	log := zerolog.New(cli.LogOutput(stderr)).Level(level).With().Timestamp().Str("proc", "probe").Logger()

	start := time.Now()
	ctx := context.Background()
	// One page per engine: the probes run one after another.
	o, err := oracle.Launch(ctx, oracle.Config{Routes: routes.Table, Engines: names, Browsers: *browsers, Profile: prof, Pages: 1,
		ChromiumPath: *chromiumPath, FirefoxPath: *firefoxPath, WebKitDriverPath: *webkitDriverPath}, log)
	if err != nil {
		fmt.Fprintln(stderr, "probe: launch:", err)
		return 2
	}
	defer o.Close()
	ping := o.Handle(ctx, &oracle.Request{ID: json.RawMessage(`"ping"`), Op: oracle.OpPing}).(oracle.PingResponse)
	if len(names) == 0 {
		names = browser.AllEngines
	}
	// Probe every engine asked for, launched or not: one that failed to launch then
	// answers "engine not launched" and fails its probes, as it should.
	// probes.Run, one probe at a time, with a bar on a terminal's stderr.
	bar := progress.New(stderr, int64(len(selected)), "probes", "probes")
	var results []probes.Result
	for _, p := range selected {
		results = append(results, probes.RunProbe(ctx, o, p, names, prof.Name))
		bar.Add(1)
	}
	bar.Finish()

	sum := Summary{Summary: true, Profile: prof.Name, Versions: ping.Versions, Routes: ping.Routes,
		Probes: len(results), Failed: probes.Failures(results), Vote: map[string]int{}}
	for _, r := range results {
		if r.Skipped != "" {
			sum.Skipped++
		} else {
			sum.Vote[string(r.Vote.Kind)]++
		}
	}
	if sum.Failed == nil {
		sum.Failed = []string{}
	}
	sum.OK = len(sum.Failed) == 0
	sum.TookMS = time.Since(start).Milliseconds()

	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(stderr, "probe: write results:", err)
				return 2
			}
		}
		if err := enc.Encode(sum); err != nil {
			fmt.Fprintln(stderr, "probe: write results:", err)
			return 2
		}
	} else {
		printTable(stdout, results, ordered(names), ping, sum)
	}
	for name, why := range ping.Failed {
		fmt.Fprintf(stderr, "probe: %s did not launch: %s\n", name, firstLine(why))
	}
	if !sum.OK {
		for _, r := range results {
			if !r.Failed {
				continue
			}
			var why []string
			for _, e := range ordered(slices.Collect(maps.Keys(r.Engines))) {
				if s := r.Engines[e]; s.Status == probes.StatusError || s.Status == probes.StatusTimeout {
					why = append(why, e+": "+firstLine(s.Error))
				}
			}
			fmt.Fprintf(stderr, "probe: FAILED %s (%s)\n", r.Probe, strings.Join(why, "; "))
		}
		return 1
	}
	return 0
}

// printTable writes the at-a-glance table, then the notes.
func printTable(w io.Writer, results []probes.Result, engines []string, ping oracle.PingResponse, sum Summary) {
	fmt.Fprintf(w, "profile %s\n", sum.Profile)
	for _, e := range engines {
		v := ping.Versions[e]
		if v == "" {
			v = "not launched"
		}
		fmt.Fprintf(w, "  %-9s %s  %s\n", e, v, ping.Routes[e])
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := append(append([]string{"probe"}, engines...), "pairwise agreement", "vote", "outlier")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range results {
		row := []string{r.Probe}
		for _, e := range engines {
			s := r.Engines[e].Status
			if s == "" {
				s = "-"
			}
			row = append(row, s)
		}
		var pairs []string
		for _, p := range r.Pairs {
			mark := "="
			if !p.Agree {
				mark = "≠"
			}
			pairs = append(pairs, abbrev(p.A)+mark+abbrev(p.B))
		}
		pw, vk, ol := strings.Join(pairs, " "), string(r.Vote.Kind), r.Vote.Outlier
		if pw == "" {
			pw = "-"
		}
		if r.Skipped != "" {
			vk = "skipped"
		}
		if ol == "" {
			ol = "-"
		}
		row = append(row, pw, vk, ol)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()

	var notes []string
	for _, r := range results {
		if r.Skipped != "" {
			notes = append(notes, fmt.Sprintf("%s: skipped: %s", r.Probe, r.Skipped))
		}
		for _, n := range r.Notes {
			notes = append(notes, fmt.Sprintf("%s: %s", r.Probe, n))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	verdict := "ok: every supported probe ran in every engine"
	if !sum.OK {
		verdict = "FAILED: " + strings.Join(sum.Failed, ", ")
	}
	var kinds []string
	for _, k := range []vote.Kind{vote.Unanimous, vote.Majority, vote.Split, vote.Agree, vote.Disagree, vote.Single, vote.None} {
		if n := sum.Vote[string(k)]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	if sum.Skipped > 0 {
		kinds = append(kinds, fmt.Sprintf("%d skipped", sum.Skipped))
	}
	fmt.Fprintf(w, "\n%d probes: %s; %s (%.1fs)\n", sum.Probes, strings.Join(kinds, ", "), verdict, float64(sum.TookMS)/1000)
}

// abbrev is an engine's one-letter name in the pairwise column.
func abbrev(e string) string {
	switch e {
	case browser.Chromium:
		return "C"
	case browser.Firefox:
		return "F"
	case browser.WebKit:
		return "W"
	}
	return e
}

func ordered(names []string) []string {
	var out []string
	for _, e := range browser.AllEngines {
		for _, n := range names {
			if n == e {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
