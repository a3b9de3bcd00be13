package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle/answerbound"
	"github.com/layout-oracle/oracle/oracle/browser"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
)

// The oracle's case kinds (every request it answers with one answer per engine) are
// package kinds' registry: a kind the oracle answers carries its oracle side, an
// operation, in its description's Run (attach puts it there). The request loop, the
// store, the answer bound, progress and the self-check know a kind only through
// kinds.All, so adding one is a new file holding its description and oracle side and
// a line in that registry (docs/architecture.md, "Adding a request kind"). ping and
// shutdown are not kinds: no engine answers them.

// attach makes k the oracle's side of its kind: its description's Run (package kinds
// cannot import oracle). Each kind's file calls it from its init; the kind is answered
// once its description is registered.
func (k *kind[T]) attach() { k.desc.Run = k }

// operations is every registered kind the oracle answers, in registry order.
func operations() []operation {
	var out []operation
	for _, k := range kinds.All() {
		if op := operationOf(k); op != nil {
			out = append(out, op)
		}
	}
	return out
}

// sideKinds holds the operation built for each kind whose oracle side is written
// beside its description (kinds.Kind -> operation), built once.
var sideKinds sync.Map

// operationOf is the oracle's side of k: one of its own (the description's Run),
// else the one its description's Oracle gives (sidekind.go); nil when the oracle
// does not answer it.
func operationOf(k kinds.Kind) operation {
	if op, ok := k.Runner().(operation); ok {
		return op
	}
	side := k.Side()
	if side == nil {
		return nil
	}
	op, _ := sideKinds.LoadOrStore(k, sideKind(k, side))
	return op.(operation)
}

// operation is one case kind, whatever its answer's type.
type operation interface {
	info() *kindInfo
	// about is the kind's names, from its description in package kinds.
	about() kinds.Info
	// answer runs the request on its engines, from the store where it may.
	answer(ctx context.Context, o *Oracle, req *Request) any
	// failures names each engine of names that did not answer resp (this kind's
	// response) cleanly, or whose answer the check finds fault with.
	failures(c SelfCheck, resp any, names []string) map[string]string
}

// kindInfo is what a kind says about itself besides its answer's type and its
// description in package kinds (op, name, field, run comparison).
type kindInfo struct {
	what string // one answer, in error messages: "dump"
	// screenshot: the kind takes "screenshot" (geometry only).
	screenshot bool
	// keysID: the request's id is part of the case (a trace's page title shows it),
	// so the store keys it (stored.go).
	keysID bool
	// validate checks the kind's own request fields, after the checks every request
	// gets (Request.validate).
	validate func(r *Request) error
	// limit is one engine's answer bound with o's flags (docs/untrusted.md).
	limit func(o *Oracle) int
	// walkExtra is appended to the store key's walk part: a setting that can turn
	// a stored answer into an error now (a trace's limits); nil: none.
	walkExtra func(o *Oracle) string
}

// kind is a case kind whose engines each answer a T.
type kind[T any] struct {
	kindInfo
	// desc is the kind as package kinds describes it to every reader of answers: its
	// op, name (the store's op), response field and run comparison (--verify); the
	// same value as registered there.
	desc *kinds.Of[T]
	// start prepares one run of a request: the context the engines run in and what
	// each engine runs.
	start func(ctx context.Context, o *Oracle, req *Request) (context.Context, func(context.Context, browser.Engine) (T, error))
	// storable, when not nil, refuses to store some answers (a trace that timed out).
	storable func(T) bool
	// together, when not nil, serves stored answers only as a whole (stored.go).
	together func(hits map[string][]byte, asked int) bool
	// fault, when not nil, names what the self-check finds wrong with an engine's
	// answer ("" when nothing).
	fault func(c SelfCheck, engine string, v T) string
}

func (k *kind[T]) info() *kindInfo { return &k.kindInfo }

func (k *kind[T]) about() kinds.Info { return k.desc.Info }

// answer measures the request live (measure), with the store in front unless its
// document is served (servedDocument).
func (k *kind[T]) answer(ctx context.Context, o *Oracle, req *Request) any {
	runs := o.verifyRuns(req)
	if servedDocument(req) {
		resp := response[T]{ID: req.ID, kind: k}
		resp.Answers, resp.Errors, resp.Unstable = k.measure(ctx, o, req, req.Engines, runs)
		return resp
	}
	return storedFanOut(ctx, o, req, k, runs)
}

// measure answers the request live in the named engines (none: every engine that
// serves), runs times in each: each run a case of its own (a fresh start on any free
// page, as every case gets), all runs at once. With more than one run it lists, per engine, the items
// its runs differ on (docs/protocol.md, "Verification"); the answers are the first
// run's. An engine that answered some runs and failed others is unstable on every
// item ("*").
func (k *kind[T]) measure(ctx context.Context, o *Oracle, req *Request, names []string, runs int) (answers map[string]T, errs map[string]string, unstable map[string][]string) {
	if runs <= 1 {
		rctx, do := k.start(ctx, o, req)
		answers, errs = fanOut(rctx, o, names, do)
		return answers, errs, nil
	}
	// The runs go out at once, each to whichever page is free: a verified case costs
	// its engines runs cases, not runs times its latency.
	type run struct {
		answers map[string]T
		errs    map[string]string
	}
	done := make([]run, runs)
	var wg sync.WaitGroup
	for i := range done {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, do := k.start(ctx, o, req)
			done[i].answers, done[i].errs = fanOut(rctx, o, names, do)
		}()
	}
	wg.Wait()
	answers, errs = done[0].answers, done[0].errs
	all := map[string][]T{}
	failed := map[string]int{} // runs that ended in an error, per engine
	for _, r := range done {
		for n, v := range r.answers {
			all[n] = append(all[n], v)
		}
		for n := range r.errs {
			failed[n]++
		}
	}
	for n := range errs {
		if ok := len(all[n]); ok > 0 {
			errs[n] += fmt.Sprintf(" (unstable: %d of %d runs answered)", ok, runs)
		}
	}
	for n := range answers {
		items, err := k.desc.Runs(all[n])
		if failed[n] > 0 || err != nil {
			items = []string{compare.AllItems}
		}
		if len(items) == 0 {
			continue
		}
		if unstable == nil {
			unstable = map[string][]string{}
		}
		unstable[n] = items
		o.log.Info().RawJSON("id", req.ID).Str("engine", n).Strs("items", items).Int("runs", runs).Msg("unstable answer")
	}
	return answers, errs, unstable
}

// verifyRuns is how many times the request is measured per engine: its "verify",
// else --verify.
func (o *Oracle) verifyRuns(req *Request) int {
	if req.Verify != nil {
		return *req.Verify
	}
	return max(o.verify, 1)
}

func (k *kind[T]) failures(c SelfCheck, resp any, names []string) map[string]string {
	out := map[string]string{}
	r, ok := resp.(response[T])
	for _, name := range names {
		switch {
		case !ok:
			out[name] = fmt.Sprintf("unexpected response %T", resp)
			if e, isErr := resp.(ErrorResponse); isErr {
				out[name] = e.Error
			}
		case r.Errors[name] != "":
			out[name] = r.Errors[name]
		case !r.has(name):
			out[name] = "no answer"
		case k.fault != nil:
			if msg := k.fault(c, name, r.Answers[name]); msg != "" {
				out[name] = msg
			}
		}
	}
	return out
}

// kindOf is the registered kind whose answers are T's; false when none is (a
// response of a kind removed since, or never registered).
func kindOf[T any]() (*kind[T], bool) {
	for _, op := range operations() {
		if k, ok := op.(*kind[T]); ok {
			return k, true
		}
	}
	return nil, false
}

// noKind is the error of a response whose answer's type no registered kind has.
func noKind[T any]() error {
	return fmt.Errorf("oracle: no registered kind answers %T", *new(T))
}

// kindFor is the kind a request's op names, nil for ping, shutdown, an unknown op
// or a kind the oracle does not answer.
func kindFor(op string) operation {
	k := kinds.ByOp(op)
	if k == nil {
		return nil
	}
	return operationOf(k)
}

// knownOps lists the ops a request may name, for the unknown-op error.
func knownOps() string {
	names := []string{OpPing, opShutdown}
	geometry := ""
	for _, k := range operations() {
		if k.about().Op == "" {
			geometry = " or none for " + k.about().Name
			continue
		}
		names = append(names, k.about().Op)
	}
	return strings.Join(names, ", ") + "," + geometry
}

// response answers a case request of any kind: one answer per engine, under the
// kind's field ("dumps", "traces", "states"), and an error for each engine that has
// none.
type response[T any] struct {
	ID      json.RawMessage
	Answers map[string]T
	Errors  map[string]string
	// Unstable (additive) lists, per engine, the items its runs of a verified case
	// (--verify, "verify") differed on (compare's item names); absent when none did.
	Unstable map[string][]string
	// Stored (additive) names the engines answered from the store (--store), in
	// launch order; absent when every answer is live.
	Stored []string
	// raw holds the stored answers as their JSON text when the response is only
	// written out (Serve), instead of in Answers; MarshalJSON puts them in place.
	raw map[string]json.RawMessage
	// kind is the kind that answered; nil: the registered kind whose answers are T's.
	kind *kind[T]
}

// of is the kind of r; false when none is known.
func (r response[T]) of() (*kind[T], bool) {
	if r.kind != nil {
		return r.kind, true
	}
	return kindOf[T]()
}

// The responses of the three kinds, by the names the protocol's users know.
type (
	geometryResponse = response[*dump.Dump]
	TraceResponse    = response[*trace.Trace]
	reflectResponse  = response[*reflection.State]
)

// has says whether engine answered.
func (r response[T]) has(engine string) bool {
	if _, ok := r.raw[engine]; ok {
		return true
	}
	v, ok := r.Answers[engine]
	return ok && !isNil(v)
}

// isNil says whether an answer is missing: a nil pointer (every kind's answer is one).
func isNil[T any](v T) bool {
	rv := reflect.ValueOf(&v).Elem()
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// engineErrors is every engine's error (progress counts answers that have some).
func (r response[T]) engineErrors() map[string]string { return r.Errors }

// CaseResponse is what Handle answers a case request of any kind with (a
// Response[T]), seen without its answer's type: a caller that handles every kind
// alike (package probes) reads it through this, so a new kind needs no edit there.
type CaseResponse interface {
	// KindName is the kind's name: "geometry", "trace", "reflect".
	KindName() string
	// EngineAnswer is engine's answer (a *dump.Dump, *trace.Trace, ...), nil when
	// it has none.
	EngineAnswer(engine string) any
	// EngineError is engine's error, "" when it has none.
	EngineError(engine string) string
}

// KindName implements CaseResponse; "" when no registered kind answers a T.
func (r response[T]) KindName() string {
	k, ok := r.of()
	if !ok {
		return ""
	}
	return k.desc.Name
}

// EngineAnswer implements CaseResponse. A stored answer only Serve writes out
// (raw) is not decoded here: Handle's responses carry their answers decoded.
func (r response[T]) EngineAnswer(engine string) any {
	v, ok := r.Answers[engine]
	if !ok || isNil(v) {
		return nil
	}
	return v
}

// EngineError implements CaseResponse.
func (r response[T]) EngineError(engine string) string { return r.Errors[engine] }

// MarshalJSON writes {"id","<field>","errors","unstable","stored"} as encoding/json
// writes a struct with those fields (the last three omitted when empty), with the stored
// answers in raw put in place as the JSON text they were stored as.
func (r response[T]) MarshalJSON() ([]byte, error) {
	var answers any = r.Answers
	if len(r.raw) > 0 {
		all, err := withRaw(r.Answers, r.raw)
		if err != nil {
			return nil, err
		}
		answers = all
	}
	var b bytes.Buffer
	writeJSON := func(key string, enc []byte) {
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(`"` + key + `":`)
		b.Write(enc)
	}
	write := func(key string, v any) error {
		enc, err := json.Marshal(v)
		if err == nil {
			writeJSON(key, enc)
		}
		return err
	}
	k, ok := r.of()
	if !ok {
		return nil, noKind[T]()
	}
	id := []byte(r.ID) // as sent: json.Marshal would escape <, > and & in it (encodeLine)
	if len(id) == 0 {
		id = []byte("null")
	}
	writeJSON("id", id)
	if err := write(k.desc.Field, answers); err != nil {
		return nil, err
	}
	if len(r.Errors) > 0 {
		if err := write("errors", r.Errors); err != nil {
			return nil, err
		}
	}
	if len(r.Unstable) > 0 {
		if err := write("unstable", r.Unstable); err != nil {
			return nil, err
		}
	}
	if len(r.Stored) > 0 {
		if err := write("stored", r.Stored); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// bounded returns r with every error fitted (answerbound.FitError) and, when the line is over
// one engine's answer bound, every answer over it replaced by an error naming it.
func (r response[T]) bounded(lim answerLimits) ([]byte, error) {
	for n, e := range r.Errors {
		r.Errors[n] = answerbound.FitError(e)
	}
	k, ok := r.of()
	if !ok {
		return nil, noKind[T]()
	}
	max := lim[k.desc.Name]
	if b, err := encodeLine(r); err != nil || len(b) <= max {
		return b, err
	}
	r.Errors = answerbound.Answers(r.Answers, r.raw, r.Errors, max, k.what)
	return encodeLine(r)
}
