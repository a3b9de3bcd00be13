package cli

// Deprecated spellings. A flag that is renamed (compare --oracle FILE became
// --answers FILE) or replaced (bench --oracle-args "FLAGS" became --oracle-flag F,
// repeated) keeps its old spelling for one release: the old spelling still works,
// -h no longer lists it (one name, one meaning, in the help), and each use prints
// one line on stderr, "PROG: OLD is deprecated, use NEW", the same in every binary.

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Deprecation writes the line a deprecated spelling prints on use:
// "PROG: OLD is deprecated, use NEW". Flags registered with Alias or
// SplitAlias print it themselves; a spelling that is not a flag (wpt run's
// "-- FLAGS") calls it directly.
func Deprecation(w io.Writer, prog, old, instead string) {
	fmt.Fprintf(w, "%s: %s is deprecated, use %s\n", prog, old, instead)
}

// deprecated is the flag.Value of a deprecated spelling: it says so once, on fs's
// output, and hands the value on.
type deprecated struct {
	flag.Value   // the new flag's own Value (Alias), or a funcValue (deprecatedFunc)
	fs           *flag.FlagSet
	target       string // the new flag's name (Alias); "" for deprecatedFunc
	old, instead string // as Deprecation prints them
	said         bool
}

func (d *deprecated) Set(s string) error {
	if !d.said {
		d.said = true
		Deprecation(d.fs.Output(), d.fs.Name(), d.old, d.instead)
	}
	return d.Value.Set(s)
}

// String is safe on the zero value (flag calls it on one to find the default).
func (d *deprecated) String() string {
	if d == nil || d.Value == nil {
		return ""
	}
	return d.Value.String()
}

// IsBoolFlag lets the alias of a boolean flag stand alone (--old, no =value).
func (d *deprecated) IsBoolFlag() bool {
	b, ok := d.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Alias makes old a deprecated spelling of the flag named new, which must already
// be defined on fs: --old X sets what --new X sets, and says "PROG: --old ARG is
// deprecated, use --new ARG" (ARG the new flag's `NAME` from its usage). Parse
// refuses both spellings on one command line.
func Alias(fs *flag.FlagSet, old, new string) {
	nf := fs.Lookup(new)
	if nf == nil {
		panic("cli.Alias: no flag --" + new + " on " + fs.Name())
	}
	arg, _ := flag.UnquoteUsage(nf)
	if arg != "" {
		arg = " " + arg
	}
	fs.Var(&deprecated{Value: nf.Value, fs: fs, target: new, old: "--" + old + arg, instead: "--" + new + arg},
		old, "deprecated spelling of --"+new)
}

// deprecatedFunc defines the deprecated flag old, whose value fn takes (e.g. splits
// into the new flag's values). oldSpelling and instead are what the line on use
// says: "PROG: OLDSPELLING is deprecated, use INSTEAD".
func deprecatedFunc(fs *flag.FlagSet, old, oldSpelling, instead string, fn func(string) error) {
	fs.Var(&deprecated{Value: funcValue(fn), fs: fs, old: oldSpelling, instead: instead},
		old, "deprecated: use "+instead)
}

// SplitAlias defines old, a deprecated flag whose value is a space-separated list
// of values of the repeatable flag new, which list holds: bench --oracle-args
// "A B" is --oracle-flag A --oracle-flag B, and says "PROG: --old "F..." is
// deprecated, use --new F, repeated".
func SplitAlias(fs *flag.FlagSet, old, new string, list *List) {
	deprecatedFunc(fs, old, "--"+old+` "F..."`, "--"+new+" F, repeated", func(s string) error {
		*list = append(*list, strings.Fields(s)...)
		return nil
	})
}

type funcValue func(string) error

func (f funcValue) Set(s string) error { return f(s) }
func (f funcValue) String() string     { return "" }

// isDeprecated says whether f is a deprecated spelling (Alias, SplitAlias).
func isDeprecated(f *flag.Flag) bool {
	_, ok := f.Value.(*deprecated)
	return ok
}

// Canonical is the name a set flag goes by now: the new flag's name for an Alias,
// else f's own. A command that passes its flags on to a child (reduce --bench)
// passes them under this name, so the child does not repeat the deprecation line.
func Canonical(f *flag.Flag) string {
	if d, ok := f.Value.(*deprecated); ok && d.target != "" {
		return d.target
	}
	return f.Name
}

// bothSpellings is the error for a command line that gives a flag under its
// deprecated and its new name, nil when none does.
func bothSpellings(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.Visit(func(f *flag.Flag) {
		if d, ok := f.Value.(*deprecated); ok && d.target != "" && set[d.target] && err == nil {
			err = fmt.Errorf("--%s and --%s are one flag (--%s is its deprecated spelling): give --%s only", f.Name, d.target, f.Name, d.target)
		}
	})
	return err
}

// PrintDefaults is fs.PrintDefaults without the deprecated spellings: what -h
// lists is one name for each thing.
func PrintDefaults(fs *flag.FlagSet) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if isDeprecated(f) {
			return
		}
		shown.Var(f.Value, f.Name, f.Usage)
		shown.Lookup(f.Name).DefValue = f.DefValue // the default, not a value parsed before -h
	})
	shown.PrintDefaults()
}

// List is a repeatable string flag: each use adds one value (--oracle-flag F).
type List []string

func (l *List) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, " ")
}

func (l *List) Set(s string) error { *l = append(*l, s); return nil }
