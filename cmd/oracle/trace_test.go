package main

// Trace requests through the oracle binary, against the real three engines.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceAll runs a trace request on c and returns each engine's trace, requiring all three.
func traceAll(t *testing.T, c *client, html, script string) map[string]map[string]any {
	t.Helper()
	req := map[string]any{"op": "trace", "script": script}
	if html != "" {
		req["html"] = html
	}
	resp := c.send(t, req)
	require.Nil(t, resp["errors"])
	out := map[string]map[string]any{}
	for e, tr := range resp["traces"].(map[string]any) {
		out[e] = tr.(map[string]any)
	}
	require.Len(t, out, 3)
	return out
}

func records(tr map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range tr["records"].([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func TestTraceOnTheOraclesLocalhostOrigin(t *testing.T) {
	c := shared.get(t)
	for e, tr := range traceAll(t, c, `<script>trace.value('inline sees trace', typeof window.trace.value);</script>`,
		`trace.value('n', -0); trace.done();`) {
		assert.Equal(t, e, tr["engine"])
		assert.NotEmpty(t, tr["engine_version"])
		assert.Equal(t, "default", tr["profile"], e)
		assert.Equal(t, true, tr["is_secure_context"], e)
		assert.Regexp(t, `^http://localhost:\d+$`, tr["origin"], e)
		assert.Equal(t, false, tr["timed_out"], e)
		assert.Equal(t, []map[string]any{
			{"seq": 0.0, "kind": "value", "label": "inline sees trace", "value": "function"},
			{"seq": 1.0, "kind": "value", "label": "n", "value": map[string]any{"$num": "-0"}},
		}, records(tr), e)
	}
}

func TestTraceWithoutDoneTimesOut(t *testing.T) {
	for e, tr := range traceAll(t, shared.get(t), "", `trace.value('started', true);`) {
		assert.Equal(t, true, tr["timed_out"], e)
		assert.Len(t, records(tr), 1, e)
	}
}

func TestTraceStorageDoesNotReachTheNextTrace(t *testing.T) {
	c := shared.get(t)
	traceAll(t, c, "", `localStorage.setItem('k', 'v'); sessionStorage.setItem('s', 'v'); trace.done();`)
	for e, tr := range traceAll(t, c, "", `trace.value('k', localStorage.getItem('k')); trace.value('s', sessionStorage.getItem('s')); trace.done();`) {
		rs := records(tr)
		require.Len(t, rs, 2, e)
		assert.Nil(t, rs[0]["value"], "%s: localStorage leaked", e)
		assert.Nil(t, rs[1]["value"], "%s: sessionStorage leaked", e)
	}
	// And a geometry page after a trace has no recorder and no trace origin.
	resp := c.send(t, map[string]any{"html": "<p>", "script": "if (window.trace || location.protocol !== 'about:') throw new Error('trace page leaked into geometry')"})
	assert.Nil(t, resp["errors"])
}

func TestTraceThatNeverYieldsIsAnsweredAndServingGoesOn(t *testing.T) {
	c := startOracle(t, "--pages=1", "--deadline=8s", "--log-level=warn")
	defer c.close()
	resp := c.send(t, map[string]any{"op": "trace", "script": "while (true) {}"})
	errs, _ := resp["errors"].(map[string]any)
	require.Len(t, errs, 3, "every engine answers the stuck trace with an error")
	for e, msg := range errs {
		assert.Contains(t, msg, "timed out", e)
	}
	var ok bool
	for try := 0; try < 6 && !ok; try++ {
		r := c.send(t, map[string]any{"op": "trace", "script": "trace.value('x', 1); trace.done();"})
		ok = r["errors"] == nil && len(r["traces"].(map[string]any)) == 3
	}
	assert.True(t, ok, "traces are answered again after a stuck one")
}

func TestMediaProfileGivesFakeCameraAndMicrophone(t *testing.T) {
	c := startOracle(t, "--pages=1", "--profile=media", "--log-level=warn")
	defer c.close()
	assert.Equal(t, "media", c.send(t, map[string]any{"op": "ping"})["profile"])
	script := `navigator.mediaDevices.getUserMedia({video: true, audio: true}).then(s => {
		const v = s.getVideoTracks()[0].getSettings();
		trace.value('video', [v.width, v.height]);
		trace.value('audio tracks', s.getAudioTracks().length);
		trace.done();
	}, e => { trace.error('gum', e); trace.done(); });`
	for e, tr := range traceAll(t, c, "", script) {
		assert.Equal(t, "media", tr["profile"], e)
		rs := records(tr)
		require.Len(t, rs, 2, "%s: %v", e, rs)
		assert.Equal(t, "value", rs[0]["kind"], "%s: getUserMedia resolves", e)
		assert.Equal(t, 1.0, rs[1]["value"], e)
		t.Logf("%s fake camera settings: %v", e, rs[0]["value"])
	}
}
