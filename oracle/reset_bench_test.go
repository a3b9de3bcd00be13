package oracle

// What an html case and the reset after it cost the machine, per engine: the CPU the
// engine's processes (browser, Playwright driver or WebKitWebDriver, Xvfb) used per
// op, not counting this test process. Three-engine throughput is CPU bound on two
// cores, so this, not latency, says what a faster case must cut:
//
//	go test -run '^$' -bench CaseCPU -benchtime 40x ./oracle/
//
// case+reset is one geometry case (Load, settle, walk) and the reset after it, as the
// pool runs them; reset is the reset alone (the driver's navigation to about:blank,
// closing other pages, the freshness check). The case's own cost is the difference.

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/routes"
	"github.com/rs/zerolog"
)

// engineCPU is the CPU seconds used so far by this process's descendants.
func engineCPU() float64 {
	total := 0.0
	for g, s := range proctree.CPU(os.Getpid()) {
		if g != "oracle" { // this test process
			total += s
		}
	}
	return total
}

func BenchmarkCaseCPU(b *testing.B) {
	testutil.NeedsBrowsers(b)
	const html = "<!doctype html><div style='width:100px;padding:3px'><p>hello <b>world</b></p><span>x</span></div>"
	for _, name := range browser.AllEngines {
		e, err := launchEngine(context.Background(), name, Config{Routes: routes.Table}, zerolog.Nop())
		if err != nil {
			b.Fatal(err)
		}
		ops := []struct {
			name string
			do   func(context.Context) error
		}{
			{"case+reset", func(ctx context.Context) error {
				if _, err := Geometry(ctx, e, html, ""); err != nil {
					return err
				}
				return e.Reset(ctx)
			}},
			{"reset", e.Reset},
		}
		for _, op := range ops {
			b.Run(name+"/"+op.name, func(b *testing.B) {
				cpu0 := engineCPU()
				for i := 0; i < b.N; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					err := op.do(ctx)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((engineCPU()-cpu0)*1000/float64(b.N), "cpu-ms/op")
			})
		}
		e.Close()
	}
}
