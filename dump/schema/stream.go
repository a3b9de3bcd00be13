package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/dump"
)

// DecodeDump checks one bare dump against the contract, as Dump does, and decodes
// it, in one pass over raw: the nodes are checked and decoded one at a time, so
// checking a dump costs about what the decoded dump.Dump takes, not the many times
// its size a whole-document JSON Schema instance does. The dump is nil when there
// are errors (at most MaxErrors, in document order).
func DecodeDump(raw []byte) (*dump.Dump, Errors) {
	return decodeDump(raw, "")
}

// errStream is a dump this pass cannot take apart (not an object, nodes not an
// array): it is checked whole, as before, and such a dump is small or invalid.
var errStream = errors.New("not streamable")

func decodeDump(raw []byte, prefix string) (*dump.Dump, Errors) {
	d, es, err := streamDump(raw, prefix)
	if errors.Is(err, errStream) {
		return wholeDump(raw, prefix)
	}
	if err != nil {
		return nil, Errors{{Instance: prefix, Keyword: "JSON", Message: err.Error()}}
	}
	if len(es) > 0 {
		slices.SortStableFunc(es, func(a, b validationError) int { return comparePointers(a.Instance, b.Instance) })
		return nil, es[:min(len(es), maxErrors)]
	}
	if es := validate(d, prefix); es != nil {
		return nil, es
	}
	return d, nil
}

// wholeDump is the check of the whole document at once, and the decode after it.
func wholeDump(raw []byte, prefix string) (*dump.Dump, Errors) {
	inst, es := parse(raw)
	if es != nil {
		return nil, withPrefix(es, prefix)
	}
	if es := check(dumpSchema, inst); es != nil {
		return nil, withPrefix(es, prefix)
	}
	var d dump.Dump
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, Errors{{Instance: prefix, Keyword: "JSON", Message: err.Error()}}
	}
	if es := validate(&d, prefix); es != nil {
		return nil, es
	}
	return &d, nil
}

func withPrefix(es Errors, prefix string) Errors {
	for i := range es {
		es[i].Instance = prefix + es[i].Instance
	}
	return es
}

// streamDump reads the dump's top-level object token by token: every field but
// "nodes" is kept raw (they are small) and checked with the dump's schema, with
// "nodes" standing for a one-node array of the first node; each node is checked with
// the node schema and decoded on its own.
func streamDump(raw []byte, prefix string) (*dump.Dump, Errors, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil {
		return nil, nil, err
	} else if tok != json.Delim('{') {
		return nil, nil, errStream
	}
	top := map[string]json.RawMessage{}
	var nodes []dump.Node
	var es Errors
	var first json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		if key != "nodes" {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, nil, err
			}
			top[key] = v
			continue
		}
		if tok, err = dec.Token(); err != nil {
			return nil, nil, err
		} else if tok != json.Delim('[') {
			return nil, nil, errStream
		}
		nodes, es, first = nil, nil, nil // a repeated "nodes": the last one counts
		for i := 0; dec.More(); i++ {
			var n json.RawMessage
			if err := dec.Decode(&n); err != nil {
				return nil, nil, err
			}
			if i == 0 {
				first = n
			}
			at := prefix + "/nodes/" + strconv.Itoa(i)
			if len(es) >= maxErrors {
				continue // the first MaxErrors in document order are reported
			}
			inst, perr := parse(n)
			if perr != nil {
				es = append(es, withPrefix(perr, at)...)
				continue
			}
			if ne := check(nodeSchema, inst); ne != nil {
				es = append(es, withPrefix(ne, at)...)
				continue
			}
			if len(es) > 0 {
				continue // refused already: no need to decode
			}
			var nd dump.Node
			if err := json.Unmarshal(n, &nd); err != nil {
				es = append(es, validationError{Instance: at, Keyword: "JSON", Message: err.Error()})
				continue
			}
			nodes = append(nodes, nd)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, nil, err
		}
		top["nodes"] = json.RawMessage("[]")
		if first != nil {
			top["nodes"] = slices.Concat([]byte("["), first, []byte("]"))
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("invalid character after top-level value")
	}
	head, err := json.Marshal(top)
	if err != nil {
		return nil, nil, err
	}
	inst, perr := parse(head)
	if perr != nil {
		return nil, withPrefix(perr, prefix), nil
	}
	for _, e := range check(dumpSchema, inst) {
		if !strings.HasPrefix(e.Instance, "/nodes/") { // the first node's are its own check's
			e.Instance = prefix + e.Instance
			es = append(es, e)
		}
	}
	if len(es) > 0 {
		return nil, es, nil
	}
	delete(top, "nodes")
	head, err = json.Marshal(top)
	if err != nil {
		return nil, nil, err
	}
	var d dump.Dump
	if err := json.Unmarshal(head, &d); err != nil {
		return nil, Errors{{Instance: prefix, Keyword: "JSON", Message: err.Error()}}, nil
	}
	d.Nodes = nodes
	return &d, nil, nil
}
