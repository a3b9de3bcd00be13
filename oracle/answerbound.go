package oracle

import (
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
	return json.Marshal(resp)
}
