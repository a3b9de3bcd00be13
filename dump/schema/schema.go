// Package schema holds the JSON Schemas (draft 2020-12) of the contract in
// docs/dump-format.md: a dump (dump.schema.json) and a candidate record
// (candidate.schema.json), embedded, and the validator compare uses to refuse a bad
// candidate record and that `compare --validate` runs on a candidate's whole file.
//
// A schema error names where it is in the record (Instance, a JSON pointer) and
// which keyword of which schema it broke (Keyword). The promises JSON Schema cannot
// state (node i has index i, parents precede children, depths) are dump.Validate's,
// reported the same way with the rule's name as the keyword.
package schema

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/layout-oracle/oracle/dump"
)

// The schemas' text, as shipped in dump/schema/.
var (
	//go:embed dump.schema.json
	dumpJSON []byte
	//go:embed candidate.schema.json
	CandidateJSON []byte
)

// base is the URL the schemas' $id values share; Keyword is given relative to it.
const base = "https://github.com/layout-oracle/oracle/dump/schema/"

// maxErrors bounds the errors reported for one record: a dump with a wrong field on
// every one of 10,000 nodes says so in the first few.
const maxErrors = 20

// nodeSchema is dump.schema.json's node, to check a dump one node at a time
// (DecodeDump).
var dumpSchema, candidateSchema, nodeSchema = compile()

func compile() (*jsonschema.Schema, *jsonschema.Schema, *jsonschema.Schema) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for name, text := range map[string][]byte{"dump.schema.json": dumpJSON, "candidate.schema.json": CandidateJSON} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
		if err != nil {
			panic(fmt.Sprintf("schema %s: %v", name, err)) // the embedded files are tested
		}
		if err := c.AddResource(base+name, doc); err != nil {
			panic(fmt.Sprintf("schema %s: %v", name, err))
		}
	}
	return c.MustCompile(base + "dump.schema.json"), c.MustCompile(base + "candidate.schema.json"),
		c.MustCompile(base + "dump.schema.json#/$defs/node")
}

// validationError is one way a record breaks the contract.
type validationError struct {
	// Line is the record's first line in its file, from 1; 0 when not known.
	Line int `json:"line,omitempty"`
	// Instance is the JSON pointer of the offending value in the record
	// ("/dump/nodes/3/bounding/w"; "" is the record itself).
	Instance string `json:"instance"`
	// Keyword is the schema keyword broken, as schema file#JSON pointer
	// ("dump.schema.json#/$defs/rect/properties/w/minimum"), or, for a rule JSON
	// Schema cannot state, "dump.Validate: " and the rule ("dump.Validate: parent precedes").
	Keyword string `json:"keyword"`
	Message string `json:"message"`
}

func (e validationError) Error() string {
	at := e.Instance
	if at == "" {
		at = "(the record)"
	}
	s := fmt.Sprintf("at %s: %s [%s]", at, e.Message, e.Keyword)
	if e.Line > 0 {
		s = fmt.Sprintf("line %d: %s", e.Line, s)
	}
	return s
}

// Errors is a record's errors; as an error, the first one and how many more.
type Errors []validationError

func (es Errors) Error() string {
	switch len(es) {
	case 0:
		return "no errors"
	case 1:
		return es[0].Error()
	}
	return fmt.Sprintf("%s (and %d more)", es[0].Error(), len(es)-1)
}

// Err is es as an error, nil when empty.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Record checks one candidate record ({"id", "dump"|"state"|"trace"|"error"}): the
// candidate schema, then dump.Validate on its dump. At most MaxErrors.
func Record(raw []byte) Errors {
	_, es := RecordDump(raw)
	return es
}

// RecordDump is Record, and the record's dump decoded in the same pass (nil when
// it has none or breaks the contract). The dump is checked as DecodeDump checks
// it, one node at a time; the rest of the record with the candidate schema, the
// dump standing in as a minimal valid one.
func RecordDump(raw []byte) (*dump.Dump, Errors) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || len(top["dump"]) == 0 || string(top["dump"]) == "null" {
		inst, es := parse(raw)
		if es != nil {
			return nil, es
		}
		return nil, check(candidateSchema, inst)
	}
	d := top["dump"]
	top["dump"] = placeholderDump
	head, err := json.Marshal(top)
	if err != nil {
		return nil, Errors{{Keyword: "JSON", Message: err.Error()}}
	}
	inst, es := parse(head)
	if es != nil {
		return nil, es
	}
	es = check(candidateSchema, inst)
	decoded, des := decodeDump(d, "/dump")
	for _, e := range des {
		// The contract's rules beyond the schema are checked once the schema holds.
		if len(es) == 0 || !strings.HasPrefix(e.Keyword, "dump.Validate") {
			es = append(es, e)
		}
	}
	if len(es) > 0 {
		slices.SortStableFunc(es, func(a, b validationError) int { return comparePointers(a.Instance, b.Instance) })
		return nil, es[:min(len(es), maxErrors)]
	}
	return decoded, nil
}

// placeholderDump is the smallest dump the contract takes: it stands for a
// record's dump while the rest of the record is checked.
var placeholderDump = func() json.RawMessage {
	st := dump.Style{}
	for _, p := range dump.StyleProperties {
		st[p] = ""
	}
	b, err := json.Marshal(dump.Dump{Engine: "x", EngineVersion: "x", Viewport: dump.Viewport,
		Nodes: []dump.Node{{Parent: -1, Tag: "HTML", Rects: []dump.Rect{}, Style: st}}})
	if err != nil {
		panic(err)
	}
	return b
}()

// Dump checks one bare dump: the dump schema, then dump.Validate.
func Dump(raw []byte) Errors {
	_, es := DecodeDump(raw)
	return es
}

func parse(raw []byte) (any, Errors) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, Errors{{Keyword: "JSON", Message: err.Error()}}
	}
	return inst, nil
}

// validate runs dump.Validate on a dump the schema accepted.
func validate(d *dump.Dump, prefix string) Errors {
	err := d.Validate()
	var inv *dump.Invalid
	if errors.As(err, &inv) {
		return Errors{{Instance: prefix + inv.Pointer, Keyword: "dump.Validate: " + inv.Rule, Message: inv.Error()}}
	}
	if err != nil {
		return Errors{{Instance: prefix, Keyword: "dump.Validate", Message: err.Error()}}
	}
	return nil
}

var printer = message.NewPrinter(language.English)

func check(s *jsonschema.Schema, inst any) Errors {
	err := s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Errors{{Keyword: "schema", Message: err.Error()}}
	}
	var out Errors
	leaves(ve, &out)
	slices.SortStableFunc(out, func(a, b validationError) int { return comparePointers(a.Instance, b.Instance) })
	if len(out) > maxErrors {
		out = out[:maxErrors]
	}
	return out
}

// comparePointers orders JSON pointers as the document does: token by token, array
// indexes as numbers ("/nodes/2" before "/nodes/10").
func comparePointers(a, b string) int {
	at, bt := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(at) && i < len(bt); i++ {
		x, errx := strconv.Atoi(at[i])
		y, erry := strconv.Atoi(bt[i])
		if errx == nil && erry == nil {
			if c := cmp.Compare(x, y); c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(at[i], bt[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(at), len(bt))
}

// collectMax bounds the leaves collected before sorting, so the first MaxErrors in
// document order are reported from a bounded amount of work.
const collectMax = 1000

// leaves flattens a validation error to its leaves, the errors that say what is
// wrong where; a oneOf or anyOf is one error (its branches' errors say only why each
// alternative does not apply).
func leaves(e *jsonschema.ValidationError, out *Errors) {
	if len(*out) >= collectMax {
		return
	}
	switch e.ErrorKind.(type) {
	case *kind.OneOf, *kind.AnyOf:
	default:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				leaves(c, out)
			}
			return
		}
	}
	kw, msg := e.ErrorKind.KeywordPath(), e.ErrorKind.LocalizedString(printer)
	switch e.ErrorKind.(type) {
	case *kind.Not: // the library names no keyword for these
		kw, msg = []string{"not"}, "matches what the schema forbids here"
	case *kind.FalseSchema:
		msg = "not allowed here"
	case *kind.OneOf:
		if e.SchemaURL == base+"candidate.schema.json#" {
			msg = `a record has exactly one of "dump", "state", "trace" and "error": ` + msg
		}
	}
	*out = append(*out, validationError{
		Instance: pointer(e.InstanceLocation),
		Keyword:  strings.TrimPrefix(e.SchemaURL, base) + pointer(kw),
		Message:  msg,
	})
}

// pointer is the JSON pointer of tokens (RFC 6901: ~ and / escaped).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}
