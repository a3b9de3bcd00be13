package probes

import (
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/profiles"
	reflection "github.com/layout-oracle/oracle/reflect"
)

// The oracle's startup self-check cases, defined here with the other probes (each is
// also a probe of all) and passed to (*oracle.Oracle).SelfCheck by cmd/oracle. Each
// is fast (well under a second per engine) and answered identically by the three
// engines on the development host (docs/probes.md, "Observed, on the development host", has the
// observations).
var (
	// selfCheckGeometry is a fixed box-model case: a 100x40 div with asymmetric
	// padding, a 2px border and a margin.
	selfCheckGeometry = oracle.SelfCheck{Name: "box-model", Request: oracle.Request{Op: oracle.OpGeometry,
		HTML: str(`<!doctype html><style>html,body{margin:0}</style>` +
			`<div style="width:100px;height:40px;padding:5px 10px;border:2px solid;margin:20px 0 0 30px"></div>`)}}

	// selfCheckTrace is the promise/microtask settlement order: it exercises the
	// recorder, the page's own script, microtasks, tasks and trace.done().
	selfCheckTrace = oracle.SelfCheck{Name: "microtask-order", Request: oracle.Request{Op: oracle.OpTrace,
		Script: str(`const log = [];
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

	// selfCheckReflect is a content attribute reflected into its IDL property.
	selfCheckReflect = oracle.SelfCheck{Name: "input-value-reflection", Request: oracle.Request{Op: oracle.OpReflect,
		HTML:   str(`<input id=a>`),
		Script: str(`document.getElementById('a').setAttribute('value', '5');`),
		Probes: []reflection.Probe{{Selector: "#a", Attr: "value", IDL: "value"}}}}
)

// SelfChecks is the oracle's startup self-check, in order: one geometry, one trace,
// one reflection case, and the pinned environment (selfCheckEnvironment), whose
// answer is compared with what every engine must say.
func SelfChecks() []oracle.SelfCheck {
	return []oracle.SelfCheck{selfCheckGeometry, selfCheckTrace, selfCheckReflect, selfCheckEnvironment}
}

// SelfChecksFor is the self-check under launch profile p: SelfChecks, and under a
// profile that emulates hardware, the emulation checks (EmulationChecks), which take
// an engine claiming an emulation it does not deliver out of service.
func SelfChecksFor(p profiles.Profile) []oracle.SelfCheck {
	checks := SelfChecks()
	if p.Emulation != nil {
		checks = append(checks, EmulationChecks...)
	}
	return checks
}
