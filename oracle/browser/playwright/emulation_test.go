package playwright

import (
	"context"
	"testing"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/internal/testutil"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Chromium page lists exactly the emulations that applied to it, against the real
// Chromium: with the profile's values all three; with a sensor type CDP refuses,
// sensors drop out and the rest stay. Under no emulation, nothing.
func TestChromiumEmulationListsOnlyWhatApplied(t *testing.T) {
	testutil.NeedsBrowsers(t)
	bad := profiles.FixedEmulation
	bad.Sensors = append(append([]profiles.SensorReading(nil), bad.Sensors...),
		profiles.SensorReading{Type: "no-such-sensor", XYZ: &[3]float64{1, 2, 3}})
	for _, c := range []struct {
		name string
		em   *profiles.Emulation
		want []string
	}{
		{"fixed", &profiles.FixedEmulation, []string{"authenticator", "geolocation", "sensors"}},
		{"a refused sensor", &bad, []string{"authenticator", "geolocation"}},
		{"none", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := testutil.Logger(t)
			d, err := Start(log)
			require.NoError(t, err)
			defer d.Stop()
			eng, err := d.Launch(Options{Engine: browser.Chromium, Emulation: c.em}, log)
			require.NoError(t, err)
			defer eng.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = eng.Load(ctx, "<p>x</p>", "function() { return 1; }")
			require.NoError(t, err)
			assert.Equal(t, c.want, browser.Emulated(eng))
			// A new page (the reset's, after a case left history entries) gets the same.
			require.NoError(t, eng.(*playwrightEngine).freshPage())
			_, err = eng.Load(ctx, "<p>x</p>", "function() { return 1; }")
			require.NoError(t, err)
			assert.Equal(t, c.want, browser.Emulated(eng), "on a new page")
		})
	}
}
