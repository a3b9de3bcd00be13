package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/dump/schema"
	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/oracle/answerbound"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
)

// oracleLine is one line of the oracle's stdout. A response of a registered kind
// (package kinds: geometry's "dumps", reflection's "states", traces' "traces", ...)
// and an error response ("error") are cases, and so is a response of a kind compare
// does not know (a field no response and no registered kind has): it is reported as
// that case's error, never skipped. Ping and shutdown replies (they carry "ok") are
// not cases, and are skipped: ping's additive "states" is engine health, not a
// reflection case.
type oracleLine struct {
	ID     json.RawMessage
	Errors map[string]string
	Error  *string
	OK     json.RawMessage
	// Unstable is the additive "unstable": per engine, the items its runs of the
	// case answered differently (oracle --verify); they are never made a verdict.
	Unstable compare.Unstable

	// kind is the registered kind whose field the line has (raw), nil when none.
	kind kinds.Kind
	raw  json.RawMessage
	// others are the line's fields of further registered kinds (a line answers one
	// kind), unknown its fields that neither a response nor a registered kind has.
	others, unknown []string
	// swap is a candidate record's answer field (or a bare dump's "nodes") the line
	// has: present only when the files were given the wrong way round (swapped).
	swap string

	// answers is raw decoded (kind's Answers), once the line is known to be a case;
	// Dumps and Traces are it for geometry and traces, for the HTML report.
	answers any
	Dumps   map[string]*dump.Dump
	Traces  map[string]*trace.Trace
}

// decodeOracleLine reads one oracle line into l. A syntax error leaves the stream
// unreadable; a field of the wrong type is returned (the first) with l filled as far
// as it goes, as encoding/json does for a struct.
func decodeOracleLine(dec *json.Decoder, l *oracleLine) error {
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return err
	}
	var first error
	for _, f := range []struct {
		name string
		v    any
	}{{"id", &l.ID}, {"errors", &l.Errors}, {"error", &l.Error}, {"ok", &l.OK}, {"unstable", &l.Unstable}} {
		if raw, ok := fields[f.name]; ok {
			if err := json.Unmarshal(raw, f.v); err != nil && first == nil {
				first = err
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		raw := fields[name]
		switch {
		case slices.Contains(kinds.ResponseFields, name):
		case kinds.ByField(name) != nil:
			if !given(raw) {
				continue
			}
			if l.kind == nil {
				l.kind, l.raw = kinds.ByField(name), raw
			} else {
				l.others = append(l.others, name)
			}
		case isRecordField(name) || name == "nodes":
			if given(raw) && l.swap == "" {
				l.swap = name
			}
		default:
			l.unknown = append(l.unknown, name)
		}
	}
	return first
}

// isRecordField says whether name is a registered kind's candidate record field.
func isRecordField(name string) bool {
	for _, k := range kinds.All() {
		if k.About().Record == name {
			return true
		}
	}
	return false
}

func (l *oracleLine) isCase() bool {
	if given(l.OK) {
		return false
	}
	// A candidate record or bare dump in the oracle file is not a case (swapped).
	return l.kind != nil || l.Error != nil || (len(l.unknown) > 0 && l.swap == "")
}

// answer decodes the line's answers (its kind's field); an error when they do not
// decode, the line answers more than one kind, or no kind compare knows.
func (l *oracleLine) answer(n int) error {
	if l.kind == nil {
		if l.Error != nil {
			return nil // an error response: the case is untrustworthy
		}
		return fmt.Errorf("oracle record %d answers under %s: no kind compare knows has that field (known: %s)", n, quoted(l.unknown), kinds.Fields())
	}
	if len(l.others) > 0 {
		return fmt.Errorf("oracle record %d answers under %q and %s: a response answers one kind", n, l.kind.About().Field, quoted(l.others))
	}
	a, err := l.kind.Answers(l.raw)
	if err != nil {
		return fmt.Errorf("oracle record %d: %v", n, err)
	}
	l.answers = a
	l.Dumps, _ = a.(map[string]*dump.Dump)
	l.Traces, _ = a.(map[string]*trace.Trace)
	return nil
}

// quoted is names quoted and joined: "a", "b".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// swapped is the message for an oracle line that is a candidate record or a bare
// dump, "" otherwise: the oracle file is then the candidate's.
func (l *oracleLine) swapped(n int) string {
	switch l.swap {
	case "":
		return ""
	case "nodes":
		return fmt.Sprintf("oracle record %d is a bare dump (it has \"nodes\"), not an oracle response: %s", n, swapHint)
	}
	return fmt.Sprintf("oracle record %d is a candidate record (it has %q), not an oracle response: %s", n, l.swap, swapHint)
}

// swapHint says which flag names which file.
const swapHint = `--answers names the oracle's output (lines with "dumps", "states" or "traces"), --candidate the candidate's records ({"id", "dump"|"state"|"trace"|"error"}); were the two files given the wrong way round?`

// given says a raw field was present and not null.
func given(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// candidateLine is one candidate record: a dump, a reflection state, a trace (with
// its own "emulated"), or the candidate's own error when it produced none of them
// (scored as a failure). These are the contract's records (dump-format.md; load
// refuses any other with schema.Record): a kind the contract does not name yet has
// its engines voted, and a candidate record for it is refused.
type candidateLine struct {
	ID    json.RawMessage   `json:"id"`
	Dump  *dump.Dump        `json:"dump"`
	State *reflection.State `json:"state"`
	Trace *trace.Trace      `json:"trace"`
	Error *string           `json:"error"`
}

// answer is the record's answer under field (a kind's Record), nil when it has none.
func (c *candidateLine) answer(field string) any {
	byField := map[string]any{}
	if c.Dump != nil {
		byField["dump"] = c.Dump
	}
	if c.State != nil {
		byField["state"] = c.State
	}
	if c.Trace != nil {
		byField["trace"] = c.Trace
	}
	return byField[field]
}

// present records whether a field was there (and not null) without keeping it, so
// indexing the candidate file does not hold on to any dump.
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = string(b) != "null"
	return nil
}

// idKey is the matching key of a raw JSON id: ids match by their JSON value, not
// their text. A string matches the same string however it is escaped ("\u0061" is
// "a"); a number matches the same decimal value however it is written (1, 1.0,
// 1e0 and 10e-1 are one id; -0 is 0), compared exactly, with no float rounding
// (9007199254740993 is not 9007199254740992). The string "1" never matches the number
// 1. Empty for a missing or null id.
func idKey(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if len(raw) == 0 || dec.Decode(&v) != nil {
		return ""
	}
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return "s" + v
	case json.Number:
		return "n" + decimalKey(string(v))
	}
	var b bytes.Buffer // an object or array id: its compact text
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return "j" + b.String()
}

// decimalKey is the canonical form of a JSON number's decimal value: sign, the
// significant digits without leading or trailing zeros, and the exponent of the
// last digit ("-15e-1" for -1.50). The exponent is kept as a big integer, so a
// hostile 1e999999999999 is a key like any other and allocates nothing large.
func decimalKey(num string) string {
	neg := strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	mant, exp, _ := strings.Cut(strings.ToLower(num), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	e := new(big.Int)
	if exp != "" {
		e.SetString(strings.TrimPrefix(exp, "+"), 10)
	}
	e.Sub(e, big.NewInt(int64(len(frac))))
	trimmed := strings.TrimRight(digits, "0")
	e.Add(e, big.NewInt(int64(len(digits)-len(trimmed))))
	if trimmed == "" {
		return "0"
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + e.String()
}

// span is where one candidate record sits in the candidate file.
type span struct {
	id         string          // idKey
	raw        json.RawMessage // the id as written, for messages and output
	start, end int64
	line       int // the line start is on; firstLine gives the record's own
	used       bool
}

// candidates indexes the candidate file by id -> byte span in one streaming pass;
// each case then reads back only its own record. Memory is one span per case, not
// one dump per case, so the two files may be in any order.
type candidates struct {
	r     io.ReaderAt
	spans map[string]*span
	order []*span // file order, to report unmatched records deterministically
	bare  *span   // set when the file is one bare dump object
	buf   []byte
}

func indexCandidates(r io.ReaderAt, size int64) (*candidates, error) {
	c := &candidates{r: r, spans: map[string]*span{}}
	lr := &lineReader{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<16)}
	dec := json.NewDecoder(lr)
	for n := 1; ; n++ {
		start := dec.InputOffset()
		line := lr.lineAt(start)
		var h struct {
			ID    json.RawMessage `json:"id"`
			Dump  present         `json:"dump"`
			State present         `json:"state"`
			Trace present         `json:"trace"`
			Error present         `json:"error"`
			Nodes present         `json:"nodes"`
			// An oracle response's fields: the files were swapped.
			Dumps  present `json:"dumps"`
			States present `json:"states"`
			Traces present `json:"traces"`
			OK     present `json:"ok"`
		}
		err := dec.Decode(&h)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("candidate record %d: %v", n, err)
		}
		s := &span{start: start, end: dec.InputOffset(), line: line}
		if c.bare != nil {
			return nil, errors.New("candidate: a bare dump must be the only value in its file")
		}
		switch {
		case bool(h.Dump || h.State || h.Trace || h.Error):
			s.id, s.raw = idKey(h.ID), h.ID
			if s.id == "" {
				return nil, fmt.Errorf(`candidate record %d: no "id"`, n)
			}
			if c.spans[s.id] != nil {
				return nil, fmt.Errorf("candidate record %d: duplicate id %s", n, h.ID)
			}
			c.spans[s.id] = s
			c.order = append(c.order, s)
		case bool(h.Nodes) && n == 1:
			c.bare = s
		case bool(h.Nodes):
			return nil, errors.New("candidate: a bare dump must be the only value in its file")
		case bool(h.Dumps || h.States || h.Traces || h.OK):
			return nil, fmt.Errorf("candidate record %d is an oracle response (it has %q), not a candidate record: %s", n, oracleField(h.Dumps, h.States, h.Traces), swapHint)
		default:
			return nil, fmt.Errorf(`candidate record %d: neither {"id", "dump"}, {"id", "state"}, {"id", "trace"}, {"id", "error"} nor a bare dump`, n)
		}
	}
	return c, nil
}

// oracleField names the oracle response field a candidate record had.
func oracleField(dumps, states, traces present) string {
	switch {
	case bool(dumps):
		return "dumps"
	case bool(states):
		return "states"
	case bool(traces):
		return "traces"
	}
	return "ok"
}

// matched counts the records some oracle case asked for.
func (c *candidates) matched() int {
	if c.bare != nil {
		return b2i(c.bare.used)
	}
	n := 0
	for _, sp := range c.order {
		n += b2i(sp.used)
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// records counts the candidate records.
func (c *candidates) records() int {
	if c.bare != nil {
		return 1
	}
	return len(c.order)
}

// maxRecord bounds one candidate record, checked before it is read back: one
// engine's dump at the oracle's own bound (answerbound.MaxCandidateDump), with room
// for its id and the record's keys.
var maxRecord = int64(answerbound.MaxCandidateDump) + 64<<10

// load reads one record back and decodes it, checking it against the contract in
// the same pass (schema.RecordDump, schema.DecodeDump).
func (c *candidates) load(s *span) (*candidateLine, error) {
	if size := s.end - s.start; size > maxRecord {
		return nil, fmt.Errorf("candidate record %s (line %d) is %d bytes, over the %d one may have (a dump at the oracle's own bound, docs/untrusted.md)", s.raw, s.line, size, maxRecord)
	}
	n := int(s.end - s.start)
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	buf := c.buf[:n]
	if m, err := c.r.ReadAt(buf, s.start); m < n {
		return nil, fmt.Errorf("candidate: %v", err)
	}
	// The contract first: a record it refuses is named by line, pointer and keyword.
	at := firstLine(s.line, buf)
	if s == c.bare {
		d, es := schema.DecodeDump(buf)
		if len(es) > 0 {
			return nil, fmt.Errorf("candidate dump (line %d) breaks the contract: %v", at, es)
		}
		return &candidateLine{Dump: d}, nil
	}
	d, es := schema.RecordDump(buf)
	if len(es) > 0 {
		return nil, fmt.Errorf("candidate record %s (line %d) breaks the contract: %v", s.raw, at, es)
	}
	var rest struct {
		candidateLine
		Dump json.RawMessage `json:"dump"` // decoded already, as d
	}
	if err := json.Unmarshal(buf, &rest); err != nil {
		return nil, fmt.Errorf("candidate record %s: %v", s.raw, err)
	}
	line := rest.candidateLine
	line.Dump = d
	return &line, nil
}
