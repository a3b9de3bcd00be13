package browser

import (
	"testing"

	"github.com/layout-oracle/oracle/oracle/browser/host"
	"github.com/stretchr/testify/assert"
)

// Each engine's content processes and sandbox expectations (engine_*.go), on
// made-up process records: a unit test, no browser runs.
func TestEngineSandboxKnowledge(t *testing.T) {
	main := host.ProcInfo{UserNS: "u1", PidNS: "p1", NetNS: "n1"}
	own := host.ProcInfo{UserNS: "u2", PidNS: "p2", NetNS: "n2"}
	shared := main

	assert.True(t, contentProcess(Chromium, host.ProcInfo{Args: []string{"--type=renderer"}}))
	assert.False(t, contentProcess(Chromium, host.ProcInfo{Args: []string{"--type=gpu-process"}}))
	assert.True(t, contentProcess(Firefox, host.ProcInfo{Args: []string{"-contentproc", "-isForBrowser"}}))
	assert.False(t, contentProcess(Firefox, host.ProcInfo{Args: []string{"-contentproc"}}), "a utility process")
	assert.True(t, contentProcess(WebKit, host.ProcInfo{Cmdline0: "WebKitWebProcess"}))
	assert.False(t, contentProcess("lynx", host.ProcInfo{Cmdline0: "WebKitWebProcess"}), "an unknown engine has none")

	for _, engine := range []string{Chromium, WebKit} {
		kind, why := knowledgeOf(engine).sandbox(own, main)
		assert.NotEmpty(t, kind, engine)
		assert.Empty(t, why, engine)
		_, why = knowledgeOf(engine).sandbox(shared, main)
		assert.NotEmpty(t, why, "%s: a content process in the browser's namespaces", engine)
	}
	kind, why := knowledgeOf(Firefox).sandbox(own, main)
	assert.Equal(t, "content sandbox: seccomp-bpf + own user namespace + own network namespace", kind)
	assert.Empty(t, why)
	kind, why = knowledgeOf(Firefox).sandbox(shared, main)
	assert.Equal(t, "content sandbox: seccomp-bpf", kind, "Firefox's sandbox is its seccomp filter")
	assert.Empty(t, why)
}

// An engine's error is prefixed with its name in one place (EngineError), and
// errors.Is and errors.As see through the prefix.
func TestEngineErrorPrefix(t *testing.T) {
	err := EngineErrorf(Firefox, "relaunch failed: %w", ErrVersionChanged)
	assert.Equal(t, "firefox: relaunch failed: browser version changed", err.Error())
	assert.ErrorIs(t, err, ErrVersionChanged)
	var ee *engineError
	if assert.ErrorAs(t, err, &ee) {
		assert.Equal(t, Firefox, ee.Engine)
	}
}
