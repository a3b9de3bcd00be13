package oracle

import (
	"bytes"
	"encoding/json"

	"github.com/layout-oracle/oracle/oracle/answerbound"
)

// answerLimits are one oracle's per-engine answer bounds, by kind name.
type answerLimits map[string]int

func (o *Oracle) answerLimits() answerLimits {
	l := answerLimits{}
	for _, k := range operations() {
		l[k.about().Name] = k.info().limit(o)
	}
	return l
}

// boundLine returns resp ready to be written: every error message fitted
// (answerbound.FitError), and every engine's answer over its kind's bound replaced by an error.
// An answer is encoded on its own only when the whole line is over that bound.
func boundLine(resp any, lim answerLimits) ([]byte, error) {
	switch r := resp.(type) {
	case ErrorResponse:
		r.Error = answerbound.FitError(r.Error)
		resp = r
	case interface {
		bounded(answerLimits) ([]byte, error)
	}:
		return r.bounded(lim)
	}
	return encodeLine(resp)
}

// encodeLine is resp as a response line's JSON text. encoding/json's Marshal writes
// <, >, & and U+2028, U+2029 as \u escapes, even inside a json.RawMessage, which
// would change an id holding one: the id is echoed as it was sent (docs/protocol.md),
// so the line is encoded with that escaping off. A kind's answers keep it: its
// response encodes them itself, as the store keeps them (response[T]'s MarshalJSON).
func encodeLine(resp any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
