package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/mxschmitt/playwright-go"
)

// Screenshot is Playwright's page.Screenshot of the viewport (not the full page),
// under ctx's deadline, through the same guarded call as Load.
func (e *playwrightEngine) Screenshot(ctx context.Context) ([]byte, error) {
	ctx = context.WithValue(ctx, opKey{}, "screenshot")
	var png []byte
	_, err := e.withPage(ctx, func(page playwright.Page, timeout float64) error {
		var err error
		png, err = page.Screenshot(playwright.PageScreenshotOptions{
			Type:     playwright.ScreenshotTypePng,
			FullPage: playwright.Bool(false),
			Timeout:  &timeout,
		})
		return err
	}, "", nil)
	return png, err
}

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
		return nil, engineErrorf(WebKit, "screenshot: %v", err)
	}
	return base64.StdEncoding.DecodeString(b64)
}
