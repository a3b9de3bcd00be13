package oracle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/layout-oracle/oracle/inpage"
	"github.com/layout-oracle/oracle/oracle/browser"
)

// caseResult is what WithCaseScript's wrapper returns, or inpage.InertCheck's.
type caseResult struct {
	Result      json.RawMessage `json:"result"`
	ScriptError string          `json:"scriptError"`
	Inert       *string         `json:"inert"`  // the inert check's finding; "" passed
	Unkept      string          `json:"unkept"` // why the window may not be kept, or ""
}

// inertCheckFailed is an inert case whose engine document failed the inert check
// (inpage/case.js): the engine built something the classifier did not allow, refused
// script or a load under the window's policy, or did not refuse the check's own
// handler; or a kept window did not start at the origin, or a new document in it
// differs from the window's first. Its answer is discarded: the pool
// measures the case again on a new document and keeps no window (fanout.go).
type inertCheckFailed struct{ why string }

func (e *inertCheckFailed) Error() string { return "the inert check failed: " + e.why }

// runInertCase is runCase for an inert case (no script): fn runs with args, then the
// case program checks the engine's document against allowed, the keys of the
// classifier's tree (inert.Judge).
func runInertCase(ctx context.Context, e browser.Engine, html string, allowed []string, fn string, args ...any) (json.RawMessage, error) {
	raw, err := e.Load(ctx, html, inpage.Fill(inpage.InertCheck, "FN", fn), append([]any{allowed}, args...)...)
	if err != nil {
		return nil, err
	}
	var res caseResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("walk returned malformed JSON: %v", err)
	}
	switch {
	case res.Inert == nil:
		return nil, &inertCheckFailed{"the page reported no inert check"}
	case *res.Inert != "":
		return nil, &inertCheckFailed{*res.Inert}
	}
	if res.Unkept != "" {
		unkeep(ctx, res.Unkept)
	}
	return res.Result, nil
}

// runCase loads html, runs the case's script, then fn with args, and returns fn's
// JSON result; a throwing script is a caseError.
func runCase(ctx context.Context, e browser.Engine, html, script, fn string, args ...any) (json.RawMessage, error) {
	return caseOutcome(e.Load(ctx, html, browser.WithCaseScript(fn), append([]any{script}, args...)...))
}

// runCaseURL is runCase on the document at url (LoadURL) instead of written html.
func runCaseURL(ctx context.Context, e browser.Engine, url, script, fn string, args ...any) (json.RawMessage, error) {
	return caseOutcome(e.LoadURL(ctx, url, browser.WithCaseScript(fn), append([]any{script}, args...)...))
}

// caseOutcome reads what WithCaseScript's wrapper returned: fn's result, or the
// case script's exception as a caseError.
func caseOutcome(raw json.RawMessage, err error) (json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	var res caseResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("walk returned malformed JSON: %v", err)
	}
	if res.ScriptError != "" {
		return nil, caseErrorf("script threw: %s", res.ScriptError)
	}
	return res.Result, nil
}
