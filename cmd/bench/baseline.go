package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/playwright"
	"github.com/layout-oracle/oracle/oracle/browser/webdriver"

	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/rs/zerolog"
)

// baselineResult is the naive browser-per-case way, on a sample of the cases.
type baselineResult struct {
	Wall    time.Duration              // all sample cases, one after another
	Cases   int                        // sample size
	Engine  map[string][]time.Duration // launch + load + walk + close, per engine per case
	PerCase []time.Duration            // all engines of one case (they run at once)
	Errors  int
	FirstEr string
}

// runBaseline is way (b): for each sample case, launch a fresh browser of every engine
// (the three at once, as a reasonable script would), load the case, run the same walk
// the oracle runs (oracle.Geometry), close the browser. The Playwright driver process
// is started once per engine, and WebKitGTK gets one Xvfb for the whole run (a naive
// script would run under one xvfb-run too): only the browsers are per case, which
// makes this baseline faster, not slower, than the most naive one.
func runBaseline(ctx context.Context, sample []benchCase, engines []string, log zerolog.Logger) (baselineResult, error) {
	res := baselineResult{Cases: len(sample), Engine: map[string][]time.Duration{}}
	// One Playwright driver per engine, started once: the engines' launches of a
	// case run in parallel, and a driver launches one browser at a time.
	drivers := map[string]*playwright.Driver{}
	var display, xauth string
	for _, e := range engines {
		if e != browser.WebKit {
			pw, err := playwright.Start(log)
			if err != nil {
				return res, err
			}
			defer pw.Stop()
			drivers[e] = pw
		}
		if e == browser.WebKit {
			x, err := host.StartXvfb(ctx, "", log)
			if err != nil {
				return res, fmt.Errorf("baseline xvfb: %w", err)
			}
			defer x.Close()
			display, xauth = x.Display, x.Authority
		}
	}
	start := time.Now()
	for _, c := range sample {
		t0 := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, name := range engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				err := browserPerCase(ctx, drivers[name], name, display, xauth, c, log)
				d := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				res.Engine[name] = append(res.Engine[name], d)
				if err != nil {
					res.Errors++
					if res.FirstEr == "" {
						res.FirstEr = fmt.Sprintf("%s %s: %v", c.ID, name, err)
					}
				}
			}()
		}
		wg.Wait()
		res.PerCase = append(res.PerCase, time.Since(t0))
	}
	res.Wall = time.Since(start)
	return res, nil
}

// browserPerCase launches one engine, answers one case, and closes the engine.
func browserPerCase(ctx context.Context, pw *playwright.Driver, name, display, xauth string, c benchCase, log zerolog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var e browser.Engine
	var err error
	if name == browser.WebKit {
		e, err = webdriver.Launch(ctx, webdriver.Options{Display: display, Env: []string{"XAUTHORITY=" + xauth}}, log)
	} else {
		_, bundled := pw.BundledPath(name) // the oracle's default route (--browsers=auto)
		e, err = pw.Launch(playwright.Options{Engine: name, Bundled: bundled}, log)
	}
	if err != nil {
		return err
	}
	defer e.Close()
	_, err = oracle.Geometry(ctx, e, c.HTML, c.Script)
	return err
}

// sampleCases is n cases spread evenly over cases (so every kind is represented).
func sampleCases(cases []benchCase, n int) []benchCase {
	if n >= len(cases) {
		return cases
	}
	out := make([]benchCase, n)
	for i := range out {
		out[i] = cases[i*len(cases)/n]
	}
	return out
}
