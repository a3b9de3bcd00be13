package profiles

// The emulations a launch profile can ask of the engines (docs/profiles.md has the
// table of which engine's route applies which). A trace names the ones its engine
// applied in "emulated", by these names.
const (
	EmulateSensors       = "sensors"
	EmulateAuthenticator = "authenticator"
	EmulateGeolocation   = "geolocation"
)

// Emulation is the fixed hardware a profile emulates: every engine that can take a
// value gets exactly this one, so engines that apply the same set can be voted.
type Emulation struct {
	// Sensors are virtual sensors with fixed readings, by the Generic Sensor type
	// names CDP's Emulation.setSensorOverrideReadings takes.
	Sensors []SensorReading
	// Geolocation is the fixed position, with the permission granted.
	Geolocation geolocation
	// Authenticator is the virtual WebAuthn authenticator (WebDriver's "Add Virtual
	// Authenticator" parameters, which CDP's WebAuthn.addVirtualAuthenticator shares).
	Authenticator authenticator
}

// SensorReading is one virtual sensor's fixed reading: XYZ for the motion sensors,
// Quaternion (x, y, z, w) for the orientation sensors, Single for ambient light.
type SensorReading struct {
	Type       string
	XYZ        *[3]float64
	Quaternion *[4]float64
	Single     *float64
}

// geolocation is a fixed position in degrees, accuracy in meters.
type geolocation struct {
	Latitude, Longitude, Accuracy float64
}

// authenticator is a virtual authenticator's options.
type authenticator struct {
	Protocol, Transport string
	// ResidentKey and UserVerification are what it supports; UserVerified, that
	// every verification succeeds (no user to ask).
	ResidentKey, UserVerification, UserVerified bool
}

// Integers and identity quaternions: Chromium rounds sensor readings (to limit
// fingerprinting), and these survive the rounding unchanged.
var (
	accelerometer = [3]float64{1, 2, 9}
	gravity       = [3]float64{0, 0, 9}
	identity      = [4]float64{0, 0, 0, 1}
	illuminance   = 100.0
)

// FixedEmulation is the emulation profile's values.
var FixedEmulation = Emulation{
	Sensors: []SensorReading{
		{Type: "accelerometer", XYZ: &accelerometer},
		{Type: "linear-acceleration", XYZ: &[3]float64{accelerometer[0] - gravity[0], accelerometer[1] - gravity[1], accelerometer[2] - gravity[2]}},
		{Type: "gravity", XYZ: &gravity},
		{Type: "gyroscope", XYZ: &[3]float64{1, 2, 3}},
		{Type: "magnetometer", XYZ: &[3]float64{10, 20, 30}},
		{Type: "absolute-orientation", Quaternion: &identity},
		{Type: "relative-orientation", Quaternion: &identity},
		{Type: "ambient-light", Single: &illuminance},
	},
	// The Eiffel Tower, 10 m.
	Geolocation:   geolocation{Latitude: 48.8584, Longitude: 2.2945, Accuracy: 10},
	Authenticator: authenticator{Protocol: "ctap2", Transport: "internal", ResidentKey: true, UserVerification: true, UserVerified: true},
}

// Sensor is the named sensor's fixed reading (nil: not emulated).
func (em *Emulation) Sensor(typ string) *SensorReading {
	for i := range em.Sensors {
		if em.Sensors[i].Type == typ {
			return &em.Sensors[i]
		}
	}
	return nil
}
