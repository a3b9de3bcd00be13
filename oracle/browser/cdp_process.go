package browser

// The Chromium process of the CDP route (cdp.go): its switches (Playwright's, so a
// page here sees the browser a page on the Playwright route sees), its launch as
// the browser user in the engine's memory cgroup with the debugging pipe on fds 3
// and 4, and its kill.

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/internal/proctree"
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

// cdpProc is one Chromium process (its children are in its process group), its
// profile directory and the two ends of its debugging pipe.
type cdpProc struct {
	cmd         *exec.Cmd
	exited      chan struct{}
	profile     string
	toBrowser   *os.File // we write: the browser's fd 3
	fromBrowser *os.File // we read: the browser's fd 4
	out         *tailLog
}

// startChromium launches Chromium headless with a new profile, in its own process
// group, as the browser user (browserWrapper, which keeps fds 3 and 4) and in the
// memory cgroup.
func (e *cdpEngine) startChromium() (*cdpProc, error) {
	profile, err := os.MkdirTemp("", "layout-oracle-cdp-")
	if err != nil {
		return nil, err
	}
	exe, err := browserWrapper(e.exe) // it hands the profile to the browser user
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
	args := append(append([]string{}, PlaywrightChromiumSwitches...), chromiumArgs(e.opts.Args)...)
	args = append(args, "--user-data-dir="+profile, "--remote-debugging-pipe", "--no-startup-window")
	out := newTailLog(e.log.With().Str("proc", "chromium").Logger())
	cmd := exec.Command(exe, args...)
	cmd.Env = WithEnv(os.Environ(), wrappedBrowserEnv(e.opts.Env, e.opts.MemoryCgroup))
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
	p := &cdpProc{cmd: cmd, exited: make(chan struct{}), profile: profile, toBrowser: toBrowser, fromBrowser: fromBrowser, out: out}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	if wrapperDrops := exe != e.exe; !wrapperDrops {
		// Without the wrapper the browser was not born in its cgroup: moved now.
		if err := placeTree(e.opts.MemoryCgroup, []int{cmd.Process.Pid}); err != nil {
			e.log.Warn().Err(err).Msg("Chromium left outside the engine's memory cgroup")
		}
	}
	return p, nil
}

// kill ends Chromium's whole process group, waits for it to be reaped, and removes
// its profile.
func (p *cdpProc) kill() {
	killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
	p.toBrowser.Close()
	p.fromBrowser.Close()
	os.RemoveAll(p.profile)
}

// alive says whether the Chromium process has not exited.
func (p *cdpProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// pid is Chromium's browser process, the root of its tree.
func (p *cdpProc) pid() int { return p.cmd.Process.Pid }
