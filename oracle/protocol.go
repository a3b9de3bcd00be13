package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/layout-oracle/oracle/oracle/answerbound"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/layout-oracle/oracle/oracle/pool"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/store"
)

// Operations. A request without "op" is a geometry request.
const (
	OpGeometry = ""
	OpPing     = "ping"
	opShutdown = "shutdown"
	OpTrace    = "trace"
	OpReflect  = "reflect"
)

// Request is one protocol line. ID is kept as raw JSON and echoed back verbatim, so
// a client's string or number id round-trips exactly.
type Request struct {
	ID      json.RawMessage    `json:"id"`
	Op      string             `json:"op"`
	HTML    *string            `json:"html"`
	Script  *string            `json:"script"`
	Engines []string           `json:"engines"`
	Probes  []reflection.Probe `json:"probes"`
	// Screenshot (geometry only, additive to the spec) adds a PNG of the viewport,
	// taken right after the walk, to every dump.
	Screenshot bool `json:"screenshot"`
	// URL is a path under --docroot ("/css/CSS2/a.xht", optionally with ?query and
	// #fragment) that the case navigates to instead of writing html.
	URL *string `json:"url"`
	// ContentType is the type an html case's document is served as: text/html
	// (default, written like any html case), application/xhtml+xml or image/svg+xml
	// (served from the case's origin and parsed as XML).
	ContentType *string `json:"content_type"`
	// Verify (additive) measures the case this many times per engine and lists the
	// items the runs differ on (docs/protocol.md, "Verification"); it overrides
	// --verify. 1 to MaxVerify.
	Verify *int `json:"verify"`
}

// ProtocolVersion is ping's "protocol": the version of the request and answer
// lines this oracle speaks. Additive fields leave it; a change a client built for
// the previous version would misread (a field removed, renamed, or meaning
// something else) raises it. Package client checks it (client.ProtocolVersion).
const ProtocolVersion = 1

// MaxVerify bounds "verify" and --verify: a case costs that many cases.
const MaxVerify = 10

// nullID is the id of an error response to a line whose id could not be read.
var nullID = json.RawMessage("null")

// ErrorResponse answers a line that could not be served at all. Line (additive) is
// the input line's number, from 1, blank lines counted, on the answer to a line that
// could not be read as a request (malformed, too long): answers come out of order,
// and such an answer's id is often null, so the number is how a sender finds its
// line. 0 (left out) on every other error.
type ErrorResponse struct {
	ID    json.RawMessage `json:"id"`
	Error string          `json:"error"`
	Line  int             `json:"line,omitempty"`
}

// PingResponse answers ping. Engines are the engines that answer a case sent now:
// those serving and those still starting (a case waits for them). Versions holds an
// engine's build once its pages report it, a starting engine's too. Routes, States,
// Failed and Environment are additive to the spec: how each engine is reached,
// whether its pages are serving (ready, restarting, failed; starting while it
// launches or self-checks) with their relaunch count, why an engine is missing, and
// the version of the pinned environment every engine was launched with.
type PingResponse struct {
	ID json.RawMessage `json:"id"`
	OK bool            `json:"ok"`
	// Protocol (additive) is ProtocolVersion.
	Protocol int                    `json:"protocol"`
	Engines  []string               `json:"engines"`
	Versions map[string]string      `json:"versions"`
	Profile  string                 `json:"profile"`
	Routes   map[string]string      `json:"routes"`
	States   map[string]pool.Health `json:"states"`
	Failed   map[string]string      `json:"failed,omitempty"` // engines that did not launch, with why
	// Pages is each configured engine's page count (--pages), additive; states[e].pages
	// is how many of them are up.
	Pages map[string]int `json:"pages,omitempty"`
	// Environment is "pinned-" + environment.Version (package oracle/browser/environment).
	Environment string `json:"environment"`
	// Sandbox is each engine's sandbox as /proc shows it at the ping: the user its
	// processes run as, whether its sandbox is on and which, or why not
	// (docs/sandbox.md).
	Sandbox map[string]browser.SandboxState `json:"sandbox,omitempty"`
	// Store (additive) is the ground-truth store's path and counters; absent when
	// the store is off.
	Store *store.Stats `json:"store,omitempty"`
	// Endpoints (additive) lists, for every engine with remote endpoints, its local
	// pages and each endpoint: route, version and state, out-of-service ones with
	// why (docs/remote.md); absent when there are none.
	Endpoints []endpointHealth `json:"endpoints,omitempty"`
	// Memory (additive) is each engine's memory bound (--engine-memory,
	// docs/untrusted.md): its cgroup's limit, usage and OOM kills, or why there is none.
	Memory *memoryReport `json:"memory,omitempty"`
}

// memoryReport is ping's memory: the bound per engine, or Problem.
type memoryReport struct {
	Limit   int64                       `json:"limit"`
	Kind    string                      `json:"kind,omitempty"`
	Problem string                      `json:"problem,omitempty"`
	Engines map[string]host.MemoryState `json:"engines,omitempty"`
}

// shutdownResponse acknowledges shutdown before the process exits.
type shutdownResponse struct {
	ID json.RawMessage `json:"id"`
	OK bool            `json:"ok"`
}

// ParseRequest decodes one line. On error it still returns whatever id it could read
// (nullID otherwise), so the error response can carry it.
func ParseRequest(line []byte) (*Request, json.RawMessage, error) {
	line = bytes.TrimSpace(line)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		if len(line) > 0 && line[0] != '{' || errors.As(err, new(*json.UnmarshalTypeError)) {
			return nil, nullID, errors.New("request must be a JSON object")
		}
		return nil, nullID, fmt.Errorf("invalid JSON: %v", err)
	}
	if err := checkKeys(line); err != nil {
		id := fields["id"]
		if err.key == "id" || !validID(id) || !utf8.Valid(id) || loneSurrogate(id) {
			id = nullID // which of two ids, or an id spelled "ID": none is this request's
		}
		return nil, id, err
	}
	id, ok := fields["id"]
	if !ok || string(id) == "null" {
		return nil, nullID, errors.New(`request has no "id"`)
	}
	if !validID(id) {
		return nil, nullID, errors.New(`"id" must be a string or a number`)
	}
	if len(id) > answerbound.MaxIDBytes {
		// The line echoes it (escaped, up to 6 bytes a byte): docs/untrusted.md.
		return nil, nullID, fmt.Errorf(`"id" is %d bytes long, over the %d an id may have`, len(id), answerbound.MaxIDBytes)
	}
	if !utf8.Valid(id) {
		// Echoed byte for byte it would make the response invalid JSON for strict
		// parsers; decoded and re-encoded it would not be the client's id.
		return nil, nullID, errors.New(`"id" is not valid UTF-8, so it cannot be echoed exactly`)
	}
	if loneSurrogate(id) {
		return nil, nullID, errors.New(`"id" escapes half a UTF-16 surrogate pair, which strict JSON parsers refuse: it cannot be echoed`)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields() // a typo ("scirpt") must not silently drop the mutation
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, id, fieldError(err)
	}
	req.ID = id
	if err := req.validate(); err != nil {
		return nil, id, err
	}
	return &req, id, nil
}

// keyError is a key encoding/json would have let through.
type keyError struct {
	key string // the key as spelled in the request
	msg string
}

func (e *keyError) Error() string { return e.msg }

// Field names are matched exactly: encoding/json matches them case-insensitively.
var (
	requestFields = []string{"id", "op", "html", "script", "engines", "probes", "url", "content_type", "screenshot", "verify"}
	probeFields   = []string{"selector", "attr", "idl"}
)

// checkKeys refuses what encoding/json would silently accept: a key given twice in
// one object (the last would win, dropping the first "script") and a request or
// probe field spelled in another case ("Script"). line is known to be valid JSON.
func checkKeys(line []byte) *keyError {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber() // a number's value is not checked here: 1e400 is valid JSON, too large for a float64
	return walkKeys(dec, "", requestFields)
}

// walkKeys reads one value; known are the field names of the objects at this level
// (for an array, of the objects it holds), nil when any key goes.
func walkKeys(dec *json.Decoder, where string, known []string) *keyError {
	tok, err := dec.Token()
	if err != nil {
		return &keyError{msg: fmt.Sprintf("invalid JSON: %v", err)}
	}
	switch tok {
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, fmt.Sprintf("%s[%d]", where, i), known); err != nil {
				return err
			}
		}
	case json.Delim('{'):
		in := ""
		if where != "" {
			in = " in " + where
		}
		seen := map[string]bool{}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return &keyError{msg: fmt.Sprintf("invalid JSON: %v", err)}
			}
			key := t.(string)
			if seen[key] {
				return &keyError{key: key, msg: fmt.Sprintf("duplicate key %q%s", key, in)}
			}
			seen[key] = true
			for _, f := range known {
				if key != f && strings.EqualFold(key, f) {
					return &keyError{key: key, msg: fmt.Sprintf("key %q%s must be spelled %q (keys are case-sensitive)", key, in, f)}
				}
			}
			var sub []string
			if where == "" && key == "probes" {
				sub = probeFields
			}
			if err := walkKeys(dec, strings.TrimPrefix(where+"."+key, "."), sub); err != nil {
				return err
			}
		}
	default:
		return nil // a scalar
	}
	dec.Token() // the closing delimiter
	return nil
}

// validID says whether id is a JSON string or number; any number, 1e400 too, which
// is echoed as it was sent and never read as a float64.
func validID(id json.RawMessage) bool {
	if !json.Valid(id) {
		return false
	}
	id = bytes.TrimSpace(id)
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9')
}

// loneSurrogate says whether the JSON string s escapes half a UTF-16 surrogate pair
// (\ud800 with no \udc00-\udfff after it, or the second half alone): valid JSON
// text that strict parsers (Rust's serde_json, for one) refuse, so a response line
// echoing it would be one they cannot read.
func loneSurrogate(s []byte) bool {
	high := false // the escape before this one was a first half
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			if high {
				return true
			}
			continue
		}
		i++ // the escaped character
		if i >= len(s) || s[i] != 'u' || i+4 >= len(s) {
			if high {
				return true
			}
			continue
		}
		u, err := strconv.ParseUint(string(s[i+1:i+5]), 16, 16)
		i += 4
		switch {
		case err != nil:
			return false // not JSON: json.Valid has refused it already
		case 0xd800 <= u && u <= 0xdbff:
			if high {
				return true
			}
			high = true
		case 0xdc00 <= u && u <= 0xdfff:
			if !high {
				return true
			}
			high = false
		default:
			if high {
				return true
			}
		}
	}
	return high
}

func fieldError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %q must be %s, not %s", te.Field, fieldKinds[te.Field], te.Value)
	}
	if s := err.Error(); strings.HasPrefix(s, "json: unknown field ") {
		return fmt.Errorf("unknown field %s", strings.TrimPrefix(s, "json: unknown field "))
	}
	return fmt.Errorf("invalid request: %v", err)
}

// fieldKinds describes each request field's JSON type for error messages; the
// decoder's own wording names Go types, and for an array names its element's.
var fieldKinds = map[string]string{
	"op": "a string", "html": "a string", "script": "a string", "url": "a string", "content_type": "a string", "screenshot": "a boolean", "verify": "an integer",
	"engines":         "an array of strings",
	"probes":          `an array of {"selector","attr","idl"} objects`,
	"probes.selector": "a string", "probes.attr": "a string", "probes.idl": "a string",
}

func (r *Request) validate() error {
	if err := r.validateDocument(); err != nil {
		return err
	}
	k := kindFor(r.Op)
	switch {
	case k != nil:
		if err := k.info().validate(r); err != nil {
			return err
		}
	case r.Op == OpPing || r.Op == opShutdown:
	default:
		return fmt.Errorf("unknown op %q (known: %s)", r.Op, knownOps())
	}
	if r.Screenshot && (k == nil || !k.info().screenshot) {
		return fmt.Errorf(`"screenshot" is for geometry requests only, not op %q`, r.Op)
	}
	if r.Verify != nil && (k == nil || *r.Verify < 1 || *r.Verify > MaxVerify) {
		if k == nil {
			return fmt.Errorf(`"verify" is for case requests, not op %q`, r.Op)
		}
		return fmt.Errorf(`"verify" must be from 1 to %d, not %d`, MaxVerify, *r.Verify)
	}
	for _, e := range r.Engines {
		if !isKnownEngine(e) {
			return fmt.Errorf("unknown engine %q (known: %s)", e, strings.Join(browser.AllEngines, ", "))
		}
	}
	return nil
}

func isKnownEngine(name string) bool {
	for _, e := range browser.AllEngines {
		if e == name {
			return true
		}
	}
	return false
}

// XML content types an html case may be served as (Request.ContentType).
var inlineTypes = []string{"text/html", "application/xhtml+xml", "image/svg+xml"}

// validateDocument checks how the request names its document: html or url, never
// both; url a clean docroot path; content_type one of inlineTypes, with html only.
func (r *Request) validateDocument() error {
	if r.Op == OpPing || r.Op == opShutdown {
		if r.URL != nil || r.ContentType != nil {
			return fmt.Errorf(`%s takes no "url" or "content_type"`, r.Op)
		}
		return nil
	}
	if r.URL != nil && r.HTML != nil {
		return errors.New(`give either "html" or "url", not both`)
	}
	if r.URL != nil {
		if _, err := origin.SplitDocURL(*r.URL); err != nil {
			return fmt.Errorf(`"url": %v`, err)
		}
	}
	if r.ContentType != nil {
		if r.HTML == nil {
			return errors.New(`"content_type" goes with "html" (a "url" document's type comes from its extension)`)
		}
		ok := false
		for _, t := range inlineTypes {
			ok = ok || *r.ContentType == t
		}
		if !ok {
			return fmt.Errorf(`unknown "content_type" %q (known: %s)`, *r.ContentType, strings.Join(inlineTypes, ", "))
		}
	}
	return nil
}
