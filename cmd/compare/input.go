package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/layout-oracle/oracle/compare"
	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/dump/schema"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
)

// oracleLine is one line of the oracle's stdout. Geometry responses ("dumps"),
// reflection responses ("states"), trace responses ("traces") and error responses
// ("error") are cases. Ping and shutdown replies (they carry "ok") are not, and are
// skipped: ping's additive "states" is engine health, not a reflection case.
type oracleLine struct {
	ID        json.RawMessage       `json:"id"`
	Dumps     map[string]*dump.Dump `json:"dumps"`
	RawStates json.RawMessage       `json:"states"`
	Errors    map[string]string     `json:"errors"`
	Error     *string               `json:"error"`
	OK        json.RawMessage       `json:"ok"`
	RawTraces json.RawMessage       `json:"traces"`
	// Unstable is the additive "unstable": per engine, the items its runs of the
	// case answered differently (oracle --verify); they are never made a verdict.
	Unstable compare.Unstable `json:"unstable"`

	// A candidate record's fields (or a bare dump's "nodes"): present only when the
	// files were given the wrong way round (swappedOracle).
	CandDump  present `json:"dump"`
	CandState present `json:"state"`
	CandTrace present `json:"trace"`
	Nodes     present `json:"nodes"`

	// States is RawStates decoded, once the line is known to be a reflection case.
	States map[string]*reflection.State `json:"-"`
	// Traces is RawTraces decoded, once the line is known to be a trace case.
	Traces map[string]*trace.Trace `json:"-"`
}

func (l *oracleLine) isCase() bool {
	if given(l.OK) {
		return false
	}
	return l.Dumps != nil || given(l.RawStates) || given(l.RawTraces) || l.Error != nil
}

// swapped is the message for an oracle line that is a candidate record or a bare
// dump, "" otherwise: the oracle file is then the candidate's.
func (l *oracleLine) swapped(n int) string {
	field := ""
	switch {
	case bool(l.CandDump):
		field = "dump"
	case bool(l.CandState):
		field = "state"
	case bool(l.CandTrace):
		field = "trace"
	case bool(l.Nodes):
		return fmt.Sprintf("oracle record %d is a bare dump (it has \"nodes\"), not an oracle response: %s", n, swapHint)
	default:
		return ""
	}
	return fmt.Sprintf("oracle record %d is a candidate record (it has %q), not an oracle response: %s", n, field, swapHint)
}

// swapHint says which flag names which file.
const swapHint = `--oracle names the oracle's output (lines with "dumps", "states" or "traces"), --candidate the candidate's records ({"id", "dump"|"state"|"trace"|"error"}); were the two files given the wrong way round?`

// given says a raw field was present and not null.
func given(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// candidateLine is one candidate record: a dump, a reflection state, a trace (with
// its own "emulated"), or the candidate's own error when it produced none of them
// (scored as a failure).
type candidateLine struct {
	ID    json.RawMessage   `json:"id"`
	Dump  *dump.Dump        `json:"dump"`
	State *reflection.State `json:"state"`
	Trace *trace.Trace      `json:"trace"`
	Error *string           `json:"error"`
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

// load reads one record back and decodes it.
func (c *candidates) load(s *span) (*candidateLine, error) {
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
		if es := schema.Dump(buf); len(es) > 0 {
			return nil, fmt.Errorf("candidate dump (line %d) breaks the contract: %v", at, es)
		}
	} else if es := schema.Record(buf); len(es) > 0 {
		return nil, fmt.Errorf("candidate record %s (line %d) breaks the contract: %v", s.raw, at, es)
	}
	var line candidateLine
	if s == c.bare {
		line.Dump = new(dump.Dump)
		if err := json.Unmarshal(buf, line.Dump); err != nil {
			return nil, fmt.Errorf("candidate dump: %v", err)
		}
		return &line, nil
	}
	if err := json.Unmarshal(buf, &line); err != nil {
		return nil, fmt.Errorf("candidate record %s: %v", s.raw, err)
	}
	return &line, nil
}
