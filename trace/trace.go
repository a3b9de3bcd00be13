// Package trace is the oracle's trace protocol (dump-format.md, "Trace protocol"):
// the in-page recorder, the trace and record types, record-by-record comparison of two
// traces within a buffer tolerance, and the engines' vote on a set of traces.
//
// # The two JavaScript entry points
//
// RecorderJS is the recorder. It must run before any of the trace page's own script:
// on Playwright, pass it in PlaywrightOptions.InitScripts (context.addInitScript); on
// WebDriver, which has no init-script hook, serve it as the first <script> of the
// document. Both may happen; the second install is a no-op. The recorder defines
// nothing on a page whose location.pathname does not start with "/trace/", so the
// init script is harmless on the geometry page (about:blank).
//
// CollectJS is the function expression the oracle evaluates after navigating to the
// trace page (Engine.Visit(ctx, url, CollectJS)). It resolves once the script calls
// trace.done() or the recorder's fixed 5000 ms completion timeout, counted from the
// recorder's install at document start, has passed; the oracle's deadline for the
// call must therefore leave more than 5 s. Its JSON result decodes with Decode.
//
// # Records
//
// Every record has seq (its position), kind and label. Per kind:
//
//	{"seq":0,"kind":"value","label":"x","value":<canonical value>}
//	{"seq":1,"kind":"event","label":"BUTTON#b","type":"click"}
//	{"seq":2,"kind":"settle","label":"p","state":"fulfilled","value":<canonical value>}
//	{"seq":3,"kind":"settle","label":"q","state":"rejected","value":{"$error":true,"name":"TypeError"}}
//	{"seq":4,"kind":"error","label":"e","value":{"$error":true,"name":"TypeError"}}
//
// An event's label is its target's identity at trace.event time: "window", "document",
// TAGNAME or TAGNAME#id for an element (tagName as the DOM reports it), nodeName for
// any other node, and the Object.prototype.toString tag ("AbortSignal") for any other
// EventTarget. A trace.event call on a non-EventTarget records
// {"kind":"error","label":"trace.event","value":{"$error":true,"name":"TypeError"}}
// instead of throwing. Records pushed after the trace ended (done or timeout) are
// dropped. Listeners are bubble-phase (addEventListener's default).
//
// # Canonical values
//
// Beyond the spec's list ($num, $undefined, $bigint, $error, $buffer, $audioBuffer,
// $shape), these are this package's choices:
//
//   - ImageData: {"$buffer":true,"$imageData":true,"elementType":"Uint8ClampedArray",
//     "length":N,"base64":"...","width":W,"height":H}, i.e. a $buffer of its data plus
//     the marker and the dimensions.
//   - $buffer's elementType is the typed array's name ("Float32Array",
//     "Uint8ClampedArray", "BigInt64Array", ...), or "DataView", "ArrayBuffer",
//     "SharedArrayBuffer"; length is the element count for a typed array and the byte
//     length for the other three. base64 is the viewed bytes only (byteOffset to
//     byteOffset+byteLength), in the platform's byte order (little-endian everywhere
//     this runs).
//   - Any Error, wherever it appears (not only in trace.error and rejections), is
//     {"$error":true,"name":...}; a DOMException is an Error, its name the DOMException
//     name ("NotAllowedError"). A thrown or rejected non-Error is canonicalized as any
//     value would be.
//   - A function is {"$function":true,"name":"<own name property, or empty>"}; a symbol
//     is {"$symbol":"<description>"}.
//   - The shape walk: {"$shape":"object","keys":[...],"props":{"k":{"type":T,"value":V}}}
//     where T is typeof the property's value ("null" for null) and V its canonical
//     value, or T is "throws" and V the canonical thrown value when reading the
//     property threw (a getter that throws). Arrays are
//     {"$shape":"array","length":N,"elements":[V...]} (elements canonical values, no
//     type wrapper), at most 64 of them.
//   - Which keys: own enumerable string keys (Object.keys order, i.e. insertion
//     order, which script can observe); then, when the object's prototype is neither
//     Object.prototype nor null, the enumerable accessor properties with a getter on
//     the prototypes up the chain (stopping before Object.prototype), read on the
//     object itself, sorted by code unit: IDL attributes are exactly those, and the
//     order an engine defines them in is its own (URL's href comes first in Gecko and
//     WebKit, last in Blink), not something to vote on. So a URL walks hash, host,
//     hostname, href, origin, ... as keys. IDL operations and
//     class methods (data properties) and class-syntax getters (not enumerable) are
//     not walked; symbols never are. Such an object also carries "class": its
//     Object.prototype.toString tag ("URL", "DOMRect"); a plain or null-prototype
//     object and an array carry none.
//   - ECMAScript built-in objects (Map, Set, Date, RegExp, Promise, WeakMap) keep
//     their state in internal slots and their accessors (Map's size) non-enumerable,
//     so they walk as {"$shape":"object","class":"Map","keys":[],"props":{}}: a case
//     records m.size, [...m] or d.getTime() explicitly.
//   - Bounds: at most 64 keys per object (then "key_count" holds how many there were);
//     4 levels of containers, a deeper one reduced to its "$shape" (and "length", and
//     "class") with "truncated":"depth"; at most 4096 walked nodes per recorded value,
//     after which containers are reduced the same way with "truncated":"size". A
//     reference back to an object on the current path is {"$circular":true}.
//   - A value whose canonicalization itself throws (a hostile Proxy) is
//     {"$throws": <{"$error":...} or the thrown value's typeof>}.
package trace

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
)

// RecorderJS is the recorder script (recorder.js): an init script, or the first
// <script> of a served trace page. It contains no "</script" and no "<!--".
//
//go:embed recorder.js
var RecorderJS string

// CollectJS is the function expression the oracle evaluates, through Engine.Visit,
// once the trace page has loaded. It resolves with
// {"timed_out", "records", "origin", "is_secure_context"} when the trace ends, and
// rejects when the page has no recorder (not a /trace/ page, or neither route
// installed it). Before resolving it puts back JSON.stringify and the like if the
// case script replaced them, so the oracle's own serialization of the result works.
const CollectJS = `function () {
  if (typeof window.__traceResult !== 'function') {
    throw new Error('trace: no recorder in this page (' + location.href + ')');
  }
  return window.__traceResult();
}`

// Kinds of record.
const (
	KindValue  = "value"
	KindEvent  = "event"
	KindSettle = "settle"
	KindError  = "error"
)

// Settle states.
const (
	Fulfilled = "fulfilled"
	Rejected  = "rejected"
)

// Trace is one engine's trace, as the trace response carries it.
type Trace struct {
	Engine          string   `json:"engine"`
	EngineVersion   string   `json:"engine_version"`
	Profile         string   `json:"profile"`
	Origin          string   `json:"origin"`
	IsSecureContext bool     `json:"is_secure_context"`
	TimedOut        bool     `json:"timed_out"`
	Records         []Record `json:"records"`
}

// Record is one observation. Type is set on events only, State on settles only;
// Value on values, settles and errors (never on events).
//
// Value is kept as JSON text, normalized on decode to what encoding/json emits (compact,
// HTML characters escaped), so a Record survives Unmarshal -> Marshal -> Unmarshal
// unchanged byte for byte, and object key order, which the walk's "props" carries, is
// never lost to a map.
type Record struct {
	Seq   int             `json:"seq"`
	Kind  string          `json:"kind"`
	Label string          `json:"label"`
	Type  string          `json:"type,omitempty"`
	State string          `json:"state,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// UnmarshalJSON decodes a record and normalizes Value (see Record).
func (r *Record) UnmarshalJSON(b []byte) error {
	type plain Record
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if len(p.Value) > 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, p.Value); err != nil {
			return err
		}
		var h bytes.Buffer
		json.HTMLEscape(&h, c.Bytes())
		p.Value = h.Bytes()
	}
	*r = Record(p)
	return nil
}

// Decode turns the result of CollectJS into a Trace, adding what only the oracle
// knows: the engine's name, its exact build and the launch profile. It checks that
// records are in seq order and of a known kind.
func Decode(raw json.RawMessage, engine, engineVersion, profile string) (*Trace, error) {
	var t Trace
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("trace: decode collected result: %w", err)
	}
	if t.Records == nil {
		t.Records = []Record{}
	}
	t.Engine, t.EngineVersion, t.Profile = engine, engineVersion, profile
	return &t, t.Validate()
}

// Validate checks the invariants the recorder guarantees: seq equals position, every
// kind is known, an event has a type and no value, a settle has a known state.
func (t *Trace) Validate() error {
	for i, r := range t.Records {
		if r.Seq != i {
			return fmt.Errorf("trace: record %d has seq %d", i, r.Seq)
		}
		switch r.Kind {
		case KindValue, KindError:
			if len(r.Value) == 0 {
				return fmt.Errorf("trace: record %d (%s) has no value", i, r.Kind)
			}
		case KindEvent:
			if len(r.Value) != 0 {
				return fmt.Errorf("trace: record %d (event) has a value", i)
			}
		case KindSettle:
			if r.State != Fulfilled && r.State != Rejected {
				return fmt.Errorf("trace: record %d (settle) has state %q", i, r.State)
			}
			if len(r.Value) == 0 {
				return fmt.Errorf("trace: record %d (settle) has no value", i)
			}
		default:
			return fmt.Errorf("trace: record %d has unknown kind %q", i, r.Kind)
		}
	}
	return nil
}
