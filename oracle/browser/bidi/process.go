package bidi

// The Firefox process of the BiDi route (bidi/bidi.go): its profile (prefs in user.js),
// its launch as the browser user in the engine's memory cgroup, the WebSocket URL it
// prints, and its kill.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/internal/proctree"
	"github.com/layout-oracle/oracle/oracle/browser/host"
)

// bidiProc is one Firefox process (its content processes are in its process group)
// and its profile directory.
type bidiProc struct {
	*host.Group // Alive, PID
	profile     string
	url         string // ws://127.0.0.1:PORT, from Firefox's stderr
	out         *host.TailLog
}

// playwrightFirefoxPrefs are the prefs Playwright's moz-firefox launch writes into
// every profile (Playwright 1.64's server/bidi/third_party/firefoxPrefs.ts), so a
// page on this route sees the same browser as one on the Playwright route (popups
// allowed, no background timer throttling, no hang monitor, focus test mode); the
// oracle's own prefs (LaunchSettings.FirefoxPrefs) are written after them and win.
var playwrightFirefoxPrefs = map[string]any{
	"app.normandy.api_url": "", "app.update.checkInstallTime": false, "app.update.disabledForTesting": true,
	"apz.content_response_timeout":                                             60000,
	"browser.contentblocking.features.standard":                                "-tp,tpPrivate,cookieBehavior0,-cm,-fp",
	"browser.dom.window.dump.enabled":                                          true,
	"browser.newtabpage.activity-stream.discoverystream.region-weather-config": "",
	"browser.newtabpage.activity-stream.newtabWallpapers.enabled":              false,
	"browser.newtabpage.activity-stream.newtabWallpapers.v2.enabled":           false,
	"browser.newtabpage.activity-stream.showSponsoredTopSites":                 false,
	"browser.newtabpage.activity-stream.feeds.system.topstories":               false,
	"browser.newtabpage.enabled":                                               false, "browser.pagethumbnails.capturing_disabled": true,
	"browser.safebrowsing.blockedURIs.enabled": false, "browser.safebrowsing.downloads.enabled": false,
	"browser.safebrowsing.malware.enabled": false, "browser.safebrowsing.phishing.enabled": false,
	"browser.search.update": false, "browser.sessionstore.resume_from_crash": false,
	"browser.shell.checkDefaultBrowser": false, "browser.startup.homepage": "about:blank",
	"browser.startup.homepage_override.mstone": "ignore", "browser.startup.page": 0,
	"browser.tabs.disableBackgroundZombification": false, "browser.tabs.warnOnCloseOtherTabs": false,
	"browser.tabs.warnOnOpen": false, "browser.translations.automaticallyPopup": false,
	"browser.uitour.enabled": false, "browser.urlbar.suggest.searches": false,
	"browser.usedOnWindows10.introURL": "", "browser.warnOnQuit": false,
	"datareporting.healthreport.documentServerURI":                "http://dummy.test/dummy/healthreport/",
	"datareporting.healthreport.logging.consoleEnabled":           false,
	"datareporting.healthreport.service.enabled":                  false,
	"datareporting.healthreport.service.firstRun":                 false,
	"datareporting.healthreport.uploadEnabled":                    false,
	"datareporting.usage.uploadEnabled":                           false,
	"telemetry.fog.test.localhost_port":                           -1,
	"datareporting.policy.dataSubmissionEnabled":                  false,
	"datareporting.policy.dataSubmissionPolicyBypassNotification": true,
	"devtools.jsonview.enabled":                                   false, "dom.disable_open_during_load": false, "dom.file.createInChild": true,
	"dom.ipc.reportProcessHangs": false, "dom.max_chrome_script_run_time": 0, "dom.max_script_run_time": 0,
	"dom.min_background_timeout_value": 0, "dom.min_background_timeout_value_without_budget_throttling": 0,
	"dom.timeout.enable_budget_timer_throttling": false, "dom.security.https_first": false,
	"extensions.autoDisableScopes": 0, "extensions.enabledScopes": 5, "extensions.getAddons.cache.enabled": false,
	"extensions.installDistroAddons": false, "extensions.screenshots.disabled": true,
	"extensions.update.enabled": false, "extensions.update.notifyUser": false,
	"extensions.webservice.discoverURL": "http://dummy.test/dummy/discoveryURL",
	"focusmanager.testmode":             true, "general.useragent.updates.enabled": false, "geo.provider.testing": true,
	"geo.wifi.scan": false, "hangmonitor.timeout": 0, "javascript.options.showInConsole": true,
	"layout.testing.top-level-always-active": true, "media.gmp-manager.updateEnabled": false,
	"media.sanity-test.disabled": true, "network.connectivity-service.enabled": false,
	"network.cookie.sameSite.laxByDefault": false, "network.http.prompt-temp-redirect": false,
	"network.http.speculative-parallel-limit": 0, "network.manage-offline-status": false,
	"network.sntp.pools": "dummy.test", "plugin.state.flash": 0, "privacy.trackingprotection.enabled": false,
	"remote.enabled": true, "security.certerrors.mitm.priming.enabled": false,
	"security.fileuri.strict_origin_policy": false, "security.notification_enable_delay": 0,
	"signon.autofillForms": false, "signon.rememberSignons": false,
	"startup.homepage_welcome_url": "about:blank", "startup.homepage_welcome_url.additional": "",
	"toolkit.cosmeticAnimations.enabled": false, "toolkit.startup.max_resumed_crashes": -1,
	"dom.testing.testutils.enabled": true,
}

// userJS is the profile's user.js: Playwright's prefs, then prefs (the oracle's),
// one user_pref line each, sorted so the file is the same for the same prefs.
func userJS(prefs map[string]any) (string, error) {
	all := map[string]any{}
	for k, v := range playwrightFirefoxPrefs {
		all[k] = v
	}
	for k, v := range prefs {
		all[k] = v
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		kj, err := json.Marshal(k)
		if err != nil {
			return "", err
		}
		vj, err := json.Marshal(all[k])
		if err != nil {
			return "", fmt.Errorf("pref %s: %w", k, err)
		}
		fmt.Fprintf(&b, "user_pref(%s, %s);\n", kj, vj)
	}
	return b.String(), nil
}

var bidiListening = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// listenWatch is Firefox's stderr: every byte goes to out, and the first line that
// says where WebDriver BiDi listens sends its URL on found.
type listenWatch struct {
	out     *host.TailLog
	found   chan<- string
	mu      sync.Mutex
	partial []byte
	sent    bool
}

func (w *listenWatch) Write(b []byte) (int, error) {
	_, _ = w.out.Write(b)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(b), nil
	}
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if m := bidiListening.FindSubmatch(w.partial[:i]); m != nil {
			w.found <- string(m[1])
			w.sent, w.partial = true, nil
			break
		}
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > 1<<20 {
		w.partial = w.partial[:0]
	}
	return len(b), nil
}

// startFirefox launches Firefox headless on a free port with a new profile, in its
// own process group, as the browser user (host.BrowserWrapper) and in the memory cgroup,
// and waits for the BiDi URL it prints.
func (e *bidiEngine) startFirefox(ctx context.Context) (*bidiProc, error) {
	profile, err := os.MkdirTemp("", "layout-oracle-bidi-")
	if err != nil {
		return nil, err
	}
	js, err := userJS(e.opts.Prefs)
	if err == nil {
		err = os.WriteFile(filepath.Join(profile, "user.js"), []byte(js), 0o600)
	}
	var exe string
	if err == nil {
		exe, err = host.BrowserWrapper(e.Exe) // it hands the profile to the browser user
	}
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	out := host.NewTailLog(e.Log.With().Str("proc", "firefox").Logger())
	cmd := exec.Command(exe, "--headless", "--remote-debugging-port=0", "--profile", profile, "--no-remote", "about:blank")
	env := append(host.WrappedBrowserEnv(e.opts.Env, e.opts.MemoryCgroup),
		"MOZ_CRASHREPORTER=1", "MOZ_CRASHREPORTER_NO_REPORT=1", "MOZ_CRASHREPORTER_SHUTDOWN=1")
	cmd.Env = host.WithEnv(os.Environ(), env)
	cmd.Stdout = out // never the oracle's stdout: that is the protocol channel
	// Stderr is a writer, not a pipe we read: os/exec copies it to its end before
	// Wait returns (bounded by WaitDelay), where Wait would close a pipe still being
	// read and lose its last lines (the ones that say why Firefox died).
	found := make(chan string, 1)
	cmd.Stderr = &listenWatch{out: out, found: found}
	cmd.SysProcAttr = proctree.WithParentDeath(&syscall.SysProcAttr{Setpgid: true}, syscall.SIGKILL)
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	p := &bidiProc{Group: host.Reap(cmd), profile: profile, out: out}
	if wrapperDrops := exe != e.Exe; !wrapperDrops {
		// Without the wrapper the browser was not born in its cgroup: moved now.
		if err := host.PlaceTree(e.opts.MemoryCgroup, []int{cmd.Process.Pid}); err != nil {
			e.Log.Warn().Err(err).Msg("Firefox left outside the engine's memory cgroup")
		}
	}
	select {
	case p.url = <-found:
		return p, nil
	case <-p.Exited():
		p.Kill()
		return nil, fmt.Errorf("%s exited before WebDriver BiDi listened: %s", e.Exe, out.Tail())
	case <-ctx.Done():
		p.Kill()
		return nil, ctx.Err()
	case <-time.After(60 * time.Second):
		p.Kill()
		return nil, fmt.Errorf("%s: no WebDriver BiDi within 60s: %s", e.Exe, out.Tail())
	}
}

// Kill ends Firefox's whole process group, waits for it to be reaped, and removes
// its profile.
func (p *bidiProc) Kill() {
	p.Signal(syscall.SIGKILL, 5*time.Second)
	os.RemoveAll(p.profile)
}
