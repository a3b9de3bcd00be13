package playwright

import (
	"context"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/mxschmitt/playwright-go"
)

// Screenshot is Playwright's page.Screenshot of the viewport (not the full page),
// under ctx's deadline, through the same guarded call as Load.
func (e *playwrightEngine) Screenshot(ctx context.Context) ([]byte, error) {
	ctx = browser.WithOp(ctx, "screenshot")
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
