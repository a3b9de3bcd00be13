package environment

import "strings"

// firefoxLangGroups are Firefox's font language groups: a page's lang (or its
// characters) chooses one, and each has its own default faces and sizes.
var firefoxLangGroups = []string{"x-western", "x-unicode", "x-cyrillic", "el", "he", "ar", "th",
	"ja", "ko", "zh-CN", "zh-HK", "zh-TW", "x-armn", "x-beng", "x-cans", "x-devanagari", "x-ethi",
	"x-geor", "x-gujr", "x-guru", "x-khmr", "x-knda", "x-math", "x-mlym", "x-orya", "x-sinh",
	"x-tamil", "x-telu", "x-tibt"}

// firefoxEnvironmentPrefs is what Firefox is given of firefoxPinnedPrefs: those
// that differ from its own defaults (firefoxDefaults), so that the launch options fit
// a stock Playwright server's 16 KiB header limit (docs/remote.md).
func firefoxEnvironmentPrefs() map[string]any {
	p := firefoxPinnedPrefs()
	defaults := firefoxDefaults()
	for k, v := range p {
		if d, ok := defaults[k]; ok && d == v || redundantFontName(p, defaults, k) {
			delete(p, k)
		}
	}
	return p
}

// redundantFontName: font.name.GENERIC.GROUP names the face its font.name-list does,
// and Firefox's own font.name is "": the list alone gives the same families.
func redundantFontName(p, defaults map[string]any, k string) bool {
	rest, ok := strings.CutPrefix(k, "font.name.")
	return ok && defaults[k] == "" && p[k] == p["font.name-list."+rest]
}

// firefoxDefaults are Firefox ESR's own values (greprefs.js in its omni.ja, GTK
// build) of the per-language-group prefs firefoxPinnedPrefs sets; the test
// TestFirefoxDefaultsAreFirefoxs reads them back from the installed Firefox.
// font.name.GENERIC.GROUP is "" in every group: font.name-list alone then names the
// face, as it did after the same face in font.name.
func firefoxDefaults() map[string]any {
	d := map[string]any{}
	for _, g := range firefoxLangGroups {
		for _, generic := range []string{"serif", "sans-serif", "monospace", "cursive", "fantasy"} {
			d["font.name."+generic+"."+g] = ""
		}
		d["font.default."+g] = "serif"
		d["font.size.variable."+g] = 16
		d["font.size.monospace."+g] = 13
		d["font.minimum-size."+g] = 0
	}
	for _, g := range []string{"ar", "he", "th", "ja", "ko", "zh-CN", "zh-HK", "zh-TW"} {
		d["font.default."+g] = "sans-serif"
	}
	for _, g := range []string{"x-western", "x-unicode", "x-cyrillic", "el", "he", "ar"} {
		d["font.size.monospace."+g] = 12
	}
	for _, g := range []string{"ja", "ko", "zh-CN", "zh-HK", "zh-TW"} {
		d["font.size.monospace."+g] = 16
	}
	d["font.minimum-size.th"] = 13
	return d
}

// firefoxPinnedPrefs pins Firefox: faces and sizes per language group, overlay
// scrollbars (no layout width), the media features headless Firefox otherwise
// answers differently (no hover, no fine pointer), and no print preview.
func firefoxPinnedPrefs() map[string]any {
	p := map[string]any{
		// Pointer capability bit flags: 2 fine, 4 hover (a mouse, as the others report).
		"ui.primaryPointerCapabilities": 6,
		"ui.allPointerCapabilities":     6,
		// Overlay scrollbars take no layout space, as in Chromium headless and WebKitGTK.
		"ui.useOverlayScrollbars":                                 1,
		"widget.gtk.overlay-scrollbars.enabled":                   true,
		"layout.css.prefers-color-scheme.content-override":        1, // light
		"ui.systemUsesDarkTheme":                                  0,
		"ui.prefersReducedMotion":                                 0,
		"ui.useAccessibilityTheme":                                0,
		"browser.display.document_color_use":                      0, // forced-colors: none
		"browser.display.use_system_colors":                       false,
		"layout.css.devPixelsPerPx":                               "1.0",
		"gfx.font_rendering.fontconfig.max_generic_substitutions": 3,
		// window.print() returns at once, as in headless Chromium and WebKitGTK; Firefox
		// otherwise opens its print preview, which holds the case until its deadline.
		"print.enabled": false,
	}
	faces := map[string]string{"serif": FaceSerif, "sans-serif": FaceSansSerif, "monospace": FaceMonospace,
		"cursive": FaceCursive, "fantasy": FaceFantasy}
	for _, g := range firefoxLangGroups {
		for generic, face := range faces {
			p["font.name."+generic+"."+g] = face
			p["font.name-list."+generic+"."+g] = face
		}
		p["font.default."+g] = "serif"
		p["font.size.variable."+g] = DefaultFontSize
		p["font.size.monospace."+g] = DefaultMonospaceSize
		p["font.minimum-size."+g] = 0
	}
	return p
}

// webkitFontArgs are the pinned environment's generic faces for WebKitGTK's
// MiniBrowser.
func webkitFontArgs() []string {
	return []string{
		"--default-font-family=" + FaceStandard,
		"--serif-font-family=" + FaceSerif,
		"--sans-serif-font-family=" + FaceSansSerif,
		"--monospace-font-family=" + FaceMonospace,
		"--cursive-font-family=" + FaceCursive,
		"--fantasy-font-family=" + FaceFantasy,
	}
}
