package playwright

// The relay's check of a Playwright server's messages, on messages
// written here: each refused one panics playwright-go's dispatch goroutine when let
// through (connection.go's Dispatch, the constructors); the accepted ones are the
// shapes a real server sends.

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelayValidatorRefusesWhatPanicsTheClient(t *testing.T) {
	setup := append(append(append([]string{}, fakeSetup...), fakeContext...), fakePage...) // remote_fake_test.go
	setup = append(setup,
		`{"id":"abcd@1","result":{"x":1}}`,
		`{"id":"abcd@2","error":{"error":{"message":"m","name":"Error"}}}`,
		`{"guid":"p","method":"__dispose__","params":{"reason":"gc"}}`,
		`{"guid":"nobody","method":"__dispose__","params":{"reason":5}}`, // an unknown object: Dispatch drops it
		`{"guid":"rq","method":"__adopt__","params":{"guid":"tr"}}`,      // a real server's: params name a live object
	)
	v := newRelayValidator()
	for _, m := range setup {
		assert.NoError(t, v.check([]byte(m)), m)
	}
	_, pageLeft := v.objects["p"]
	assert.False(t, pageLeft, "a disposed object is forgotten")

	for _, m := range []string{
		`{"guid":"","method":"__create__","params":{"guid":"x","initializer":{}}}`,                                          // no type
		`{"guid":"","method":"__create__","params":{"type":"Frame","initializer":{}}}`,                                      // no guid
		`{"guid":"","method":"__create__","params":{"type":"Frame","guid":"x"}}`,                                            // no initializer
		`{"guid":"","method":"__create__","params":{"type":"Nope","guid":"x","initializer":{}}}`,                            // unknown type
		`{"guid":"","method":"__create__","params":{"type":"Browser","guid":"x","initializer":{}}}`,                         // no version
		`{"guid":"ctx","method":"__create__","params":{"type":"Page","guid":"x","initializer":{"mainFrame":{"guid":"p"}}}}`, // disposed
		`{"guid":"ctx","method":"__create__","params":{"type":"Page","guid":"x","initializer":{"mainFrame":{"guid":"b"}}}}`, // not a Frame
		`{"guid":"","method":"__dispose__","params":{"reason":5}}`,
		`{"guid":"b","method":"__dispose__","params":{"reason":null}}`,
		`{"guid":"","method":"__dispose__","params":{}}`,
		`{"guid":"f","method":"__adopt__","params":{"guid":"b"}}`, // into its own descendant
		`{"guid":"b","method":"__adopt__","params":{"guid":7}}`,
		`not json`,
	} {
		assert.Error(t, v.check([]byte(m)), m)
	}
}
