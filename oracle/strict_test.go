package oracle

// Unit tests of request parsing (no browser): what encoding/json alone lets through.
// Each case failed before checkKeys and the UTF-8 check on ids.

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRequestRefusesDuplicateAndMiscasedKeys(t *testing.T) {
	assertParseErrors(t, []parseErrorCase{
		{"duplicate script", `{"id":"d","html":"<p>","script":"a()","script":"b()"}`, `"d"`, `duplicate key "script"`},
		{"duplicate id", `{"id":"a","html":"","id":"b"}`, `null`, `duplicate key "id"`},
		{"miscased script", `{"id":"c","html":"<p>","Script":"x()"}`, `"c"`, `key "Script" must be spelled "script" (keys are case-sensitive)`},
		{"miscased id", `{"ID":"c","html":"<p>"}`, `null`, `key "ID" must be spelled "id"`},
		{"miscased op", `{"id":1,"OP":"ping"}`, `1`, `key "OP" must be spelled "op"`},
		{"duplicate probe key", `{"id":"r","op":"reflect","probes":[{"selector":"#a","attr":"x"},{"selector":"#a","attr":"x","attr":"y"}]}`, `"r"`, `duplicate key "attr" in probes[1]`},
		{"miscased probe key", `{"id":"r","op":"reflect","probes":[{"Selector":"#a","attr":"x"}]}`, `"r"`, `key "Selector" in probes[0] must be spelled "selector"`},
		{"invalid UTF-8 id", "{\"id\":\"a\xffb\",\"html\":\"\"}", `null`, `"id" is not valid UTF-8, so it cannot be echoed exactly`},
		{"lone first half", `{"id":"a\ud800","op":"ping"}`, `null`, `"id" escapes half a UTF-16 surrogate pair`},
		{"lone second half", `{"id":"\udc00b","op":"ping"}`, `null`, `"id" escapes half a UTF-16 surrogate pair`},
		{"first half before a letter", `{"id":"\ud83dx","op":"ping"}`, `null`, `"id" escapes half a UTF-16 surrogate pair`},
		{"two first halves", `{"id":"\ud83d\ud83d","op":"ping"}`, `null`, `"id" escapes half a UTF-16 surrogate pair`},
		{"a number too large for a float64, as verify", `{"id":"v","html":"","verify":1e400}`, `"v"`, `field "verify" must be an integer, not number 1e400`},
	})
	// A whole pair is a character; any number is an id, echoed as sent.
	for _, id := range []string{`"\ud83d\ude00"`, `"a\\ud800"`, `1e400`, `-0`, `12345678901234567890`} {
		req, _, err := ParseRequest([]byte(`{"id":` + id + `,"op":"ping"}`))
		require.NoError(t, err, id)
		assert.Equal(t, id, string(req.ID))
	}
	// Keys are checked, not values: markup that looks like JSON keys is fine.
	req, _, err := ParseRequest([]byte(`{"id":"ok","html":"{\"Script\":1,\"Script\":2}","engines":["chromium","chromium"]}`))
	require.NoError(t, err)
	assert.Equal(t, `{"Script":1,"Script":2}`, *req.HTML)
}

// Every response line is valid UTF-8 JSON, whatever bytes the request held.
func TestServeWritesValidUTF8ForAnInvalidID(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	var out strings.Builder
	require.NoError(t, o.Serve(t.Context(), strings.NewReader("{\"id\":\"\xff\",\"op\":\"ping\"}\n"), &out))
	assert.True(t, utf8.ValidString(out.String()), "%q", out.String())
	assert.Equal(t, `{"id":null,"error":"\"id\" is not valid UTF-8, so it cannot be echoed exactly","line":1}`+"\n", out.String())
}

// An id is echoed as it was sent, in every kind of response. encoding/json alone
// writes the <, > and & of "<a>&b", and a U+2028, as \u escapes, where a client
// that matches the id it sent (client.StartLine) then never finds its answer.
func TestServeEchoesTheIDAsSent(t *testing.T) {
	o := fakeOracle(&fakeEngine{name: browser.Chromium})
	ids := []string{`"<a>&b"`, "\"x\u2028y\u2029\"", `"\u003c\u0026"`, `"</script><!--"`, `1.0`, `-0`, `12345678901234567890`}
	var in strings.Builder
	for _, id := range ids {
		in.WriteString(`{"id":` + id + `,"op":"ping"}` + "\n")
		in.WriteString(`{"id":` + id + `,"html":"<p>"}` + "\n")
		in.WriteString(`{"id":` + id + `,"op":"nope"}` + "\n")
	}
	var out strings.Builder
	require.NoError(t, o.Serve(t.Context(), strings.NewReader(in.String()), &out))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3*len(ids))
	for _, id := range ids {
		for _, rest := range []string{`,"ok":true`, `,"dumps":{"chromium":`, `,"error":"unknown op`} {
			n := 0
			for _, l := range lines {
				if strings.HasPrefix(l, `{"id":`+id+rest) {
					n++
				}
			}
			assert.Equal(t, 1, n, "one line starts {\"id\":%s%s in %q", id, rest, lines)
		}
	}
}
