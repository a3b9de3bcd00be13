package oracle

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/layout-oracle/oracle/oracle/pool"
	"github.com/layout-oracle/oracle/trace"
)

// SelfCheck is one startup self-check case: a request every launched engine must
// answer without error before it serves. The cases are defined in package probes
// (probes.SelfChecks), where each is also a probe of cmd/probe, and cmd/oracle passes
// them to Start, which runs them on each engine as it comes up (checkEngine).
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
	once := 1 // whatever --verify says: a check is a gate, not a measurement
	r.Verify = &once
	return &r
}

// checkFailures names each engine in names that did not answer resp, c's answer,
// cleanly, or whose answer its kind's check finds fault with.
func checkFailures(c SelfCheck, resp any, names []string) map[string]string {
	k := kindFor(c.Request.Op)
	if k == nil {
		out := map[string]string{}
		for _, name := range names {
			out[name] = fmt.Sprintf("self-check %q is not a case request (op %q)", c.Name, c.Request.Op)
		}
		return out
	}
	return k.failures(c, resp, names)
}

// closePool closes p's browsers once every page is back from the reset after its
// last case, so no close races a reset; a page still out after that is closed anyway.
func (o *Oracle) closePool(name string, p *pool.Pool) {
	p.Drain(2 * resetTimeout)
	for _, e := range p.All() {
		if err := e.Close(); err != nil {
			o.log.Warn().Str("engine", name).Err(err).Msg("close after failed self-check")
		}
	}
}

// Serving lists the engines serving requests, in AllEngines order.
func (o *Oracle) Serving() []string {
	o.stateMu.RLock()
	defer o.stateMu.RUnlock()
	return append([]string(nil), o.order...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
