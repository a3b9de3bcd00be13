package oracle

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"

	"github.com/mxschmitt/playwright-go"

	"github.com/layout-oracle/oracle/dump"
)

// screenshotter is an Engine that can capture its viewport as a PNG, as the page
// is at the moment of the call: Geometry calls it right after the walk, before the
// pool's reset, so picture and boxes describe the same settled page.
type screenshotter interface {
	Screenshot(ctx context.Context) ([]byte, error)
}

// pngMagic starts every PNG file.
var pngMagic = []byte("\x89PNG\r\n\x1a\n")

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
		return nil, fmt.Errorf("webkit: screenshot: %v", err)
	}
	return base64.StdEncoding.DecodeString(b64)
}

// screenshotSeq numbers the files under --artifacts, so that two cases with the
// same id (or ids that sanitize alike) never share a file.
var screenshotSeq atomic.Uint64

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// attachScreenshot takes e's screenshot and puts it into d: base64 in d.Screenshot,
// or, with an artifacts directory, a file there named in d.ScreenshotFile.
func attachScreenshot(ctx context.Context, e Engine, d *dump.Dump, artifacts string, id json.RawMessage) error {
	s, ok := e.(screenshotter)
	if !ok {
		return fmt.Errorf("%s: this route cannot take screenshots", e.Name())
	}
	png, err := s.Screenshot(ctx)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if !bytes.HasPrefix(png, pngMagic) {
		return errors.New("screenshot: the engine returned something that is not a PNG")
	}
	if artifacts == "" {
		d.Screenshot = base64.StdEncoding.EncodeToString(png)
		return nil
	}
	name := unsafeName.ReplaceAllString(string(id), "_")
	if len(name) > 64 {
		name = name[:64]
	}
	path := filepath.Join(artifacts, fmt.Sprintf("%06d-%s-%s.png", screenshotSeq.Add(1), name, e.Name()))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	d.ScreenshotFile = path
	return nil
}
