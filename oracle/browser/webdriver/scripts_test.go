package webdriver

import (
	"strings"
	"testing"
)

// A unit test of the in-page scripts' text (no browser): the files under inpage/
// name the window properties the Go side uses, and the preludes that call.js
// concatenates end in a newline.
func TestEmbeddedScriptsNameTheGoSidesProperties(t *testing.T) {
	if !strings.Contains(dialogPrelude, "window."+oracleNativesProp) {
		t.Errorf("inpage/dialog.js does not use %s", oracleNativesProp)
	}
	if !strings.Contains(collectScript, "window."+oracleCallProp+";") {
		t.Errorf("inpage/collect.js does not read %s", oracleCallProp)
	}
	if !strings.Contains(callScriptFor("", false, false, false), "window, '"+oracleCallProp+"'") {
		t.Errorf("inpage/call.js does not set %s", oracleCallProp)
	}
	if strings.HasSuffix(collectScript, "\n") || !strings.HasSuffix(dialogPrelude, "\n") || !strings.HasSuffix(repairPrelude, "\n") ||
		!strings.HasSuffix(viewportPrelude, "\n") {
		t.Errorf("the preludes must end in a newline (they are concatenated) and the collect script must not")
	}
}
