// Package buildprint fingerprints the files a local launch of an engine will run,
// without running it, so that the oracle knows an engine's build before its browser
// is up: the store records, per fingerprint, the build the last live launch on those
// files reported (docs/store.md, "Warm starts"). It knows nothing of the store or the
// oracle: package oracle looks the fingerprint up and records it.
package buildprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/layout-oracle/oracle/oracle/browser"
)

// Launch is what decides the build a local launch of one engine runs.
type Launch struct {
	Engine   string // browser.Chromium, browser.Firefox or browser.WebKit
	Browsers string // --browsers: browser.RouteSystem, browser.RoutePlaywright or browser.RouteAuto
	Exe      string // the binary override (--chromium-path, ...); "" for the system build
	// Route is the engine's route as the launch resolves it (--chromium-route,
	// --firefox-route: auto already decided), whose BuildFiles are fingerprinted.
	Route browser.Route
	// Bundler is the route table's Bundler, which decides, on the auto route, where
	// a bundled build is looked for; nil: none.
	Bundler browser.Bundler
}

// Of fingerprints what l runs, without running it: how the route and binary are
// chosen (--browsers, the binary override, the route, and for the auto route what
// decides where a bundled build would be), and the identity of every file the
// build's version comes from (the route's BuildFiles: path, resolved path, device,
// inode, size, mtime and ctime). ok is false where no sound fingerprint is known:
// bundled builds (--browsers=playwright), no route, a binary that is not an ELF
// executable (a script could run anything), missing files, and any system but Linux.
func Of(l Launch) (print string, ok bool) {
	if l.Browsers == browser.RoutePlaywright || l.Route == nil {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "engine=%s\nbrowsers=%s\nexe=%s\n", l.Engine, l.Browsers, l.Exe)
	if l.Bundler == nil || l.Route.Name() != l.Bundler.Name() {
		fmt.Fprintf(&b, "%s-route=%s\n", l.Engine, l.Route.Name()) // the route is part of what is recorded
	}
	if l.Browsers == browser.RouteAuto && l.Exe == "" && l.Bundler != nil {
		// Where a bundled build is looked for (the record's Absent path) follows from
		// the Bundler's own state and the host platform.
		b.WriteString(l.Bundler.LookupPrint())
		if !fileLine(&b, "/etc/os-release") {
			return "", false
		}
	}
	files, ok := l.Route.BuildFiles(l.Engine, l.Exe)
	if !ok {
		return "", false
	}
	for _, f := range files {
		if !fileLine(&b, f) {
			return "", false
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:]), true
}

// fileLine writes path's identity: the path, where its symlinks lead, and that
// file's device, inode, size, mtime and ctime. Replacing or editing the file (a
// package upgrade, a copy over it, a touch) changes one of them; ctime cannot be set
// back by a user.
func fileLine(b *strings.Builder, path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	id, ok := fileIdentity(real)
	if !ok {
		return false
	}
	fmt.Fprintf(b, "file=%s real=%s %s\n", path, real, id)
	return true
}
