package oracle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// caseResult is what WithCaseScript's wrapper returns.
type caseResult struct {
	Result      json.RawMessage `json:"result"`
	ScriptError string          `json:"scriptError"`
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
