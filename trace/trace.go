// Package trace is the oracle's trace protocol (dump-format.md, "Trace protocol"):
// the trace answer (Trace, Record), the in-page recorder that produces it, and how two
// traces compare (Compare, CompareRecords: record by record, buffers within a
// BufferTolerance). Voting on the engines' traces is package compare's (Traces).
//
// # The two JavaScript entry points
//
// RecorderJS is the recorder. It must run before any of the trace page's own script:
// on Playwright, pass it in playwright.Options.InitScripts (context.addInitScript); on
// WebDriver, which has no init-script hook, serve a copy (Recorder, with a fresh key)
// as the first <script> of the document. Both may happen; the second install is a
// no-op. The recorder defines nothing on a page whose location.pathname does not
// start with "/trace/", so the init script is harmless on the geometry page
// (about:blank). The page holds the case's html only.
//
// RunJS is the function expression the oracle evaluates after navigating to the trace
// page (Engine.Visit(ctx, url, RunJS, run.Args()...)). The recorder waits until the
// document has loaded (readyState "complete", the load event's handlers run, every
// <img> complete, at most 5 s), runs the case's script by indirect eval (a script that
// throws is reported as an uncaught error would be, and the trace goes on), and
// resolves once the script calls trace.done(), a bound is reached, or the fixed
// 5000 ms completion timeout, counted from the script's start, has passed; the
// oracle's deadline for the call must therefore leave more than 5 s (plus the image
// wait). Its result is sealed: Run.Decode checks the seal and decodes it.
//
// # Trust
//
// The recorder captures every built-in it uses when it installs, before any page
// script, serializes its records with the JSON.stringify it captured, on its own
// null-prototype values only (no page toJSON is consulted), and seals the result with HMAC-SHA-256 under its key, which no page script can read (an init
// script's source is not visible to the page; an inlined copy removes its element
// before the page's markup is parsed, and the oracle serves each page once). A page
// that replaces built-ins on the way out (JSON.stringify, Function.prototype.apply,
// Promise.prototype.then) therefore gets an error, never records it made up. A
// per-run nonce keeps a sealed result from one run from passing as another's.
//
// # Records
//
// Every record has seq (its position), kind and label. Per kind:
//
//	{"seq":0,"kind":"value","label":"x","value":<canonical value>}
//	{"seq":0,"kind":"value","label":"t","value":"FAIL","message":"assert_true: expected true got false"}
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
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/layout-oracle/oracle/inpage"
)

// Limits bound one trace: past either, the recorder stops recording and that engine's
// answer is an error naming the bound (the oracle's --trace-max-records and
// --trace-max-bytes). Bytes counts the JSON text of the records array as the
// oracle's answer line carries it (UTF-8, '<', '>', '&', U+2028 and U+2029 escaped).
type Limits struct {
	Records int
	Bytes   int
}

// DefaultLimits are the flags' defaults, and the recorder's own until a run sets others.
var DefaultLimits = Limits{Records: 100_000, Bytes: 64 << 20}

// orDefault fills a zero bound from DefaultLimits.
func (l Limits) orDefault() Limits {
	if l.Records <= 0 {
		l.Records = DefaultLimits.Records
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultLimits.Bytes
	}
	return l
}

// NewKey returns a fresh random key for a recorder copy: 64 hex characters, one
// HMAC-SHA-256 block.
func NewKey() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("trace: no randomness for a recorder key: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// Recorder returns the recorder keyed with key. inline, when not nil, fixes the bounds
// in the copy itself: an inlined copy is for an engine whose driver parses the run's
// arguments with the page's own JSON.parse (WebKitGTK's WebDriver), which inline
// markup could have replaced, so the bounds must not come from there.
func Recorder(key string, inline *Limits) string {
	if len(key) != 64 || strings.Trim(key, "0123456789abcdef") != "" {
		panic("trace: a recorder key is 64 lowercase hex characters")
	}
	limits := "null"
	if inline != nil {
		l := inline.orDefault()
		limits = fmt.Sprintf("{records: %d, bytes: %d}", l.Records, l.Bytes)
	}
	return inpage.Fill(inpage.TraceRecorder, "SECRET", key, "LIMITS", limits)
}

// InitKey is the key of RecorderJS, the copy for init scripts: one per process, never
// in any page's text.
var InitKey = NewKey()

// RecorderJS is the recorder for Playwright's init scripts (context.addInitScript),
// keyed with InitKey. It contains no "</script", no "<!--" and no "<script", so a
// copy (Recorder) can also be inlined into HTML verbatim.
var RecorderJS = Recorder(InitKey, nil)

// RunJS is the function expression the oracle evaluates, through Engine.Visit, once
// the trace page has loaded, with Run.Args as its arguments. It runs the case's
// script and resolves with the sealed trace ({"payload", "mac"}) when the trace ends;
// it rejects when the page has no recorder (not a /trace/ page, or neither route
// installed it). Run.Decode checks the seal and decodes the trace. Its text is
// inpage/trace/run.js.
var RunJS = inpage.TraceRun

// Run is one case's script run on a loaded trace page.
type Run struct {
	Script string
	Key    string // the key of the recorder copy that installed first in the page
	Limits Limits
	nonce  string
}

// NewRun prepares a run of script on a page whose recorder is keyed with key.
func NewRun(script, key string, limits Limits) *Run {
	return &Run{Script: script, Key: key, Limits: limits.orDefault(), nonce: NewKey()[:32]}
}

// Args are RunJS's arguments.
func (r *Run) Args() []any {
	return []any{r.Script, map[string]any{"nonce": r.nonce, "max_records": r.Limits.Records, "max_bytes": r.Limits.Bytes}}
}

// sealed is what RunJS resolves with.
type sealed struct {
	Payload *string `json:"payload"`
	MAC     *string `json:"mac"`
}

// payload is the sealed trace.
type payload struct {
	Nonce string `json:"nonce"`
	Error string `json:"error"`
	Trace
}

// Decode checks the seal of RunJS's result and turns it into a Trace, adding what only
// the oracle knows: the engine's name, its exact build and the launch profile. A result
// whose seal does not match (the page interfered with its way out) is an error, never
// a trace; so is a trace the recorder ended at a bound.
func (r *Run) Decode(raw json.RawMessage, engine, engineVersion, profile string) (*Trace, error) {
	if max := 2*r.Limits.Bytes + 1<<20; len(raw) > max { // JSON escaping at most doubles it, plus the envelope
		return nil, fmt.Errorf("trace: the collected result is %d bytes, over twice --trace-max-bytes=%d", len(raw), r.Limits.Bytes)
	}
	var s sealed
	if err := json.Unmarshal(raw, &s); err != nil || s.Payload == nil || s.MAC == nil {
		return nil, fmt.Errorf("trace: the collected result is not a sealed trace (the page interfered with the collection): %.200s", raw)
	}
	m := hmac.New(sha256.New, []byte(r.Key))
	m.Write([]byte(*s.Payload))
	want := hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(*s.MAC)) {
		return nil, errors.New("trace: the collected result's seal does not match: the page interfered with the collection, its records are not the recorder's")
	}
	var p payload
	if err := json.Unmarshal([]byte(*s.Payload), &p); err != nil {
		return nil, fmt.Errorf("trace: decode collected result: %w", err)
	}
	if p.Nonce != r.nonce {
		return nil, errors.New("trace: the collected result was sealed for another run")
	}
	if p.Error != "" {
		return nil, errors.New("trace: " + p.Error)
	}
	return p.Trace.with(engine, engineVersion, profile)
}

func (t Trace) with(engine, engineVersion, profile string) (*Trace, error) {
	if t.Records == nil {
		t.Records = []Record{}
	}
	t.Engine, t.EngineVersion, t.Profile = engine, engineVersion, profile
	return &t, t.Validate()
}

// Kinds of record.
const (
	kindValue  = "value"
	KindEvent  = "event"
	KindSettle = "settle"
	kindError  = "error"
)

// Settle states.
const (
	fulfilled = "fulfilled"
	rejected  = "rejected"
)

// Trace is one engine's trace, as the trace response carries it.
type Trace struct {
	Engine        string `json:"engine"`
	EngineVersion string `json:"engine_version"`
	Profile       string `json:"profile"`
	// Emulated names what the launch profile's emulation applied in this engine
	// for this case (profiles.Emulate*, sorted); absent when nothing was.
	Emulated        []string `json:"emulated,omitempty"`
	Origin          string   `json:"origin"`
	IsSecureContext bool     `json:"is_secure_context"`
	TimedOut        bool     `json:"timed_out"`
	Records         []Record `json:"records"`
}

// Record is one observation. Type is set on events only, State on settles only;
// Value on values, settles and errors (never on events). Message, on values only, is
// text for a person (trace.value's third argument; testharnessreport.js puts a
// subtest's assertion message there): Compare and CompareRecords skip it, so it is
// never voted on (docs/traces.md).
//
// Value is kept as JSON text, normalized on decode to what encoding/json emits (compact,
// HTML characters escaped), so a Record survives Unmarshal -> Marshal -> Unmarshal
// unchanged byte for byte, and object key order, which the walk's "props" carries, is
// never lost to a map.
type Record struct {
	Seq     int             `json:"seq"`
	Kind    string          `json:"kind"`
	Label   string          `json:"label"`
	Type    string          `json:"type,omitempty"`
	State   string          `json:"state,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
	Message string          `json:"message,omitempty"`
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

// Validate checks the invariants the recorder guarantees: seq equals position, every
// kind is known, an event has a type and no value, a settle has a known state.
func (t *Trace) Validate() error {
	for i, r := range t.Records {
		if r.Seq != i {
			return fmt.Errorf("trace: record %d has seq %d", i, r.Seq)
		}
		if r.Message != "" && r.Kind != kindValue {
			return fmt.Errorf("trace: record %d (%s) has a message: only a value record carries one", i, r.Kind)
		}
		switch r.Kind {
		case kindValue, kindError:
			if len(r.Value) == 0 {
				return fmt.Errorf("trace: record %d (%s) has no value", i, r.Kind)
			}
		case KindEvent:
			if len(r.Value) != 0 {
				return fmt.Errorf("trace: record %d (event) has a value", i)
			}
		case KindSettle:
			if r.State != fulfilled && r.State != rejected {
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
