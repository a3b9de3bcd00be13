// Package answerbound is how long one answer line of the oracle can be
// (docs/untrusted.md, "Bounded answer lines"). The in-page walks, the case program
// and the trace recorder count what they hand back as the line will carry it
// (JSON-escaped: each '<' is six bytes) and stop at their bound; the bounds here are
// the Go side's backstop, checked before a line is written: each kind's bound on one
// engine's answer (Geometry, Reflect, Trace), an error message cut to MaxErrorBytes
// (FitError), an answer over its bound turned into its engine's error (Answers), and
// the longest line of all (MaxLine).
package answerbound

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/layout-oracle/oracle/dump"
	reflection "github.com/layout-oracle/oracle/reflect"
)

// The bounds.
const (
	// MaxErrorBytes bounds one error message as the line carries it (its JSON
	// string, quotes included). A longer one is cut, and says so.
	MaxErrorBytes = 16 << 10
	// MaxIDBytes bounds a request's id as sent; the line echoes it, escaped.
	MaxIDBytes = 1024
	// answerEnvelope bounds what one engine's answer holds besides what the walk
	// counted: engine, build, profile, origin, viewport, a screenshot file's path.
	answerEnvelope = 8 << 10
	// MaxScreenshot bounds a screenshot's PNG (an 800x600 RGBA picture stored raw is
	// under 2 MB); its base64 is 4/3 of it.
	MaxScreenshot = 3 << 20
	// maxNumber is the longest float64 encoding/json writes: "-0.0000012345678901234567".
	maxNumber = 25
	// Per allowed element, the walk's budgets of style text and of tag names
	// (inpage/dump/walk.js), counted as JSON strings, quotes included.
	StyleBytesPerNode = 512
	TagBytesPerNode   = 64
)

// DefaultDumpMaxNodes is the oracle's --dump-max-nodes default: generous for any
// layout case (the WPT corpus's largest pages have a few thousand elements), small
// enough that a dump at the limit stays tens of MB in the oracle.
const DefaultDumpMaxNodes = 100000

// MaxCandidateDump bounds a candidate's dump, checked before it is decoded: the
// longest dump one engine's answer can hold with the default --dump-max-nodes
// (Geometry(DefaultDumpMaxNodes), 171,502,496 bytes). A candidate has no reason to
// write more than the oracle it is compared with.
var MaxCandidateDump = Geometry(DefaultDumpMaxNodes)

// Geometry bounds one engine's dump with --dump-max-nodes=maxNodes, a
// screenshot included: per allowed element its fixed fields and 4 boxes, plus the
// walk's budgets of style text and tag names.
func Geometry(maxNodes int) int {
	digits := len(strconv.Itoa(maxNodes))
	rect := len(`{"x":,"y":,"w":,"h":}`) + 4*maxNumber
	node := len(`{"index":,"parent":,"tag":,"depth":,"bounding":,"rects":[],"style":{}},`) + 3*digits + rect
	for _, k := range dump.StyleProperties {
		node += len(k) + len(`"":,`)
	}
	return answerEnvelope + 4*MaxScreenshot/3 + maxNodes*(node+4*(rect+1)+StyleBytesPerNode+TagBytesPerNode)
}

// Reflect bounds one engine's reflection state.
func Reflect() int { return answerEnvelope + reflection.MaxStateBytes }

// Trace bounds one engine's trace with --trace-max-bytes=maxBytes: the
// recorder counts its records as the line carries them.
func Trace(maxBytes int) int { return answerEnvelope + maxBytes }

// MaxLine is the longest line the oracle writes for any request, with
// --dump-max-nodes=maxNodes and --trace-max-bytes=traceMaxBytes: the id, and for each
// of the three engines its answer or its error, whichever kind of request.
func MaxLine(maxNodes, traceMaxBytes int) int {
	answer := max(Geometry(maxNodes), Reflect(), Trace(traceMaxBytes), MaxErrorBytes)
	perEngine := len(`"chromium":,`) + answer + len(`"chromium",`) // an answer, and its name in "stored"
	return len(`{"id":,"dumps":{},"errors":{},"stored":[]}`+"\n") + 6*MaxIDBytes + 3*perEngine
}

// escapedLen is how many bytes r takes in a JSON string as encoding/json writes it
// (HTML characters, U+2028, U+2029 and invalid bytes as \u escapes); size is r's
// size in the text.
func escapedLen(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	case r == utf8.RuneError && size == 1:
		return 6
	}
	return size
}

// FitError returns msg, or when its JSON string is over MaxErrorBytes, its longest
// prefix that fits with a marker saying how long the message was.
func FitError(msg string) string {
	if 6*len(msg)+2 <= MaxErrorBytes {
		return msg
	}
	marker := fmt.Sprintf(" ... [truncated: the message had %d bytes]", len(msg))
	n, cut := 2, 0
	for i := 0; i < len(msg); {
		r, size := utf8.DecodeRuneInString(msg[i:])
		n += escapedLen(r, size)
		i += size
		if n+len(marker) <= MaxErrorBytes {
			cut = i
		}
		if n > MaxErrorBytes {
			return msg[:cut] + marker
		}
	}
	return msg
}

// Answers moves every answer (live, or stored in raw) whose encoding is over
// max bytes to errs, as an error naming the bound, and returns errs.
func Answers[T any](answers map[string]T, raw map[string]json.RawMessage, errs map[string]string, max int, what string) map[string]string {
	over := func(name string, n int) {
		if errs == nil {
			errs = map[string]string{}
		}
		errs[name] = fmt.Sprintf("the %s is %d bytes, over the %d one engine's answer may have (docs/untrusted.md)", what, n, max)
	}
	for name, v := range answers {
		b, err := json.Marshal(v)
		if err == nil && len(b) > max {
			delete(answers, name)
			over(name, len(b))
		}
	}
	for name, b := range raw {
		if len(b) > max {
			delete(raw, name)
			over(name, len(b))
		}
	}
	return errs
}
