package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/layout-oracle/oracle/dump"
	"github.com/layout-oracle/oracle/kinds"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
)

// Operations (Request.Op). A request without one is a geometry request.
const (
	OpGeometry = ""
	OpPing     = "ping"
	OpShutdown = "shutdown"
	OpTrace    = "trace"
	OpReflect  = "reflect"
)

// MaxIDBytes is the longest id the oracle echoes, as JSON text (quotes included).
const MaxIDBytes = 1024

// DefaultMaxLine is the oracle's default --max-line: the longest request line, in
// bytes, it reads. A longer one is refused unread (docs/protocol.md).
const DefaultMaxLine = 64 << 20

// Request is one request line: the oracle's fields (docs/protocol.md,
// README "The protocol in brief"), each left out of the line when unset. The
// pointer fields tell "absent" from "empty": a trace with Script "" runs an empty
// script (a testharness test), and html "" is an empty document.
//
// The field order is the order on the wire: the document (url or html, its type),
// then what runs in it, then where.
type Request struct {
	// ID is echoed back in the answer. Empty: the client assigns one ("client:N").
	ID          string             `json:"id"`
	Op          string             `json:"op,omitempty"`
	URL         *string            `json:"url,omitempty"`
	HTML        *string            `json:"html,omitempty"`
	ContentType *string            `json:"content_type,omitempty"`
	Script      *string            `json:"script,omitempty"`
	Engines     []string           `json:"engines,omitempty"`
	Probes      []reflection.Probe `json:"probes,omitempty"`
	Screenshot  bool               `json:"screenshot,omitempty"`
	// Verify measures the case this many times per engine; the answer's Unstable
	// lists the items the runs differed on (docs/protocol.md, "Verification").
	Verify int `json:"verify,omitempty"`
}

// Str returns a pointer to s, for Request's optional text fields.
func Str(s string) *string { return &s }

// Response is one answer line, of any request kind: Kind names the kind (package
// kinds' registry) and Answers holds each engine's answer as JSON text, for every
// kind; geometry also fills Dumps, trace Traces, reflect States, decoded. Errors
// holds each engine that failed, with why. Error is set instead when the oracle
// refused the whole request (a bad field, an unknown engine); ping and shutdown set
// OK (Client.Ping decodes the rest of a ping answer). An answer under a field no
// registered kind has is the call's error, never an empty Response.
type Response struct {
	ID json.RawMessage `json:"id"` // as echoed, JSON text
	// Kind is the registered kind whose field the answer has ("geometry", "trace",
	// "reflect", ...); "" for ping, shutdown and a refused request.
	Kind string `json:"-"`
	// Answers is each engine's answer under the kind's field, as the oracle wrote it.
	Answers map[string]json.RawMessage   `json:"-"`
	Dumps   map[string]*dump.Dump        `json:"dumps,omitempty"`
	Traces  map[string]*trace.Trace      `json:"traces,omitempty"`
	States  map[string]*reflection.State `json:"states,omitempty"`
	Errors  map[string]string            `json:"errors,omitempty"`
	// Unstable lists, per engine, the items its runs of a verified case differed on
	// (compare's item names); compare never votes them.
	Unstable map[string][]string `json:"unstable,omitempty"`
	// Stored names the engines answered from the oracle's store, not live.
	Stored []string `json:"stored,omitempty"`
	Error  string   `json:"error,omitempty"`
	// Line is the number of the input line an Error answers, on a line the oracle
	// could not read as a request (docs/protocol.md); 0 otherwise.
	Line int  `json:"line,omitempty"`
	OK   bool `json:"ok,omitempty"`
	// Raw is the answer line as the oracle wrote it, without the newline: the
	// engines' answers byte for byte, and any field added after this package.
	Raw json.RawMessage `json:"-"`
}

// IDString is the answer's id as text: a string id without its JSON quotes, a
// numeric id as written ("1" for 1 and for "1", which IDs that must stay apart
// compare as ID), "" for a null or missing id.
func (r *Response) IDString() string {
	var s string
	if json.Unmarshal(r.ID, &s) == nil {
		return s
	}
	if string(r.ID) == "null" {
		return ""
	}
	return string(r.ID)
}

// Err is the whole-request error as an error, or nil.
func (r *Response) Err() error {
	if r.Error == "" {
		return nil
	}
	return &RequestError{Msg: r.Error}
}

// Engines lists, sorted, the engines that answered (a dump, trace, state or an
// answer of any kind).
func (r *Response) Engines() []string {
	var out []string
	for e := range r.Answers {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// readKind sets r.Kind and r.Answers from the line's fields: the registered kind
// whose field it has. An error when it has none (and is no refusal, ping or
// shutdown answer, ok) but has another field: the answer of a kind this package
// does not know, or fields of two kinds.
func (r *Response) readKind(fields map[string]json.RawMessage, ping bool) error {
	if r.Error != "" || r.OK || ping {
		return nil
	}
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		k := kinds.ByField(name)
		switch {
		case slices.Contains(kinds.ResponseFields, name):
		case k == nil:
			unknown = append(unknown, name)
		case r.Kind != "":
			return fmt.Errorf("client: the answer has the fields of two kinds, %q and %q", r.Kind, k.About().Name)
		default:
			r.Kind = k.About().Name
			if err := json.Unmarshal(fields[name], &r.Answers); err != nil {
				return fmt.Errorf("client: undecodable answer: %q: %v", name, err)
			}
		}
	}
	if r.Kind == "" && len(unknown) > 0 {
		return fmt.Errorf("client: the answer has %q, the field of no kind this client knows (known: %s): build the client from the oracle's tree", unknown, kinds.Fields())
	}
	return nil
}

// ProtocolVersion is the oracle protocol version this package speaks: ping's
// "protocol" (docs/protocol.md). An oracle speaking another is refused by Ping
// (and so WaitReady) with a *ProtocolError.
const ProtocolVersion = 1

// ProtocolError says the oracle speaks another protocol version than this package.
type ProtocolError struct{ Oracle int }

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("client: the oracle speaks protocol version %d, this client %d: build both from one tree", e.Oracle, ProtocolVersion)
}

// The engines' names, as requests ("engines") and answers (their maps' keys) spell
// them.
const (
	Chromium = "chromium"
	Firefox  = "firefox"
	WebKit   = "webkit"
)

// Engines are the three engines, in the oracle's order.
var Engines = []string{Chromium, Firefox, WebKit}

// RequestError is an answer's "error": the oracle refused the request.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return "oracle refused the request: " + e.Msg }

// Ping is the answer to ping (docs/protocol.md, "ping during startup"). The
// additive fields this package does not model are kept as JSON text.
type Ping struct {
	OK bool `json:"ok"`
	// Protocol is the oracle's protocol version; Client.Ping refuses one other than
	// ProtocolVersion. 0: an oracle from before the field.
	Protocol    int                    `json:"protocol"`
	Engines     []string               `json:"engines"`
	Versions    map[string]string      `json:"versions"`
	Profile     string                 `json:"profile"`
	Routes      map[string]string      `json:"routes"`
	States      map[string]EngineState `json:"states"`
	Failed      map[string]string      `json:"failed,omitempty"`
	Pages       map[string]int         `json:"pages,omitempty"`
	Environment string                 `json:"environment"`
	Sandbox     json.RawMessage        `json:"sandbox,omitempty"`
	Store       json.RawMessage        `json:"store,omitempty"`
	Endpoints   json.RawMessage        `json:"endpoints,omitempty"`
	Memory      json.RawMessage        `json:"memory,omitempty"`
}

// EngineState is one engine's entry in ping's states.
type EngineState struct {
	State    string `json:"state"` // starting, ready, restarting, failed
	Restarts int    `json:"restarts"`
	Pages    int    `json:"pages"`
	Reason   string `json:"reason,omitempty"`
}

// Starting lists, sorted, the engines still launching or self-checking.
func (p *Ping) Starting() []string {
	var out []string
	for e, s := range p.States {
		if s.State == "starting" {
			out = append(out, e)
		}
	}
	sort.Strings(out)
	return out
}

// encodeID is id as it goes on the wire and comes back.
func encodeID(id string) (string, error) {
	b, err := json.Marshal(id)
	if err != nil {
		return "", err
	}
	if len(b) > MaxIDBytes {
		return "", errors.New("client: request id is over MaxIDBytes as JSON text")
	}
	return string(b), nil
}
