package browser

import (
	"strings"
	"testing"
)

// A unit test of the embedded scripts' text (no browser): the .js files name the
// window properties the Go side uses, and Scripts, which the store's key hashes,
// holds every one of them.
func TestEmbeddedScriptsNameTheGoSidesProperties(t *testing.T) {
	if !strings.Contains(dialogPrelude, "window."+oracleNativesProp) {
		t.Errorf("webdriver_dialog.js does not use %s", oracleNativesProp)
	}
	if !strings.Contains(collectScript, "window."+oracleCallProp+";") {
		t.Errorf("webdriver_collect.js does not read %s", oracleCallProp)
	}
	if strings.HasSuffix(collectScript, "\n") || !strings.HasSuffix(dialogPrelude, "\n") || !strings.HasSuffix(repairPrelude, "\n") {
		t.Errorf("the preludes must end in a newline (they are concatenated) and the collect script must not")
	}
	all := strings.Join(Scripts(), "\x00")
	for name, s := range map[string]string{"case.js": caseJS, "webdriver_dialog.js": dialogPrelude,
		"webdriver_repair.js": repairPrelude, "webdriver_collect.js": collectScript, "freshCheckJS": freshCheckJS, "blankStateJS": blankStateJS, "replaceJS": replaceJS} {
		if !strings.Contains(all, s) {
			t.Errorf("Scripts() leaves out %s", name)
		}
	}
}
