package main

// Reflection requests against the real three engines.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reflectAll runs a reflect request and returns each engine's observations,
// requiring all three engines to answer.
func reflectAll(t *testing.T, html, script string, probes ...map[string]any) map[string][]map[string]any {
	t.Helper()
	req := map[string]any{"op": "reflect", "html": html, "probes": probes}
	if script != "" {
		req["script"] = script
	}
	resp := shared.get(t).send(t, req)
	require.Nil(t, resp["errors"])
	states := resp["states"].(map[string]any)
	require.Len(t, states, 3)
	out := map[string][]map[string]any{}
	for engine, s := range states {
		st := s.(map[string]any)
		assert.Equal(t, engine, st["engine"])
		assert.NotEmpty(t, st["engine_version"])
		for _, o := range st["observations"].([]any) {
			out[engine] = append(out[engine], o.(map[string]any))
		}
		require.Len(t, out[engine], len(probes), engine)
	}
	return out
}

func probe(selector, attr, idl string) map[string]any {
	p := map[string]any{"selector": selector, "attr": attr}
	if idl != "" {
		p["idl"] = idl
	}
	return p
}

func TestReflectValueAfterSetAttribute(t *testing.T) {
	for engine, obs := range reflectAll(t, `<input id=a>`, `document.getElementById('a').setAttribute('value', '5')`,
		probe("#a", "value", "")) {
		assert.Equal(t, map[string]any{"selector": "#a", "attr": "value", "attr_value": "5", "idl": "value", "idl_value": "5"}, obs[0], engine)
	}
}

func TestReflectRenamedIDL(t *testing.T) {
	for engine, obs := range reflectAll(t, `<label id=l for=x class="p q"></label>`, "",
		probe("#l", "for", "htmlFor"), probe("#l", "class", "className")) {
		assert.Equal(t, "x", obs[0]["attr_value"], engine)
		assert.Equal(t, "x", obs[0]["idl_value"], engine)
		assert.Equal(t, "htmlFor", obs[0]["idl"], engine)
		assert.Equal(t, "p q", obs[1]["idl_value"], engine)
	}
}

func TestReflectBooleanAttributes(t *testing.T) {
	for engine, obs := range reflectAll(t, `<input id=a type=checkbox disabled><input id=b type=checkbox>`,
		`document.getElementById('b').setAttribute('checked', '')`,
		probe("#a", "disabled", ""), probe("#b", "disabled", ""), probe("#b", "checked", "")) {
		assert.Equal(t, "", obs[0]["attr_value"], engine)
		assert.Equal(t, true, obs[0]["idl_value"], engine)
		assert.Nil(t, obs[1]["attr_value"], "%s: absent attribute is null", engine)
		assert.Contains(t, obs[1], "attr_value")
		assert.Equal(t, false, obs[1]["idl_value"], engine)
		assert.Equal(t, true, obs[2]["idl_value"], engine)
	}
}

func TestReflectNumericIDL(t *testing.T) {
	for engine, obs := range reflectAll(t, `<div id=d tabindex=3></div><input id=i maxlength=-7><input id=j maxlength=abc>`, "",
		probe("#d", "tabindex", "tabIndex"), probe("#i", "maxlength", "maxLength"), probe("#j", "maxlength", "maxLength")) {
		assert.Equal(t, 3.0, obs[0]["idl_value"], engine)
		assert.Equal(t, "-7", obs[1]["attr_value"], engine)
		assert.Equal(t, -1.0, obs[1]["idl_value"], "%s: invalid maxlength reflects as -1", engine)
		assert.Equal(t, -1.0, obs[2]["idl_value"], engine)
	}
}

func TestReflectTypoedIDLIsUndefined(t *testing.T) {
	for engine, obs := range reflectAll(t, `<input id=a value=1>`, "", probe("#a", "value", "valeu")) {
		assert.Equal(t, map[string]any{"$undefined": true}, obs[0]["idl_value"], engine)
	}
}

func TestReflectRejectsNonIDSelector(t *testing.T) {
	resp := shared.get(t).send(t, map[string]any{"id": "sel", "op": "reflect", "html": `<input id=a>`,
		"probes": []any{probe("input#a", "value", "")}})
	assert.Contains(t, resp["error"], `selector "input#a" is not a bare #id`)
	assert.NotContains(t, resp, "states")
}

func TestReflectMissingElementIsAnEngineError(t *testing.T) {
	resp := shared.get(t).send(t, map[string]any{"op": "reflect", "html": `<input id=a>`,
		"probes": []any{probe("#a", "value", ""), probe("#nope", "value", "")}})
	errs, _ := resp["errors"].(map[string]any)
	for _, e := range engines {
		assert.Equal(t, `selector "#nope" matched no element`, errs[e], e)
	}
	assert.Empty(t, resp["states"])
}
