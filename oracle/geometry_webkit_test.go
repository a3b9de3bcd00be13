package oracle

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/webdriver"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// TestWebDriverGeometry is Geometry, the shared path the server calls, on the real
// WebKitGTK (the part of webdriver.TestWebDriverWalk that needs package oracle).
func TestWebDriverGeometry(t *testing.T) {
	testutil.NeedsBrowsers(t)
	if _, err := os.Stat(browser.SystemWebKitWebDriver); err != nil && os.Getenv("CI") == "" {
		t.Skipf("needs %s: %v", browser.SystemWebKitWebDriver, err)
	}
	lctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	e, err := webdriver.Launch(lctx, webdriver.Options{}, testLogger(t))
	if err != nil {
		t.Fatalf("launch WebKitGTK: %v", err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := Geometry(ctx, e, `<p style="height:33.3px;margin:0">x</p>`, "")
	if err != nil {
		t.Fatalf("Geometry: %v", err)
	}
	if err := g.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if p := g.Nodes[len(g.Nodes)-1]; p.Tag != "P" || p.Bounding.H != 33.296875 {
		t.Errorf("P = %+v, want height 33.296875 (1/64 px)", p)
	}
	if g.EngineVersion != e.Version() || g.Engine != browser.WebKit {
		t.Errorf("dump engine %q %q", g.Engine, g.EngineVersion)
	}
}
