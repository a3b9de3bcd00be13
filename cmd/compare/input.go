package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/reflect"
)

// oracleLine is one line of the oracle's stdout. Geometry responses ("dumps"),
// reflection responses ("states") and error responses ("error") are cases; ping,
// shutdown and trace replies carry none of them and are skipped.
type oracleLine struct {
	ID     json.RawMessage           `json:"id"`
	Dumps  map[string]*dump.Dump     `json:"dumps"`
	States map[string]*reflect.State `json:"states"`
	Errors map[string]string         `json:"errors"`
	Error  *string                   `json:"error"`
}

func (l *oracleLine) isCase() bool { return l.Dumps != nil || l.States != nil || l.Error != nil }

// candidateLine is one candidate record: a dump, a reflection state, or the
// candidate's own error when it produced neither (scored as a failure).
type candidateLine struct {
	ID    json.RawMessage `json:"id"`
	Dump  *dump.Dump      `json:"dump"`
	State *reflect.State  `json:"state"`
	Error *string         `json:"error"`
}

// present records whether a field was there (and not null) without keeping it, so
// indexing the candidate file does not hold on to any dump.
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = string(b) != "null"
	return nil
}

// idKey is the matching key of a raw JSON id: its compact form, so "a" matches "a"
// whatever the spacing, but the string "1" never matches the number 1. Empty for a
// missing or null id.
func idKey(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil || b.String() == "null" {
		return ""
	}
	return b.String()
}

// span is where one candidate record sits in the candidate file.
type span struct {
	id         string // idKey
	start, end int64
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
	dec := json.NewDecoder(bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<16))
	for n := 1; ; n++ {
		start := dec.InputOffset()
		var h struct {
			ID    json.RawMessage `json:"id"`
			Dump  present         `json:"dump"`
			State present         `json:"state"`
			Error present         `json:"error"`
			Nodes present         `json:"nodes"`
		}
		err := dec.Decode(&h)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("candidate record %d: %v", n, err)
		}
		s := &span{start: start, end: dec.InputOffset()}
		if c.bare != nil {
			return nil, errors.New("candidate: a bare dump must be the only value in its file")
		}
		switch {
		case bool(h.Dump || h.State || h.Error):
			s.id = idKey(h.ID)
			if s.id == "" {
				return nil, fmt.Errorf(`candidate record %d: no "id"`, n)
			}
			if c.spans[s.id] != nil {
				return nil, fmt.Errorf("candidate record %d: duplicate id %s", n, s.id)
			}
			c.spans[s.id] = s
			c.order = append(c.order, s)
		case bool(h.Nodes) && n == 1:
			c.bare = s
		case bool(h.Nodes):
			return nil, errors.New("candidate: a bare dump must be the only value in its file")
		default:
			return nil, fmt.Errorf(`candidate record %d: neither {"id", "dump"}, {"id", "state"}, {"id", "error"} nor a bare dump`, n)
		}
	}
	return c, nil
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
	var line candidateLine
	if s == c.bare {
		line.Dump = new(dump.Dump)
		if err := json.Unmarshal(buf, line.Dump); err != nil {
			return nil, fmt.Errorf("candidate dump: %v", err)
		}
		return &line, nil
	}
	if err := json.Unmarshal(buf, &line); err != nil {
		return nil, fmt.Errorf("candidate record %s: %v", s.id, err)
	}
	return &line, nil
}
