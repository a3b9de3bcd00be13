package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/layout-oracle/oracle/dump/schema"
)

// lineReader counts lines under a json.Decoder, so that a record can be named by
// its line: it keeps the offsets of the newlines read ahead of the decoder.
type lineReader struct {
	r    io.Reader
	off  int64   // bytes read so far
	nl   []int64 // offsets of newlines not yet passed by lineAt
	line int     // newlines already passed
}

func (l *lineReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			l.nl = append(l.nl, l.off+int64(i))
		}
	}
	l.off += int64(n)
	return n, err
}

// lineAt is the line (from 1) holding byte offset off; off must not decrease
// between calls.
func (l *lineReader) lineAt(off int64) int {
	k := 0
	for k < len(l.nl) && l.nl[k] < off {
		k++
	}
	l.line += k
	l.nl = l.nl[k:]
	return l.line + 1
}

// firstLine is the line of a record's first byte, given the line its span starts
// on: a span begins with the whitespace (the newline) before the record.
func firstLine(spanLine int, buf []byte) int {
	ws := len(buf) - len(bytes.TrimLeft(buf, " \t\r\n"))
	return spanLine + bytes.Count(buf[:ws], []byte("\n"))
}

// validateFile is compare --validate: every record of a candidate file against the
// contract (dump/schema), one line per error on out, "FILE:LINE: at POINTER: message
// [keyword]". It returns how many records were checked and how many errors found;
// err is for a file that cannot be read as JSON values at all.
func validateFile(name string, r io.Reader, out io.Writer) (records, bad int, err error) {
	lr := &lineReader{r: bufio.NewReaderSize(r, 1<<16)}
	dec := json.NewDecoder(lr)
	report := func(line int, es schema.Errors) {
		for _, e := range es {
			e.Line = 0
			fmt.Fprintf(out, "%s:%d: %s\n", name, line, e.Error())
			bad++
		}
	}
	bare := false
	seen := map[string]int{} // idKey -> line
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			at := dec.InputOffset()
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				at = syn.Offset - 1 // the offending byte
			}
			return records, bad, fmt.Errorf("%s:%d: %v", name, lr.lineAt(at), err)
		}
		line := lr.lineAt(dec.InputOffset() - int64(len(raw)))
		records++
		var h struct {
			ID     json.RawMessage `json:"id"`
			Nodes  present         `json:"nodes"`
			Dumps  present         `json:"dumps"`
			States present         `json:"states"`
			Traces present         `json:"traces"`
			OK     present         `json:"ok"`
		}
		_ = json.Unmarshal(raw, &h) // a value that is no object is the schema's to name
		switch {
		case int64(len(raw)) > maxRecord:
			report(line, schema.Errors{{Keyword: "file", Message: fmt.Sprintf(
				"the record is %d bytes, over the %d one may have (a dump at the oracle's own bound, docs/untrusted.md)", len(raw), maxRecord)}})
		case bool(h.Dumps || h.States || h.Traces || h.OK):
			report(line, schema.Errors{{Keyword: "file", Message: fmt.Sprintf(
				"an oracle answer (it has %q), not a candidate record: this is the oracle's output", oracleField(h.Dumps, h.States, h.Traces))}})
		case bare:
			report(line, schema.Errors{{Keyword: "file", Message: "a bare dump must be the only value in its file"}})
		case records == 1 && bool(h.Nodes) && h.ID == nil:
			bare = true
			report(line, schema.Dump(raw))
		default:
			report(line, schema.Record(raw))
			if k := idKey(h.ID); k != "" {
				if first, dup := seen[k]; dup {
					report(line, schema.Errors{{Instance: "/id", Keyword: "file", Message: fmt.Sprintf("duplicate id %s (first on line %d)", h.ID, first)}})
				} else {
					seen[k] = line
				}
			}
		}
	}
	return records, bad, nil
}
