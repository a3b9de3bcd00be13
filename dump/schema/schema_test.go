package schema

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/layout-oracle/oracle/dump"
	reflection "github.com/layout-oracle/oracle/reflect"
	"github.com/layout-oracle/oracle/trace"
)

// Unit tests of the schemas and the validator on the bundled candidate fixtures and
// handmade bad records. That the schema accepts what the real engines give is
// cmd/compare's TestSchemaAcceptsRealEngineDumps.

const fixtures = "../../testdata/compare/"

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		out = append(out, slices.Clone(sc.Bytes()))
	}
	require.NoError(t, sc.Err())
	return out
}

func TestFixturesAreValid(t *testing.T) {
	for _, name := range []string{"candidate.ndjson", "candidate-pass.ndjson", "candidate-missing.ndjson"} {
		for i, l := range lines(t, fixtures+name) {
			assert.NoError(t, Record(l).Err(), "%s line %d", name, i+1)
		}
	}
	b, err := os.ReadFile(fixtures + "bare.json")
	require.NoError(t, err)
	assert.NoError(t, Dump(b).Err())
}

// record is the first fixture candidate record, decoded to be broken on purpose.
func record(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(lines(t, fixtures+"candidate.ndjson")[0], &m))
	return m
}

func node(m map[string]any, i int) map[string]any {
	return m["dump"].(map[string]any)["nodes"].([]any)[i].(map[string]any)
}

func TestBadRecordsNameThePath(t *testing.T) {
	for _, c := range []struct {
		name              string
		breakIt           func(m map[string]any)
		instance, keyword string
		message           string
	}{
		{"negative width", func(m map[string]any) { node(m, 1)["bounding"].(map[string]any)["w"] = -1 },
			"/dump/nodes/1/bounding/w", "dump.schema.json#/$defs/rect/properties/w/minimum", "minimum"},
		{"no engine_version", func(m map[string]any) { delete(m["dump"].(map[string]any), "engine_version") },
			"/dump", "dump.schema.json#/required", "engine_version"},
		{"empty engine_version", func(m map[string]any) { m["dump"].(map[string]any)["engine_version"] = "" },
			"/dump/engine_version", "dump.schema.json#/properties/engine_version/minLength", ""},
		{"lowercase tag", func(m map[string]any) { node(m, 2)["tag"] = "div" },
			"/dump/nodes/2/tag", "dump.schema.json#/$defs/node/properties/tag/pattern", ""},
		{"style property missing", func(m map[string]any) { delete(node(m, 0)["style"].(map[string]any), "display") },
			"/dump/nodes/0/style", "dump.schema.json#/$defs/style/required", "display"},
		{"style value a number", func(m map[string]any) { node(m, 0)["style"].(map[string]any)["width"] = 800 },
			"/dump/nodes/0/style/width", "dump.schema.json#/$defs/style/properties/width/type", "string"},
		{"unknown node field", func(m map[string]any) { node(m, 0)["box"] = 1 },
			"/dump/nodes/0", "dump.schema.json#/$defs/node/additionalProperties", "box"},
		{"another viewport", func(m map[string]any) { m["dump"].(map[string]any)["viewport"].(map[string]any)["width"] = 1024 },
			"/dump/viewport/width", "dump.schema.json#/properties/viewport/properties/width/const", ""},
		{"rects not an array", func(m map[string]any) { node(m, 1)["rects"] = nil },
			"/dump/nodes/1/rects", "dump.schema.json#/$defs/node/properties/rects/type", ""},
		{"no nodes", func(m map[string]any) { m["dump"].(map[string]any)["nodes"] = []any{} },
			"/dump/nodes", "dump.schema.json#/properties/nodes/minItems", ""},
		{"dump and error", func(m map[string]any) { m["error"] = "crashed" },
			"", "candidate.schema.json#/oneOf", ""},
		{"no id", func(m map[string]any) { delete(m, "id") },
			"", "candidate.schema.json#/required", "id"},
		{"null id", func(m map[string]any) { m["id"] = nil },
			"/id", "candidate.schema.json#/properties/id/type", "null"},
		{"dumps, the oracle's field", func(m map[string]any) { m["dumps"] = m["dump"]; delete(m, "dump") },
			"", "candidate.schema.json#/additionalProperties", "dumps"},
		{"parent after the node", func(m map[string]any) { node(m, 2)["parent"] = 3 },
			"/dump/nodes/2/parent", "dump.Validate: parent precedes", "does not precede"},
		{"index out of order", func(m map[string]any) { node(m, 1)["index"] = 5 },
			"/dump/nodes/1/index", "dump.Validate: index is position", ""},
		{"depth", func(m map[string]any) { node(m, 1)["depth"] = 3 },
			"/dump/nodes/1/depth", "dump.Validate: depth", ""},
		{"an event with a value", func(m map[string]any) {
			delete(m, "dump")
			m["trace"] = map[string]any{"records": []any{map[string]any{"seq": 0, "kind": "event", "label": "document", "type": "click", "value": 1}}}
		}, "/trace/records/0/value", "candidate.schema.json#/$defs/record/allOf/1/then/properties/value", "not allowed"},
		{"a settle without state", func(m map[string]any) {
			delete(m, "dump")
			m["trace"] = map[string]any{"records": []any{map[string]any{"seq": 0, "kind": "settle", "label": "p", "value": 1}}}
		}, "/trace/records/0", "candidate.schema.json#/$defs/record/allOf/2/then/required", "state"},
		{"a message on an event", func(m map[string]any) {
			delete(m, "dump")
			m["trace"] = map[string]any{"records": []any{map[string]any{"seq": 0, "kind": "event", "label": "document", "type": "click", "message": "m"}}}
		}, "/trace/records/0/message", "candidate.schema.json#/$defs/record/allOf/3/then/properties/message", "not allowed"},
		{"a probe without attr_value", func(m map[string]any) {
			delete(m, "dump")
			m["state"] = map[string]any{"observations": []any{map[string]any{"selector": "#a", "attr": "value", "idl_value": "5"}}}
		}, "/state/observations/0", "candidate.schema.json#/$defs/observation/required", "attr_value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := record(t)
			c.breakIt(m)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			es := Record(b)
			require.NotEmpty(t, es)
			var found bool
			for _, e := range es {
				if e.Instance == c.instance && e.Keyword == c.keyword && strings.Contains(e.Message, c.message) {
					found = true
				}
			}
			assert.True(t, found, "want an error at %q from %q, got %v", c.instance, c.keyword, es)
		})
	}
}

func TestNotJSON(t *testing.T) {
	es := Record([]byte(`{"id": 1, "dump": `))
	require.Len(t, es, 1)
	assert.Equal(t, "JSON", es[0].Keyword)
	es = Dump([]byte(`[1]`))
	require.NotEmpty(t, es)
	assert.Equal(t, "dump.schema.json#/type", es[0].Keyword)
}

func TestErrorsAreBounded(t *testing.T) {
	m := record(t)
	nodes := m["dump"].(map[string]any)["nodes"].([]any)
	for len(nodes) < 200 {
		nodes = append(nodes, nodes[len(nodes)-1])
	}
	for _, n := range nodes {
		n.(map[string]any)["tag"] = "p"
	}
	m["dump"].(map[string]any)["nodes"] = nodes
	b, err := json.Marshal(m)
	require.NoError(t, err)
	assert.Len(t, Record(b), maxErrors)
}

// properties are the names a schema object lists.
func properties(t *testing.T, obj map[string]any) []string {
	t.Helper()
	props, ok := obj["properties"].(map[string]any)
	require.True(t, ok)
	var out []string
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// jsonNames are the json tag names of a struct type's fields.
func jsonNames(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// The Go types and the schemas name the same fields: a field added to one and not
// the other fails here.
func TestGoTypesMatchTheSchemas(t *testing.T) {
	var d, c map[string]any
	require.NoError(t, json.Unmarshal(dumpJSON, &d))
	require.NoError(t, json.Unmarshal(CandidateJSON, &c))
	def := func(s map[string]any, name string) map[string]any {
		return s["$defs"].(map[string]any)[name].(map[string]any)
	}
	for _, k := range []struct {
		typ reflect.Type
		obj map[string]any
	}{
		{reflect.TypeFor[dump.Dump](), d},
		{reflect.TypeFor[dump.Node](), def(d, "node")},
		{reflect.TypeFor[dump.Rect](), def(d, "rect")},
		{reflect.TypeFor[dump.Size](), d["properties"].(map[string]any)["viewport"].(map[string]any)},
		{reflect.TypeFor[reflection.State](), def(c, "state")},
		{reflect.TypeFor[reflection.Observation](), def(c, "observation")},
		{reflect.TypeFor[trace.Trace](), def(c, "trace")},
		{reflect.TypeFor[trace.Record](), def(c, "record")},
	} {
		assert.Equal(t, jsonNames(k.typ), properties(t, k.obj), "%s", k.typ)
		if req, ok := k.obj["required"].([]any); ok {
			for _, r := range req {
				assert.Contains(t, jsonNames(k.typ), r, "%s: required %s", k.typ, r)
			}
		}
	}
	// The style subset: the schema requires exactly dump.StyleProperties, in order.
	style := def(d, "style")
	var req []string
	for _, r := range style["required"].([]any) {
		req = append(req, r.(string))
	}
	assert.Equal(t, dump.StyleProperties, req)
	assert.Equal(t, slices.Sorted(slices.Values(dump.StyleProperties)), properties(t, style))
	// The viewport: the schema's constants are dump.Viewport.
	vp := d["properties"].(map[string]any)["viewport"].(map[string]any)["properties"].(map[string]any)
	assert.Equal(t, dump.Viewport.Width, vp["width"].(map[string]any)["const"])
	assert.Equal(t, dump.Viewport.Height, vp["height"].(map[string]any)["const"])
}
