// Package environment is the pinned environment every engine is launched in: the
// faces behind each generic family and the default sizes, the scrollbar geometry, the
// media-feature answers and the locale, as fontconfig and GTK files, environment
// variables, Firefox prefs and WebKitGTK's MiniBrowser arguments (docs/environment.md).
package environment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// Version names the pinned environment below: the faces behind each generic
// family, the default sizes, the scrollbar geometry and the media-feature answers every
// engine is launched with. Anything that caches answers keys on it; bump it whenever a
// change here can change a dump. Ping reports it as "pinned-" + Version.
const Version = "2"

// The probe that checks every engine against this pin, at startup and in cmd/probe,
// is probes.selfCheckEnvironment (probes/environment.go).

// Name is the ping value of the pinned environment.
func Name() string { return "pinned-" + Version }

// The faces of the pinned generic families, all from scripts/setup.sh's
// fonts-dejavu-core and fonts-liberation2. Serif, sans-serif and monospace are the
// Liberation faces, metric-compatible with Times New Roman, Arial and Courier New,
// which web content is written against, and whose line-height: normal agrees in all
// three engines at more sizes than DejaVu's (docs/environment.md). No cursive or fantasy face is installed, so
// those get other installed faces (a face other than the standard one makes a generic
// that escaped the pinning visible in a width). system-ui is sans-serif's face:
// headless Firefox answers system-ui with its sans-serif font whatever is pinned.
const (
	FaceSerif     = "Liberation Serif"
	FaceSansSerif = "Liberation Sans"
	FaceMonospace = "Liberation Mono"
	FaceCursive   = "DejaVu Serif"
	FaceFantasy   = "DejaVu Sans"
	FaceSystemUI  = "Liberation Sans"
	// FaceStandard is the face of text with no font-family, and of unknown families.
	FaceStandard = FaceSerif
)

// Pinned default sizes, in CSS px: the three engines' own defaults, now set
// explicitly where an engine differs (Firefox's monospace is 12px by default).
const (
	DefaultFontSize      = 16
	DefaultMonospaceSize = 13
)

// pinnedFaces are the only font families the browsers may use: every other installed
// face is rejected, so a machine with more fonts (Playwright's route elsewhere) falls
// back to the same faces as this one. The first is also fontconfig's answer to a
// query that names no family, which is what headless Chromium resolves system-ui with
// (observed: its system-ui follows this face).
var pinnedFaces = []string{FaceSystemUI, "Liberation Serif", "Liberation Mono",
	"DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono"}

// genericAliases maps every family name an engine asks fontconfig for when it
// resolves a generic (CSS generics, fontconfig's own, and Chromium's built-in
// defaults Times New Roman, Arial, Monospace, Comic Sans MS, Impact) to its face,
// then the rest of the pinned faces as glyph fallback in a fixed order.
var genericAliases = []struct {
	face  string
	names []string
}{
	{FaceSerif, []string{"serif", "Times New Roman", "Times", "ui-serif"}},
	{FaceSansSerif, []string{"sans-serif", "sans", "Arial", "Helvetica", "ui-sans-serif"}},
	{FaceMonospace, []string{"monospace", "mono", "Monospace", "Courier New", "Courier", "ui-monospace"}},
	{FaceCursive, []string{"cursive", "Comic Sans MS"}},
	{FaceFantasy, []string{"fantasy", "Impact"}},
	{FaceSystemUI, []string{"system-ui", "-apple-system", "BlinkMacSystemFont"}},
}

// fontconfigXML is the oracle's own fontconfig configuration: the system font
// directories, the pinned faces only, the generic aliases, and one set of render
// settings (unhinted) for every engine that reads them. WebKitGTK rounds glyph
// advances to whole pixels whatever they say: a documented platform difference.
func fontconfigXML() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<!-- Written by the layout oracle (pinned environment ` + Version + `); used by its browsers only. -->
<fontconfig>
  <dir>/usr/share/fonts</dir>
  <dir>/usr/local/share/fonts</dir>
  <cachedir>/var/cache/fontconfig</cachedir>
  <cachedir prefix="xdg">fontconfig</cachedir>
  <selectfont>
    <acceptfont>
`)
	for _, f := range pinnedFaces {
		fmt.Fprintf(&b, "      <pattern><patelt name=\"family\"><string>%s</string></patelt></pattern>\n", f)
	}
	b.WriteString(`    </acceptfont>
    <rejectfont><pattern></pattern></rejectfont>
  </selectfont>
`)
	for _, a := range genericAliases {
		for _, n := range a.names {
			fmt.Fprintf(&b, "  <match target=\"pattern\"><test name=\"family\"><string>%s</string></test>\n", n)
			fmt.Fprintf(&b, "    <edit name=\"family\" mode=\"assign\" binding=\"strong\"><string>%s</string></edit></match>\n", a.face)
		}
	}
	// Glyph fallback after the requested face: the same order in every engine.
	b.WriteString("  <match target=\"pattern\">\n    <edit name=\"family\" mode=\"append_last\" binding=\"weak\">")
	for _, f := range pinnedFaces {
		fmt.Fprintf(&b, "<string>%s</string>", f)
	}
	b.WriteString(`</edit>
  </match>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>false</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintnone</const></edit>
    <edit name="autohint" mode="assign"><bool>false</bool></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
    <edit name="embeddedbitmap" mode="assign"><bool>false</bool></edit>
  </match>
</fontconfig>
`)
	return b.String()
}

// gtkSettingsINI pins what GTK (WebKitGTK, and Firefox's widget layer) reads from
// the desktop: a light, animated, non-high-contrast theme, overlay scrollbars, the
// system-ui face, and the same unhinted rendering as the fontconfig file.
func gtkSettingsINI() string {
	return `[Settings]
gtk-theme-name=Adwaita
gtk-application-prefer-dark-theme=0
gtk-enable-animations=1
gtk-overlay-scrolling=1
gtk-font-name=` + FaceSystemUI + ` 10
gtk-xft-antialias=1
gtk-xft-hinting=0
gtk-xft-hintstyle=hintnone
gtk-xft-rgba=none
gtk-xft-dpi=98304
gtk-primary-button-warps-slider=0
`
}

// userDirs is the XDG user-dirs file of WebKitGTK's config home (this directory's
// xdg/, on the local route). MiniBrowser sets no download destination, so WebKitGTK saves
// a case's download into the XDG download directory, or the browser user's home
// without one (seen: a case chose the name, 64 MB in 3 s, shared by every oracle
// on the machine and outliving them). A directory under /dev/null can exist for no
// user, root included: every download fails at once, before a byte is written. Not
// part of Key: it changes no answer.
const userDirs = "XDG_DOWNLOAD_DIR=\"/dev/null/layout-oracle-refuses-downloads\"\n"

// environmentFiles writes the fontconfig file and GTK settings once per process, in a
// directory named after their content (so a rerun reuses it and nothing accumulates),
// and returns the fontconfig file and the XDG config home.
var environmentFiles = sync.OnceValues(func() ([2]string, error) {
	fc, gtk := fontconfigXML(), gtkSettingsINI()
	sum := sha256.Sum256([]byte(fc + "\x00" + gtk))
	// The browsers read these files as the browser user (host/user.go): a root oracle
	// gives them to that user's group, read-only; nobody else may read or replace them.
	// That group is in the name: an oracle without it must not rewrite them as its own.
	name := fmt.Sprintf("layout-oracle-env-%d-%s", os.Getuid(), hex.EncodeToString(sum[:6]))
	dirMode, fileMode, gid := os.FileMode(0o700), os.FileMode(0o600), -1
	if u := host.BrowserUser(); u.Drop {
		dirMode, fileMode, gid = 0o750, 0o640, int(u.GID)
		name = fmt.Sprintf("layout-oracle-env-%d-g%d-%s", os.Getuid(), u.GID, hex.EncodeToString(sum[:6]))
	}
	dir := filepath.Join(os.TempDir(), name)
	for _, d := range []string{dir, filepath.Join(dir, "xdg"), filepath.Join(dir, "xdg", "fontconfig"),
		filepath.Join(dir, "xdg", "gtk-3.0"), filepath.Join(dir, "xdg", "gtk-4.0")} {
		if err := host.OwnedDir(d, dirMode, gid); err != nil {
			return [2]string{}, err
		}
	}
	for _, f := range []struct{ path, body string }{
		// Under the config home's fontconfig/: WebKitGTK's bubblewrap sandbox binds
		// that directory into the web process, and nothing else of ours.
		{filepath.Join(dir, "xdg", "fontconfig", "fonts.conf"), fc},
		{filepath.Join(dir, "xdg", "gtk-3.0", "settings.ini"), gtk},
		{filepath.Join(dir, "xdg", "gtk-4.0", "settings.ini"), gtk},
		{filepath.Join(dir, "xdg", "user-dirs.dirs"), userDirs},
	} {
		// Write beside and rename, so a browser of a concurrent oracle never reads half a file.
		tmp, err := os.CreateTemp(filepath.Dir(f.path), ".tmp-*")
		if err != nil {
			return [2]string{}, err
		}
		_, err = tmp.WriteString(f.body)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), fileMode)
		}
		if err == nil && gid >= 0 {
			err = os.Chown(tmp.Name(), -1, gid)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), f.path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return [2]string{}, err
		}
	}
	return [2]string{filepath.Join(dir, "xdg", "fontconfig", "fonts.conf"), filepath.Join(dir, "xdg")}, nil
})

// pinnedEnv is the locale, time zone and screen every browser gets, whatever the
// oracle's own environment holds: WebKitGTK took its language from the locale
// variables (under C.UTF-8, navigator.language "C" and numbers formatted with no
// grouping, where Chromium and Firefox said en-US), every engine took the host's TZ
// (a date in a case's text), and headless Firefox sizes its screen from
// MOZ_HEADLESS_WIDTH/HEIGHT (1366x768 otherwise). LANGUAGE is emptied: GLib reads it
// before LC_ALL. The locale need not be installed.
var pinnedEnv = []string{"LC_ALL=en_US.UTF-8", "LANGUAGE=", "TZ=UTC",
	"MOZ_HEADLESS_WIDTH=" + strconv.Itoa(host.ScreenWidth), "MOZ_HEADLESS_HEIGHT=" + strconv.Itoa(host.ScreenHeight)}

// Settings is the pinned environment's share of every engine's launch.
// The files go to the browsers' environment only (Env), never the oracle's own.
func Settings() (browser.LaunchSettings, error) {
	files, err := environmentFiles()
	if err != nil {
		return browser.LaunchSettings{}, fmt.Errorf("pinned environment: %w", err)
	}
	xdg := []string{"XDG_CONFIG_HOME=" + files[1]}
	var webkit []string
	if u := host.BrowserUser(); u.Drop {
		// The browser user cannot write the oracle's directory, and Firefox does not
		// start without a writable XDG_CONFIG_HOME: GTK reads the pinned settings.ini
		// from XDG_CONFIG_DIRS instead, and the browsers write their own config home.
		// WebKitGTK keeps ours as its config home (it writes none), because its
		// bubblewrap sandbox shows the web process only the config home's fontconfig/.
		xdg = []string{"XDG_CONFIG_DIRS=" + files[1] + ":/etc/xdg", "XDG_CONFIG_HOME=" + filepath.Join(u.Home, ".config")}
		webkit = []string{"XDG_CONFIG_HOME=" + files[1]}
	}
	return browser.LaunchSettings{
		Env: append(append(append([]string{"FONTCONFIG_FILE=" + files[0]}, xdg...),
			"GTK_THEME=Adwaita", "GTK_OVERLAY_SCROLLING=1", "GDK_SCALE=1", "GDK_DPI_SCALE=1"), pinnedEnv...),
		WebKitEnv:    webkit,
		FirefoxPrefs: firefoxEnvironmentPrefs(),
		// Chromium resolves generics through fontconfig (the aliases above); its default
		// sizes are already 16px / 13px and headless Playwright hides scrollbars.
		WebKitArgs: webkitFontArgs(),
	}, nil
}

// Key is the pinned environment's version plus a hash of the files and
// prefs it gives the browsers, so an edit that forgot to bump Version
// still misses (the store's key).
var Key = sync.OnceValue(func() string {
	h := sha256.New()
	// All the pinned prefs, not only those sent: leaving out Firefox's own defaults
	// changed no answer, so stored answers stay valid.
	prefs, _ := json.Marshal(firefoxPinnedPrefs()) // map keys sorted: canonical
	for _, s := range []string{fontconfigXML(), gtkSettingsINI(), string(prefs), strings.Join(pinnedEnv, "\n")} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return Name() + "/" + hex.EncodeToString(h.Sum(nil))[:16]
})
