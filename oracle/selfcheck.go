package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
)

// SelfCheck is one startup self-check case: a request every launched engine must
// answer without error before it serves. The DefaultSelfChecks are also probes of
// cmd/probe (package probes reuses these values), so each case has one definition.
type SelfCheck struct {
	Name    string
	Request Request // Op, HTML, Script, Probes; the run sets ID and Engines
	// Expect, on a trace check, names what is wrong with one engine's answer (nil or
	// empty: nothing); an engine it finds fault with fails the check.
	Expect func(engine string, t *trace.Trace) []string
}

// NewRequest is the check's request for the named engines (nil: every launched one),
// a copy, so a caller cannot change the shared definition.
func (c SelfCheck) NewRequest(id string, engines []string) *Request {
	r := c.Request
	r.ID, _ = json.Marshal(id)
	r.Engines = append([]string(nil), engines...)
	r.Probes = append(r.Probes[:0:0], r.Probes...)
	return &r
}

func strPtr(s string) *string { return &s }

// The three self-check cases: one geometry, one trace, one reflection request, each
// fast (well under a second per engine) and each answered identically by the three
// engines on the development host (the README's "Probes" section has the observations).
var (
	// SelfCheckGeometry is a fixed box-model case: a 100x40 div with asymmetric
	// padding, a 2px border and a margin.
	SelfCheckGeometry = SelfCheck{Name: "box-model", Request: Request{Op: OpGeometry,
		HTML: strPtr(`<!doctype html><style>html,body{margin:0}</style>` +
			`<div style="width:100px;height:40px;padding:5px 10px;border:2px solid;margin:20px 0 0 30px"></div>`)}}

	// SelfCheckTrace is the promise/microtask settlement order: it exercises the
	// recorder, the page's own script, microtasks, tasks and trace.done().
	SelfCheckTrace = SelfCheck{Name: "microtask-order", Request: Request{Op: OpTrace,
		Script: strPtr(`const log = [];
setTimeout(() => log.push('timeout'), 0);
Promise.resolve().then(() => log.push('then1')).then(() => log.push('then2'));
queueMicrotask(() => log.push('queueMicrotask'));
(async () => { log.push('async-start'); await null; log.push('after-await'); })();
trace.settle('resolved', Promise.resolve(42));
trace.settle('rejected', Promise.reject(new TypeError('no')));
trace.settle('race', Promise.race([new Promise(r => setTimeout(() => r('slow'), 20)), Promise.resolve('fast')]));
trace.settle('all', Promise.all([1, Promise.resolve(2), new Promise(r => setTimeout(() => r(3), 10))]));
log.push('sync-end');
setTimeout(() => { trace.value('order', log); trace.done(); }, 60);`)}}

	// SelfCheckReflect is a content attribute reflected into its IDL property.
	SelfCheckReflect = SelfCheck{Name: "input-value-reflection", Request: Request{Op: OpReflect,
		HTML:   strPtr(`<input id=a>`),
		Script: strPtr(`document.getElementById('a').setAttribute('value', '5');`),
		Probes: []reflect.Probe{{Selector: "#a", Attr: "value", IDL: "value"}}}}
)

// DefaultSelfChecks is the startup subset: one geometry, one trace, one reflection
// case, and the pinned environment (environment.go), whose answer is compared with
// what every engine must say.
func DefaultSelfChecks() []SelfCheck {
	return []SelfCheck{SelfCheckGeometry, SelfCheckTrace, SelfCheckReflect, SelfCheckEnvironment}
}

// SelfCheckReport is the outcome of SelfCheck.
type SelfCheckReport struct {
	Passed []string          `json:"passed"` // engines that answered every check; they keep serving
	Failed map[string]string `json:"failed"` // engines taken out of service, with the reason
	Took   time.Duration     `json:"took"`
}

// SelfCheck runs checks, in order, through every launched engine, via Handle as any
// request is served. An engine that errors on any check, or whose trace times out
// (the check's script did not finish), is taken out of service: it leaves the
// serving set, so requests naming it get "engine not launched", its browsers are
// closed, and ping names it in "failed" with the reason. The rest keep serving.
//
// Call it after Launch and before Serve: it changes the serving set, which Serve and
// ping read without locking.
func (o *Oracle) SelfCheck(ctx context.Context, checks []SelfCheck) SelfCheckReport {
	start := time.Now()
	reasons := map[string][]string{}
	ctx = withoutStore(ctx) // the check is of the engines: a stored answer would hide a broken one
	for i, c := range checks {
		resp := o.Handle(ctx, c.NewRequest(fmt.Sprintf("self-check-%d-%s", i, c.Name), nil))
		for name, msg := range checkFailures(c, resp, o.order) {
			reasons[name] = append(reasons[name], c.Name+": "+msg)
		}
	}
	rep := SelfCheckReport{Failed: map[string]string{}}
	for _, name := range append([]string(nil), o.order...) {
		if r := reasons[name]; len(r) > 0 {
			rep.Failed[name] = "failed self-check: " + strings.Join(r, "; ")
			o.retire(name, rep.Failed[name])
			continue
		}
		rep.Passed = append(rep.Passed, name)
	}
	rep.Took = time.Since(start)
	ev := o.log.Info()
	if len(rep.Failed) > 0 {
		ev = o.log.Error()
		for _, name := range sortedKeys(rep.Failed) {
			ev = ev.Str(name, rep.Failed[name])
		}
	}
	ev.Strs("passed", rep.Passed).Int("checks", len(checks)).Dur("took", rep.Took).Msg("self-check")
	return rep
}

// checkFailures names each engine in names that did not answer resp, c's answer,
// cleanly, or whose answer c.Expect finds fault with.
func checkFailures(c SelfCheck, resp any, names []string) map[string]string {
	out := map[string]string{}
	missing := func(errs map[string]string, has func(string) bool, extra func(string) string) {
		for _, name := range names {
			switch {
			case errs[name] != "":
				out[name] = errs[name]
			case !has(name):
				out[name] = "no answer"
			case extra != nil && extra(name) != "":
				out[name] = extra(name)
			}
		}
	}
	switch r := resp.(type) {
	case GeometryResponse:
		missing(r.Errors, func(n string) bool { return r.Dumps[n] != nil }, nil)
	case TraceResponse:
		missing(r.Errors, func(n string) bool { return r.Traces[n] != nil }, func(n string) string {
			if r.Traces[n].TimedOut {
				return "trace timed out: the check's script never called trace.done()"
			}
			if c.Expect != nil {
				return strings.Join(c.Expect(n, r.Traces[n]), "; ")
			}
			return ""
		})
	case ReflectResponse:
		missing(r.Errors, func(n string) bool { return r.States[n] != nil }, nil)
	case ErrorResponse:
		for _, name := range names {
			out[name] = r.Error
		}
	default:
		for _, name := range names {
			out[name] = fmt.Sprintf("unexpected response %T", resp)
		}
	}
	return out
}

// retire takes an engine out of service: out of the serving set, its browsers
// closed (Close is safe to call again at the oracle's own Close), named in ping's
// "failed" with the reason.
func (o *Oracle) retire(name, reason string) {
	p, ok := o.engines[name]
	if !ok {
		return
	}
	delete(o.engines, name)
	for i, n := range o.order {
		if n == name {
			o.order = append(o.order[:i:i], o.order[i+1:]...)
			break
		}
	}
	o.failed[name] = reason
	// Wait for every page to come back from the reset after its last check, so no
	// close races a reset; a page still out after that is closed anyway.
	wait := time.After(2 * resetTimeout)
	for range p.pages {
		select {
		case <-p.free:
		case <-wait:
		}
	}
	for _, e := range p.pages {
		if err := e.Close(); err != nil {
			o.log.Warn().Str("engine", name).Err(err).Msg("close after failed self-check")
		}
	}
}

// Serving lists the engines serving requests, in AllEngines order.
func (o *Oracle) Serving() []string { return append([]string(nil), o.order...) }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
