package browser

// The relay's check of a Playwright server's messages (issue 26 item 3), on messages
// written here: each refused one panics playwright-go's dispatch goroutine when let
// through (connection.go's Dispatch, the constructors); the accepted ones are the
// shapes a real server sends.

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRelayValidatorRefusesWhatPanicsTheClient(t *testing.T) {
	setup := []string{
		`{"guid":"","method":"__create__","params":{"type":"BrowserType","guid":"bt","initializer":{"name":"chromium","executablePath":"/x"}}}`,
		`{"guid":"","method":"__create__","params":{"type":"Browser","guid":"b","initializer":{"version":"1.2"}}}`,
		`{"guid":"","method":"__create__","params":{"type":"Playwright","guid":"pw","initializer":{"chromium":{"guid":"bt"},"firefox":{"guid":"bt"},"webkit":{"guid":"bt"},"preLaunchedBrowser":{"guid":"b"}}}}`,
		`{"guid":"b","method":"__create__","params":{"type":"Frame","guid":"f","initializer":{"name":"","url":"about:blank"}}}`,
		`{"guid":"b","method":"__create__","params":{"type":"Page","guid":"p","initializer":{"mainFrame":{"guid":"f"}}}}`,
		`{"id":"abcd@1","result":{"x":1}}`,
		`{"id":"abcd@2","error":{"error":{"message":"m","name":"Error"}}}`,
		`{"guid":"p","method":"__dispose__","params":{"reason":"gc"}}`,
		`{"guid":"nobody","method":"__dispose__","params":{"reason":5}}`, // an unknown object: Dispatch drops it
	}
	v := newRelayValidator()
	for _, m := range setup {
		assert.NoError(t, v.check([]byte(m)), m)
	}
	_, pageLeft := v.objects["p"]
	assert.False(t, pageLeft, "a disposed object is forgotten")

	for _, m := range []string{
		`{"guid":"","method":"__create__","params":{"guid":"x","initializer":{}}}`,                                        // no type
		`{"guid":"","method":"__create__","params":{"type":"Frame","initializer":{}}}`,                                    // no guid
		`{"guid":"","method":"__create__","params":{"type":"Frame","guid":"x"}}`,                                          // no initializer
		`{"guid":"","method":"__create__","params":{"type":"Nope","guid":"x","initializer":{}}}`,                          // unknown type
		`{"guid":"","method":"__create__","params":{"type":"Browser","guid":"x","initializer":{}}}`,                       // no version
		`{"guid":"b","method":"__create__","params":{"type":"Page","guid":"x","initializer":{"mainFrame":{"guid":"p"}}}}`, // disposed frame
		`{"guid":"b","method":"__create__","params":{"type":"Page","guid":"x","initializer":{"mainFrame":{"guid":"b"}}}}`, // not a Frame
		`{"guid":"","method":"__dispose__","params":{"reason":5}}`,
		`{"guid":"b","method":"__dispose__","params":{"reason":null}}`,
		`{"guid":"b","method":"__adopt__","params":{"guid":7}}`,
		`not json`,
	} {
		assert.Error(t, v.check([]byte(m)), m)
	}
}
