package candidate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser/environment"

	"github.com/layout-oracle/oracle/dump"
)

// pinnedKeys are the variables of the browsers' pinned environment
// (environment.Settings) that a candidate gets too: the oracle's own
// fontconfig file, the locale and the time zone. The GTK and Firefox ones are
// the browsers' business.
var pinnedKeys = []string{"FONTCONFIG_FILE", "LC_ALL", "LANGUAGE", "TZ"}

// Pinned is the environment a candidate runs in so that a font, locale or time
// zone it did not choose is not charged to it (docs/triage.md, "The pinned
// environment"): the variables the browsers get (FONTCONFIG_FILE names the
// oracle's fontconfig file, which accepts only the pinned faces and aliases every
// generic family to its face; LC_ALL, LANG, an empty LANGUAGE, TZ), plus what the
// browsers get as settings a candidate cannot read from fontconfig, for its
// adapter to apply: LAYOUT_ORACLE_FONT_{SERIF,SANS_SERIF,MONOSPACE,CURSIVE,
// FANTASY,SYSTEM_UI,STANDARD} (faces), LAYOUT_ORACLE_FONT_SIZE and
// LAYOUT_ORACLE_MONOSPACE_SIZE (CSS px), LAYOUT_ORACLE_VIEWPORT (WxH CSS px) and
// LAYOUT_ORACLE_ENVIRONMENT (the pinned environment's version, as ping reports it).
// It writes the fontconfig file when this process has not yet.
func Pinned() ([]string, error) {
	s, err := environment.Settings()
	if err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(pinnedKeys, k) {
			env = append(env, kv)
		}
	}
	if lc := lookup(env, "LC_ALL"); lc != "" {
		env = append(env, "LANG="+lc)
	}
	return append(env,
		"LAYOUT_ORACLE_FONT_SERIF="+environment.FaceSerif,
		"LAYOUT_ORACLE_FONT_SANS_SERIF="+environment.FaceSansSerif,
		"LAYOUT_ORACLE_FONT_MONOSPACE="+environment.FaceMonospace,
		"LAYOUT_ORACLE_FONT_CURSIVE="+environment.FaceCursive,
		"LAYOUT_ORACLE_FONT_FANTASY="+environment.FaceFantasy,
		"LAYOUT_ORACLE_FONT_SYSTEM_UI="+environment.FaceSystemUI,
		"LAYOUT_ORACLE_FONT_STANDARD="+environment.FaceStandard,
		"LAYOUT_ORACLE_FONT_SIZE="+strconv.Itoa(environment.DefaultFontSize),
		"LAYOUT_ORACLE_MONOSPACE_SIZE="+strconv.Itoa(environment.DefaultMonospaceSize),
		fmt.Sprintf("LAYOUT_ORACLE_VIEWPORT=%gx%g", dump.Viewport.Width, dump.Viewport.Height),
		"LAYOUT_ORACLE_ENVIRONMENT="+environment.Name(),
	), nil
}

func lookup(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Exports is env as POSIX shell export lines, each value single-quoted.
func Exports(env []string) string {
	var b strings.Builder
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
	}
	return b.String()
}
