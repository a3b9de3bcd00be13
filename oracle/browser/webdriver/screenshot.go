package webdriver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// Screenshot is W3C WebDriver's Take Screenshot (the top-level browsing context's
// viewport), one HTTP round trip.
func (e *webDriverEngine) Screenshot(ctx context.Context) ([]byte, error) {
	e.callMu.Lock()
	defer e.callMu.Unlock()
	raw, err := e.session(ctx, http.MethodGet, "/screenshot", nil)
	if err != nil {
		return nil, e.wrap(ctx, "take screenshot", err)
	}
	var b64 string
	if err := json.Unmarshal(raw, &b64); err != nil {
		return nil, browser.EngineErrorf(browser.WebKit, "screenshot: %v", err)
	}
	return base64.StdEncoding.DecodeString(b64)
}
