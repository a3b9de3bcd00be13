package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/layout-oracle/oracle/store"
	"github.com/rs/zerolog"
)

// storeDefault is --store's default: $ORACLE_STORE when set (tests set it to off, so
// no test depends on a user's cache), else the file under the user's cache directory.
func storeDefault() string {
	if v := os.Getenv("ORACLE_STORE"); v != "" {
		return v
	}
	p, err := store.DefaultPath()
	if err != nil {
		return "off"
	}
	return p
}

// parseSize reads a byte count: digits, optionally followed by K, M or G (powers of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(t, "B")
	for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40} {
		if strings.HasSuffix(t, suffix) {
			t, mult = strings.TrimSuffix(t, suffix), m
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (bytes, or with K, M, G)", s)
	}
	return n * mult, nil
}

// parseEngineMemory is --engine-memory in bytes: "0" (off), "auto" (a quarter of
// MemTotal, at least 1 GiB), or a size.
func parseEngineMemory(s string) (int64, error) {
	switch strings.TrimSpace(s) {
	case "0":
		return 0, nil
	case "auto":
		return max(memTotal()/4, 1<<30), nil
	}
	return parseSize(s)
}

// memTotal is /proc/meminfo's MemTotal in bytes (0 when unreadable).
func memTotal() int64 {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// openStore opens the store at path, or returns nil (the oracle answers live) when it
// is off or cannot be opened: a broken store never keeps the oracle from serving.
func openStore(path string, maxBytes int64, log zerolog.Logger) *store.Store {
	if path == "" || path == "off" {
		log.Info().Msg("store off: every answer is live")
		return nil
	}
	st, err := store.Open(path, store.Options{MaxBytes: maxBytes, Diff: oracle.StoreDiff}, log)
	if err != nil {
		log.Error().Err(err).Str("store", path).Msg("store cannot be opened; serving without it (every answer live)")
		return nil
	}
	log.Info().Str("store", path).Int64("entries", st.Stats().Entries).Msg("store open")
	return st
}

func closeStore(st *store.Store) {
	if st != nil {
		st.Close()
	}
}

// storeCommand is `oracle store stats|prune|export [--store PATH]`.
func storeCommand(args []string, stdout, stderr io.Writer) int {
	usage := "usage: oracle store stats|prune|export [--store PATH] [--max SIZE (prune)] [--profile NAME (export)]"
	if len(args) == 0 || cli.IsHelp(args[0]) {
		fmt.Fprintln(stderr, usage)
		if len(args) > 0 {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	cmd := args[0]
	switch cmd {
	case "stats", "prune", "export":
	default:
		fmt.Fprintf(stderr, "oracle store: unknown command %q (stats, prune, export)\n%s\n", cmd, usage)
		return cli.ExitUsage
	}
	fs := cli.NewFlagSet("oracle store " + cmd)
	fs.SetOutput(stderr)
	path := fs.String("store", storeDefault(), "store file")
	max := fs.String("max", "", "prune: evict least recently used answers until the store is at most this size; empty: delete every answer")
	profile := fs.String("profile", "default", "export: the launch profile whose answers to write")
	if code, done := cli.Parse(fs, args[1:], stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n%s\n", fs.Arg(0), usage)
		return 2
	}
	if *path == "off" {
		fmt.Fprintln(stderr, "oracle store: the store is off (--store or $ORACLE_STORE)")
		return 2
	}
	if cmd != "prune" { // stats and export read a store; only prune may make one
		if _, err := os.Stat(*path); err != nil {
			fmt.Fprintf(stderr, "oracle store: no store file at %s (--store or $ORACLE_STORE): %v\n", *path, errors.Unwrap(err))
			return 1
		}
	}
	log := zerolog.New(cli.LogOutput(stderr)).With().Timestamp().Str("proc", "oracle store").Logger()
	ctx := context.Background()
	switch cmd {
	case "stats":
		st, err := store.Open(*path, store.Options{ReadOnly: true}, log)
		if err != nil {
			fmt.Fprintln(stderr, "oracle store:", err)
			return 1
		}
		defer st.Close()
		sum, err := st.Summarize(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "oracle store:", err)
			return 1
		}
		b, _ := json.Marshal(sum)
		fmt.Fprintln(stdout, string(b))
	case "prune":
		limit := int64(0)
		if *max != "" {
			var err error
			if limit, err = parseSize(*max); err != nil {
				fmt.Fprintln(stderr, "oracle store: --max:", err)
				return 2
			}
		}
		st, err := store.Open(*path, store.Options{}, log)
		if err != nil {
			fmt.Fprintln(stderr, "oracle store:", err)
			return 1
		}
		defer st.Close()
		n, err := st.Prune(ctx, limit)
		if err != nil {
			fmt.Fprintln(stderr, "oracle store:", err)
			return 1
		}
		fmt.Fprintf(stdout, "{\"deleted\":%d,\"entries\":%d}\n", n, st.Stats().Entries)
	case "export":
		st, err := store.Open(*path, store.Options{ReadOnly: true}, log)
		if err != nil {
			fmt.Fprintln(stderr, "oracle store:", err)
			return 1
		}
		defer st.Close()
		if err := export(ctx, st, *profile, stdout); err != nil {
			fmt.Fprintln(stderr, "oracle store:", err)
			return 1
		}
	default:
		fmt.Fprintln(stderr, usage)
		return 2
	}
	return 0
}

// export writes one response line per stored case, as the oracle would have answered
// it (`bin/compare --answers` reads it): {"id", field, "unstable"?}, the field its
// kind's in package kinds' registry ("dumps" for geometry, "states" for reflection,
// "traces" for traces), with only the answers measured by this oracle's walk in this
// pinned environment and profile. Per engine the newest build's answer is written;
// the id is that of the newest request among them. A stored case of a kind no
// registered kind is named (a store another oracle wrote) is not written, and makes
// export's error once every other case is out.
func export(ctx context.Context, st *store.Store, profile string, w io.Writer) error {
	out := bufio.NewWriter(w)
	walk, env := oracle.StoreVersions(profile, routes.Table)
	type group struct {
		c, op   string
		id      json.RawMessage
		newest  time.Time
		answers map[string]store.Row
	}
	var g *group
	unknown := map[string]int{} // cases not written, by their op
	flush := func() error {
		if g == nil || len(g.answers) == 0 {
			return nil
		}
		k := kinds.ByName(g.op)
		if k == nil {
			unknown[g.op]++
			return nil
		}
		m := map[string]json.RawMessage{}
		unstable := map[string][]string{}
		for e, r := range g.answers {
			m[e] = r.Answer
			if r.Unstable != nil {
				unstable[e] = r.Unstable
			}
		}
		// The fields in the order of the oracle's own responses, written as
		// encoding/json writes a struct of them; "unstable" as the oracle serves it
		// (compare then votes none of those items).
		fields := []struct {
			name string
			v    any
		}{{"id", g.id}, {k.About().Field, m}, {"unstable", unstable}}
		out.WriteByte('{')
		for i, f := range fields {
			if f.name == "unstable" && len(unstable) == 0 {
				continue
			}
			name, err := json.Marshal(f.name)
			if err != nil {
				return err
			}
			b, err := json.Marshal(f.v)
			if err != nil {
				return err
			}
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(name)
			out.WriteByte(':')
			out.Write(b)
		}
		out.WriteByte('}')
		return out.WriteByte('\n')
	}
	err := st.Each(ctx, func(r store.Row) error {
		if r.Meta.Profile != profile || !strings.HasPrefix(r.Meta.Walk, walk) || r.Meta.Environment != env {
			return nil
		}
		if g == nil || g.c != r.Meta.Case || g.op != r.Meta.Op {
			if err := flush(); err != nil {
				return err
			}
			g = &group{c: r.Meta.Case, op: r.Meta.Op, answers: map[string]store.Row{}}
		}
		if old, ok := g.answers[r.Meta.Engine]; !ok || r.Created.After(old.Created) {
			g.answers[r.Meta.Engine] = r
		}
		if r.Created.After(g.newest) || g.id == nil {
			g.newest, g.id = r.Created, r.ID
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	var errs []error
	for _, op := range slices.Sorted(maps.Keys(unknown)) {
		errs = append(errs, fmt.Errorf("%d stored cases of op %q not exported: no kind of that name is registered (package kinds)", unknown[op], op))
	}
	return errors.Join(errs...)
}
