package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// wptFyiBrowsers are the browser names wpt.fyi knows, from wpt.fyi's
// shared/browsers.go (defaultBrowsers and extraBrowsers): a run's product must be
// one of them (IsBrowserName) for the dashboard to list it.
var wptFyiBrowsers = map[string]bool{
	"chrome": true, "edge": true, "firefox": true, "safari": true,
	"android_webview": true, "chrome_android": true, "chrome_ios": true, "chromium": true, "deno": true,
	"epiphany": true, "firefox_android": true, "flow": true, "ladybird": true, "node.js": true, "servo": true,
	"uc": true, "wktr": true, "webkitgtk": true, "wpewebkit": true,
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// requireWptFyiAccepts checks b against what wpt.fyi's results processor requires
// of a report, transcribed from results-processor/wptreport.py (WPTReport.load_json,
// summarize, write_result_directory, sha_product_path, test_run_metadata): a
// "results" list; each result's "test" a path starting with "/" and appearing once
// (else ConflictingDataError), its "status" and each subtest's "status" present;
// run_info's "product", "browser_version", "os" and "revision" present (else
// MissingMetadataError), the revision a full commit (its first 10 characters name the
// run), and the product a browser name wpt.fyi knows (shared/browsers.go).
func requireWptFyiAccepts(t *testing.T, b []byte) {
	t.Helper()
	var r struct {
		RunInfo map[string]any   `json:"run_info"`
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotNil(t, r.Results, "results")
	for _, k := range []string{"product", "browser_version", "os", "revision"} {
		v, ok := r.RunInfo[k].(string)
		require.True(t, ok && v != "", "run_info.%s: %v", k, r.RunInfo[k])
	}
	require.True(t, wptFyiBrowsers[r.RunInfo["product"].(string)], "product %v is not a browser wpt.fyi knows", r.RunInfo["product"])
	require.Regexp(t, fullCommit, r.RunInfo["revision"])
	seen := map[string]bool{}
	for _, res := range r.Results {
		test, ok := res["test"].(string)
		require.True(t, ok && strings.HasPrefix(test, "/"), "test: %v", res)
		require.False(t, seen[test], "test %s twice", test)
		seen[test] = true
		_, ok = res["status"].(string)
		require.True(t, ok, "status: %v", res)
		subs, ok := res["subtests"].([]any)
		require.True(t, ok, "subtests: %v", res)
		for _, s := range subs {
			_, ok := s.(map[string]any)["status"].(string)
			require.True(t, ok, "subtest status: %v", s)
		}
	}
}

// Every engine's product is a browser name wpt.fyi knows.
func TestProductsAreWptFyiBrowserNames(t *testing.T) {
	for _, e := range []string{"chromium", "firefox", "webkit"} {
		require.True(t, wptFyiBrowsers[productName(e)], "%s: product %s", e, productName(e))
	}
}
