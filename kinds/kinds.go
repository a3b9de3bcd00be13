// Package kinds describes each request kind as every reader of its answers knows it:
// the request's op, the kind's name (the store's op), the response's field, the
// candidate record's field, how one answer decodes, how two runs of one engine
// differ (the store's stability diff, --verify) and how the engines' answers are
// voted and a candidate scored (cmd/compare). The oracle runs a kind (oracle/operation.go
// holds how it runs them, which it attaches to the kind's Run); the store's diff, `oracle store export`, cmd/compare and
// client read this registry, so a kind they are not told of is an error there, never
// silently dropped (docs/architecture.md, "Adding a request kind").
//
// kinds imports the answer packages and compare (whose run comparisons and votes it
// names), nothing else of the module; oracle, client and the commands import it.
package kinds

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
)

// Info is what a kind is called where.
type Info struct {
	Op     string // the request's "op"; "" for geometry
	Name   string // the store's op and the logs' name: "geometry"
	Field  string // the response's map of answers by engine: "dumps"
	Record string // a candidate record's answer field: "dump"
	// Case names a case of the kind in compare's messages: "geometry", "a trace".
	Case string
}

// Kind is one registered kind, whatever its answer's type.
type Kind interface {
	About() Info
	// Answers decodes a response's field (engine -> answer as JSON) into a
	// map[string]T.
	Answers(raw json.RawMessage) (any, error)
	// Unstable is the run comparison on answers as JSON (as the store keeps them):
	// the items they differ on, none when they are one answer.
	Unstable(answers [][]byte) ([]string, error)
	// Score votes answers (what Answers returned) and scores cand, a T, against
	// them; cand nil only votes.
	Score(answers, cand any, opts compare.Options) (*compare.Report, error)
	// Runner is how the oracle answers the kind (Of's Run), nil for a kind only
	// readers of answers know.
	Runner() any
	// Side is the oracle's side written beside the description (Of's Oracle), nil
	// when none is.
	Side() *Side
}

// Of is a kind whose engines each answer a T.
type Of[T any] struct {
	Info
	// Decode reads one stored answer for the run comparison (Unstable); nil:
	// encoding/json.
	Decode func([]byte) (T, error)
	// Runs names the items that differ between runs of one engine, by the vote's own
	// rules (package compare).
	Runs func(runs []T) ([]string, error)
	// Vote votes the engines' answers and scores cand (the zero T: only votes), with
	// opts' tolerance, unstable items and axes where the kind has them.
	Vote func(answers map[string]T, cand T, opts compare.Options) (*compare.Report, error)
	// Oracle is how the oracle answers the kind, written here beside the rest: a
	// new kind is its file and a registry line. Nil: the oracle answers it with Run,
	// or not at all.
	Oracle *Oracle[T]
	// Run is how the oracle answers one of its own kinds, one that needs the
	// oracle's internals (screenshots, inert windows, a trace's origin): a value of
	// package oracle's, set there (oracle/operation.go, attach). Nil: the oracle
	// answers the kind by Oracle, or does not answer its op; every other reader
	// ignores it.
	Run any
}

// Oracle is the oracle's side of a kind whose every engine runs one program in the
// case's page, after the case's own script.
type Oracle[T any] struct {
	What string // one answer, in the oracle's errors: "title"
	// Validate checks the request for the kind (the fields every request shares are
	// checked before); nil: nothing more.
	Validate func(c Case) error
	// Limit is one engine's answer bound in bytes (docs/untrusted.md).
	Limit int
	// Run is one engine's answer: it runs the case in p (p.Run) and reads the result.
	Run func(ctx context.Context, p Page) (T, error)
}

// Case is a request as a kind's Validate sees it (docs/protocol.md).
type Case struct {
	HTML, URL *string // the document: written, or navigated to under --docroot
	Script    string
}

// Page is one engine's page as a kind's Run sees it (the oracle implements it).
type Page interface {
	Engine() string  // the engine's name: "chromium"
	Version() string // its build
	// Run loads the case's document (its html written, or its url navigated to),
	// runs its script, lets the page settle, then calls the in-page function fn with
	// args and returns its result as JSON text; a script that throws is the case's
	// error.
	Run(ctx context.Context, fn string, args ...any) (json.RawMessage, error)
}

// Side is an Oracle with its answer as JSON, whatever the kind's T: what the oracle
// runs.
type Side struct {
	What     string
	Validate func(c Case) error
	Limit    int
	Run      func(ctx context.Context, p Page) (json.RawMessage, error)
}

// Side implements Kind.
func (k *Of[T]) Side() *Side {
	o := k.Oracle
	if o == nil {
		return nil
	}
	return &Side{What: o.What, Validate: o.Validate, Limit: o.Limit,
		Run: func(ctx context.Context, p Page) (json.RawMessage, error) {
			v, err := o.Run(ctx, p)
			if err != nil {
				return nil, err
			}
			return json.Marshal(v)
		}}
}

// About implements Kind.
func (k *Of[T]) About() Info { return k.Info }

// Runner implements Kind.
func (k *Of[T]) Runner() any { return k.Run }

// decode is one answer as a T.
func (k *Of[T]) decode(b []byte) (T, error) {
	if k.Decode != nil {
		return k.Decode(b)
	}
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

// Answers implements Kind: encoding/json, as a response is read (Decode is not
// applied: compare refuses an answer it cannot vote with its own message).
func (k *Of[T]) Answers(raw json.RawMessage) (any, error) {
	var m map[string]T
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Unstable implements Kind.
func (k *Of[T]) Unstable(answers [][]byte) ([]string, error) {
	if k.Runs == nil {
		return nil, fmt.Errorf("kinds: %s has no run comparison", k.Name)
	}
	runs := make([]T, len(answers))
	for i, a := range answers {
		v, err := k.decode(a)
		if err != nil {
			return nil, err
		}
		runs[i] = v
	}
	return k.Runs(runs)
}

// Score implements Kind.
func (k *Of[T]) Score(answers, cand any, opts compare.Options) (*compare.Report, error) {
	if k.Vote == nil {
		return nil, fmt.Errorf("kinds: %s has no vote", k.Name)
	}
	m, ok := answers.(map[string]T)
	if !ok {
		return nil, fmt.Errorf("kinds: %s answers are %T, not its own", k.Name, answers)
	}
	var c T
	if cand != nil {
		if c, ok = cand.(T); !ok {
			return nil, fmt.Errorf("kinds: a %s candidate is %T, not its answer", k.Name, cand)
		}
	}
	return k.Vote(m, c, opts)
}

// The three kinds.
var (
	Geometry = &Of[*dump.Dump]{
		Info:   Info{Op: "", Name: "geometry", Field: "dumps", Record: "dump", Case: "geometry"},
		Decode: dump.Decode,
		Runs: func(runs []*dump.Dump) ([]string, error) {
			return compare.UnstableGeometry(runs, dump.DefaultTolerance)
		},
		Vote: func(answers map[string]*dump.Dump, cand *dump.Dump, opts compare.Options) (*compare.Report, error) {
			return compare.GeometryWith(answers, cand, opts)
		},
	}
	Reflect = &Of[*reflection.State]{
		Info: Info{Op: "reflect", Name: "reflect", Field: "states", Record: "state", Case: "a reflection"},
		Runs: compare.UnstableReflection,
		Vote: func(answers map[string]*reflection.State, cand *reflection.State, opts compare.Options) (*compare.Report, error) {
			return compare.ReflectionUnstable(answers, cand, opts.Unstable)
		},
	}
	Trace = &Of[*trace.Trace]{
		Info: Info{Op: "trace", Name: "trace", Field: "traces", Record: "trace", Case: "a trace"},
		Runs: func(runs []*trace.Trace) ([]string, error) {
			return compare.UnstableTraces(runs, trace.DefaultBufferTolerance)
		},
		Vote: func(answers map[string]*trace.Trace, cand *trace.Trace, opts compare.Options) (*compare.Report, error) {
			return compare.ScoreTraces(answers, cand, trace.DefaultBufferTolerance, opts.Unstable)
		},
	}
)

// ResponseFields are a response's fields besides its kind's answers
// (docs/protocol.md): a line with another field, and none of a registered kind, is
// the answer of a kind its reader is not told of.
var ResponseFields = []string{"id", "errors", "error", "ok", "unstable", "stored", "line"}

// registry is every kind, in the oracle's order; a new kind is a value and a line
// here. It is read and changed under its lock: a test registers a throw-away kind
// while other goroutines (an oracle's request loop, a client's reader) look kinds up.
var registry = struct {
	sync.RWMutex
	all []Kind
}{all: []Kind{Geometry, Trace, Reflect}}

// All is every registered kind, in registry order.
func All() []Kind {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Clone(registry.all)
}

// Register adds k, a test's throw-away kind (a kind of the tree is a line in
// registry), and returns what removes it again (t.Cleanup's argument; calling it
// twice removes it once). It refuses k when a registered kind already has its op,
// name or response field: a reader could not tell the two apart.
func Register(k Kind) (unregister func(), err error) {
	in := k.About()
	registry.Lock()
	defer registry.Unlock()
	for _, r := range registry.all {
		if r == k {
			return nil, fmt.Errorf("kinds: %s is registered already", in.Name)
		}
		if of := r.About(); of.Op == in.Op || of.Name == in.Name || of.Field == in.Field {
			return nil, fmt.Errorf("kinds: %s (op %q, field %q) clashes with the registered %s (op %q, field %q)", in.Name, in.Op, in.Field, of.Name, of.Op, of.Field)
		}
	}
	registry.all = append(slices.Clone(registry.all), k)
	var once sync.Once
	return func() {
		once.Do(func() {
			registry.Lock()
			defer registry.Unlock()
			registry.all = slices.DeleteFunc(slices.Clone(registry.all), func(r Kind) bool { return r == k })
		})
	}, nil
}

// find is the registered kind whose Info field of choice is v, nil when none.
func find(v string, of func(Info) string) Kind {
	for _, k := range All() {
		if of(k.About()) == v {
			return k
		}
	}
	return nil
}

// ByName is the kind named name (the store's op), nil when none is.
func ByName(name string) Kind { return find(name, func(i Info) string { return i.Name }) }

// ByOp is the kind a request's op names, nil when none does.
func ByOp(op string) Kind { return find(op, func(i Info) string { return i.Op }) }

// ByField is the kind whose response carries its answers under field, nil when none.
func ByField(field string) Kind { return find(field, func(i Info) string { return i.Field }) }

// Fields lists the registered kinds' response fields, quoted: `"dumps", "traces", ...`,
// for messages.
func Fields() string {
	var out []string
	for _, k := range All() {
		out = append(out, fmt.Sprintf("%q", k.About().Field))
	}
	return strings.Join(out, ", ")
}

// UnstableAnswers is the run comparison of the kind named name on answers as JSON
// (the store's Options.Diff), with the default tolerances (dump.DefaultTolerance,
// trace.DefaultBufferTolerance). An error means an answer does not decode or is
// refused, or no kind is named name.
func UnstableAnswers(name string, answers [][]byte) ([]string, error) {
	k := ByName(name)
	if k == nil {
		return nil, fmt.Errorf("kinds: no kind %q (known: %s)", name, names())
	}
	return k.Unstable(answers)
}

// names lists the registered kinds' names, for messages.
func names() string {
	var out []string
	for _, k := range All() {
		out = append(out, k.About().Name)
	}
	return strings.Join(out, ", ")
}
