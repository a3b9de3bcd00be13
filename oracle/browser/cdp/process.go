package cdp

// The Chromium process of the CDP route (cdp/cdp.go): its switches (Playwright's, so a
// page here sees the browser a page on the Playwright route sees), its launch as
// the browser user in the engine's memory cgroup with the debugging pipe on fds 3
// and 4, and its kill.

import (
	"cmp"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"

	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// PlaywrightChromiumSwitches are the switches Playwright's headless Chromium launch
// gives (Playwright 1.5x's chromiumSwitches and its headless ones, read off the
// command line of a Chromium the Playwright route launched), before the oracle's own
// (LaunchSettings.ChromiumArgs) and its profile and pipe.
var PlaywrightChromiumSwitches = strings.Fields(`--disable-field-trial-config --disable-background-networking
--disable-background-timer-throttling --disable-backgrounding-occluded-windows --disable-back-forward-cache
--disable-breakpad --disable-client-side-phishing-detection --disable-component-extensions-with-background-pages
--disable-component-update --no-default-browser-check --disable-default-apps --disable-dev-shm-usage
--disable-edgeupdater --disable-extensions
--disable-features=AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,DialMediaRouteProvider,GlobalMediaControls,HttpsUpgrades,LensOverlay,MediaRouter,PaintHolding,ThirdPartyStoragePartitioning,BlockOriginHeaderModificationOnRedirect,AvoidCorsURLLoaderRestartOnRedirect,Translate,AutoDeElevate,OptimizationHints,NetworkTimeServiceQuerying,AimEnabled,msForceBrowserSignIn,msEdgeUpdateLaunchServicesPreferredVersion
--enable-features=CDPScreenshotNewSurface --allow-pre-commit-input --disable-hang-monitor
--disable-ipc-flooding-protection --disable-popup-blocking --disable-prompt-on-repost --disable-renderer-backgrounding
--disable-updater-scheduler --force-color-profile=srgb --metrics-recording-only --no-first-run --password-store=basic
--use-mock-keychain --no-service-autorun --export-tagged-pdf --disable-search-engine-choice-screen
--unsafely-disable-devtools-self-xss-warnings --edge-skip-compat-layer-relaunch --disable-infobars
--disable-search-engine-choice-screen --disable-sync --enable-unsafe-swiftshader --headless --hide-scrollbars --mute-audio
--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4`)

// debianChromiumBinary is the program Debian's SystemChromium, a shell script, runs
// ($LIBDIR/$APPNAME). The script first sources every file of /etc/chromium.d, which
// may set LIBDIR to another program: the CDP route runs this one itself, so that the
// build the warm start fingerprints (oracle/buildprint) is the build that runs.
const debianChromiumBinary = "/usr/lib/chromium/chromium"

// debianChromiumFlags are the switches Debian 12's /etc/chromium.d/default-flags has
// the wrapper put before the caller's; given first, as it gives them, so the browser
// gets the switches a launch through the script got. (Its other files add nothing that
// holds here: remote extensions with none installed, under Playwright's
// --disable-extensions; --disable-dev-shm-usage, which Playwright's switches give.)
var debianChromiumFlags = []string{"--show-component-extension-options", "--enable-gpu-rasterization",
	"--no-default-browser-check", "--disable-pings", "--media-router=0"}

// Executable is the program the CDP route runs for the binary exe names ("":
// SystemChromium): Debian's browser itself in place of its wrapper script, when it is
// installed; exe otherwise.
func Executable(exe string) string {
	exe = cmp.Or(exe, browser.SystemChromium)
	if exe == browser.SystemChromium {
		if st, err := os.Stat(debianChromiumBinary); err == nil && st.Mode().IsRegular() {
			return debianChromiumBinary
		}
	}
	return exe
}

// cdpProc is one Chromium process (its children are in its process group), its
// profile directory and the two ends of its debugging pipe.
type cdpProc struct {
	*host.Group // Alive, PID
	profile     string
	toBrowser   *os.File // we write: the browser's fd 3
	fromBrowser *os.File // we read: the browser's fd 4
	out         *host.TailLog
}

// startChromium launches Chromium headless with a new profile, in its own process
// group, as the browser user (host.BrowserWrapper, which keeps fds 3 and 4) and in the
// memory cgroup.
func (e *cdpEngine) startChromium() (*cdpProc, error) {
	profile, err := os.MkdirTemp("", "layout-oracle-cdp-")
	if err != nil {
		return nil, err
	}
	exe, err := host.BrowserWrapper(e.Exe) // it hands the profile to the browser user
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	browserIn, toBrowser, err := os.Pipe()
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	fromBrowser, browserOut, err := os.Pipe()
	if err != nil {
		browserIn.Close()
		toBrowser.Close()
		os.RemoveAll(profile)
		return nil, err
	}
	var args []string
	if e.Exe == debianChromiumBinary {
		args = append(args, debianChromiumFlags...)
	}
	args = append(append(args, PlaywrightChromiumSwitches...), browser.ChromiumArgsWith(e.opts.Args)...)
	args = append(args, "--user-data-dir="+profile, "--remote-debugging-pipe", "--no-startup-window")
	out := host.NewTailLog(e.Log.With().Str("proc", "chromium").Logger())
	cmd := exec.Command(exe, args...)
	cmd.Env = host.WithEnv(os.Environ(), host.WrappedBrowserEnv(e.opts.Env, e.opts.MemoryCgroup))
	cmd.Stdout = out // never the oracle's stdout: that is the protocol channel
	cmd.Stderr = out
	cmd.ExtraFiles = []*os.File{browserIn, browserOut}
	cmd.SysProcAttr = proctree.WithParentDeath(&syscall.SysProcAttr{Setpgid: true}, syscall.SIGKILL)
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	browserIn.Close() // the browser's ends, ours no more
	browserOut.Close()
	if err != nil {
		toBrowser.Close()
		fromBrowser.Close()
		os.RemoveAll(profile)
		return nil, err
	}
	p := &cdpProc{Group: host.Reap(cmd), profile: profile, toBrowser: toBrowser, fromBrowser: fromBrowser, out: out}
	if wrapperDrops := exe != e.Exe; !wrapperDrops {
		// Without the wrapper the browser was not born in its cgroup: moved now.
		if err := host.PlaceTree(e.opts.MemoryCgroup, []int{cmd.Process.Pid}); err != nil {
			e.Log.Warn().Err(err).Msg("Chromium left outside the engine's memory cgroup")
		}
	}
	return p, nil
}

// Kill ends Chromium's whole process group, waits for it to be reaped, and removes
// its profile.
func (p *cdpProc) Kill() {
	p.Signal(syscall.SIGKILL, 5*time.Second)
	p.toBrowser.Close()
	p.fromBrowser.Close()
	os.RemoveAll(p.profile)
}
