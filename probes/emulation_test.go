package probes

import (
	"encoding/json"
	"testing"

	"github.com/layout-oracle/oracle/trace"
	"github.com/stretchr/testify/assert"
)

// emulationTrace is a trace built by hand (no engine): what an engine listing
// emulated recorded.
func emulationTrace(emulated []string, records ...trace.Record) *trace.Trace {
	return &trace.Trace{Engine: "chromium", Emulated: emulated, Records: records}
}

func arrayValue(v ...any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"$shape": "array", "length": len(v), "elements": v})
	return b
}

// The emulation checks fault an engine that lists an emulation and reads other
// values (the self-check then takes it out of service), and leave alone one that
// does not list it, whatever its platform answers.
func TestEmulationChecksFaultOnlyClaimingEngines(t *testing.T) {
	exposed := trace.Record{Kind: "value", Label: "exposed", Value: arrayValue("Accelerometer")}
	reading := func(v ...any) trace.Record {
		return trace.Record{Kind: "settle", Label: "Accelerometer", State: "fulfilled", Value: arrayValue(v...)}
	}
	assert.Empty(t, expectSensors("chromium", emulationTrace([]string{"sensors"}, exposed, reading(1, 2, 9))))
	assert.NotEmpty(t, expectSensors("chromium", emulationTrace([]string{"sensors"}, exposed, reading(1, 2, 8))), "a wrong reading")
	assert.NotEmpty(t, expectSensors("chromium", emulationTrace([]string{"sensors"},
		trace.Record{Kind: "value", Label: "exposed", Value: arrayValue()})), "claims sensors, exposes none")
	assert.Empty(t, expectSensors("firefox", emulationTrace(nil, exposed, reading(0, 0, 0))), "not claimed: not checked")

	granted := trace.Record{Kind: "value", Label: "permission", Value: json.RawMessage(`"granted"`)}
	position := func(v ...any) trace.Record {
		return trace.Record{Kind: "settle", Label: "position", State: "fulfilled", Value: arrayValue(v...)}
	}
	assert.Empty(t, expectGeolocation("firefox", emulationTrace([]string{"geolocation"}, granted, position(48.8584, 2.2945, 10))))
	assert.NotEmpty(t, expectGeolocation("firefox", emulationTrace([]string{"geolocation"}, granted, position(0, 0, 10))))
	assert.NotEmpty(t, expectGeolocation("firefox", emulationTrace([]string{"geolocation"},
		trace.Record{Kind: "value", Label: "permission", Value: json.RawMessage(`"prompt"`)})))
	assert.Empty(t, expectGeolocation("webkit", emulationTrace(nil,
		trace.Record{Kind: "value", Label: "permission", Value: json.RawMessage(`"prompt"`)})))

	rejected := trace.Record{Kind: "settle", Label: "create", State: "rejected", Value: json.RawMessage(`{"$error":true,"name":"NotAllowedError"}`)}
	assert.NotEmpty(t, expectAuthenticator("chromium", emulationTrace([]string{"authenticator"}, rejected)))
	assert.Empty(t, expectAuthenticator("firefox", emulationTrace([]string{"geolocation"}, rejected)))
}
