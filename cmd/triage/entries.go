package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/layout-oracle/oracle/internal/cli"
)

// writeEntry writes DIR/entries/N for one entry: entry.json (what `triage rerun`
// reads), report.md (the finding in one page) and rerun.sh (its rerun), and names
// the last two in the entry (Report, Rerun). N is the rank: no case id or HTML
// ever becomes a path, and every value in report.md is escaped (mdText, mdFence).
func writeEntry(cfg config, pb *pageBucket, src *probe, byID map[string]*scored) error {
	b := pb.B
	name := fmt.Sprintf("entries/%d", pb.Rank)
	d, err := cfg.dir.Sub(name)
	if err != nil {
		return err
	}
	defer d.Close()
	ef := entryFile{Rank: pb.Rank, Label: pb.Label, Signatures: variantSignatures(b), Case: "reduced",
		Candidate: specOf(cfg), Tolerance: cfg.tol, Axes: cmp.Or(cfg.axesName, "all"), OracleFlags: append([]string{}, cfg.oracleArgs...)}
	if r := b.Reduced; r != nil && r.Error == "" && r.HTML != "" {
		ef.HTML = r.HTML
	} else if rep := byID[b.Representative]; rep != nil {
		ef.HTML, ef.Case = rep.c.html, b.Representative
	} else {
		return fmt.Errorf("no case to rerun (representative %q not among the cases)", b.Representative)
	}
	js, err := json.MarshalIndent(ef, "", " ")
	if err != nil {
		return err
	}
	if err := d.WriteFile("entry.json", append(js, '\n')); err != nil {
		return err
	}
	b.Report, b.Rerun = name+"/report.md", name+"/rerun.sh"
	if err := d.WriteFile("report.md", []byte(entryReport(cfg, pb, src, &ef))); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return d.WriteExecutable("rerun.sh", []byte(rerunScript(self, cfg.oracleBin, cfg.workDir, pb.Rank)))
}

// rerunScript is rerun.sh: a thin wrapper of `triage rerun` with the run's
// binaries. With no argument it runs the run's candidate from the directory the
// run started in (so a relative command means what it meant then); with one, that
// candidate from the caller's directory. Every path in it is shell-quoted.
func rerunScript(triageBin, oracleBin, workDir string, rank int) string {
	cd := ""
	if workDir != "" {
		cd = fmt.Sprintf("[ $# -eq 0 ] && { cd %s || exit 2; }\n", cli.ShellQuote(workDir))
	}
	return fmt.Sprintf(`#!/bin/sh
# Entry %d of a triage run (docs/triage.md): rerun its case (entry.json) through a
# fresh oracle and the candidate, the run's or CANDIDATE (a command, a server
# command or a WebDriver URL, as the run named its candidate).
# usage: rerun.sh [CANDIDATE]
# exit status: 1 the defect still shows, 0 it does not, 2 no judgement.
here=$(cd -- "$(dirname -- "$0")" && pwd) || exit 2
%sexec %s rerun --oracle %s -- "$here" "$@"
`, rank, cd, cli.ShellQuote(triageBin), cli.ShellQuote(oracleBin))
}

// entryReport is report.md: the entry, its case, each engine's and the
// candidate's values on its box, the builds, the agreeing engines and its cases.
func entryReport(cfg config, pb *pageBucket, src *probe, ef *entryFile) string {
	b := pb.B
	var w strings.Builder
	fmt.Fprintf(&w, "# Entry %d: %s\n\n", pb.Rank, mdText(pb.Label))
	fmt.Fprintf(&w, "**%s** (%s", mdText(b.Trigger), mdText(b.Severity))
	if b.Status != "" {
		fmt.Fprintf(&w, "; %s against the baseline", mdText(b.Status))
	}
	fmt.Fprintf(&w, "). %d cases (%s of the corpus), %d of them pass once it and the entries above it are fixed; %d causes, %d items.\n\n",
		len(b.Cases), cmp.Or(pb.Share, "?"), b.Fixes, b.Causes, b.Items)
	agree := "none (the candidate alone against all three)"
	if len(b.AgreeingEngines) > 0 {
		agree = mdText(strings.Join(b.AgreeingEngines, ", "))
	}
	fmt.Fprintf(&w, "Agreeing engines (whose value the candidate gives): %s.\n\n", agree)
	fmt.Fprintf(&w, "Rerun, from the output directory: `sh entries/%d/rerun.sh [CANDIDATE]`: exit 1 while the defect shows, 0 once it passes, 2 when it cannot judge.\n\n", pb.Rank)

	if ef.Case == "reduced" {
		r := b.Reduced
		fmt.Fprintf(&w, "## The reduced case\n\n%d bytes, from %d; reproduced in a fresh oracle and candidate run: %v.\n\n", r.Bytes, r.BytesBefore, r.Reproduced)
	} else {
		fmt.Fprintf(&w, "## The case (its representative, %s: not reduced)\n\n", mdText(ef.Case))
	}
	w.WriteString(mdFence(ef.HTML, "html"))

	if len(pb.Rows) > 0 {
		fmt.Fprintf(&w, "\n## Values on its box, %s, in the %s\n\n", mdText(pb.Path), pb.From)
		w.WriteString("| item |")
		for _, e := range engineOrder {
			w.WriteString(" " + e + " |")
		}
		w.WriteString(" majority | candidate − majority |\n|---|")
		w.WriteString(strings.Repeat("---|", len(engineOrder)+2) + "\n")
		for _, r := range pb.Rows {
			item := mdText(r.Property)
			if r.Failed {
				item = "**" + item + "**"
			}
			w.WriteString("| " + item + " |")
			for _, v := range r.Values {
				w.WriteString(" " + mdText(v) + " |")
			}
			w.WriteString(" " + mdText(r.Want) + " | " + mdText(r.Delta) + " |\n")
		}
		w.WriteString("\nItems in bold are the ones the candidate fails.\n")
	}

	w.WriteString("\n## Builds\n\n")
	if src != nil && src.resp != nil {
		for _, e := range engineOrder[:3] {
			if d := src.resp.Dumps[e]; d != nil {
				fmt.Fprintf(&w, "- %s: %s\n", e, mdText(d.EngineVersion))
			}
		}
	}
	cand := cfg.cand.Describe()
	if src != nil && src.cand != nil {
		cand += " (its dump: " + src.cand.Engine + " " + src.cand.EngineVersion + ")"
	}
	fmt.Fprintf(&w, "- candidate: %s\n", mdText(cand))

	if len(b.Variants) > 1 {
		w.WriteString("\n## Variants\n\n")
		for _, v := range b.Variants {
			fmt.Fprintf(&w, "- %s: %d cases, agreeing engines: %s\n", mdText(v.Signature.Label()), len(v.Cases), mdText(strings.Join(v.AgreeingEngines, ", ")))
		}
	}
	fmt.Fprintf(&w, "\n## Cases (%d)\n\n", len(b.Cases))
	for _, id := range pb.Cases {
		w.WriteString("- " + mdText(id) + "\n")
	}
	if pb.More > 0 {
		fmt.Fprintf(&w, "- and %d more (buckets.json)\n", pb.More)
	}
	return w.String()
}

// mdText is s as Markdown text that renders as s: every ASCII punctuation mark
// backslash-escaped (CommonMark lets any be), so no markup, link, HTML tag or
// table cell boundary comes from s, and a line break or other control character
// as a space, so s stays in its line.
func mdText(s string) string {
	var w strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			w.WriteByte(' ')
		case r < 0x80 && strings.ContainsRune("\\`*_{}[]<>|&~!#$", r):
			w.WriteByte('\\')
			w.WriteRune(r)
		default:
			w.WriteRune(r)
		}
	}
	return w.String()
}

// mdFence is s as a fenced code block: its fence longer than any run of
// backticks in s, so nothing in s closes it; inside, nothing is markup.
func mdFence(s, lang string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + lang + "\n" + s + fence + "\n"
}
