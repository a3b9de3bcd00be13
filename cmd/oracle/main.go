// Command oracle keeps Chromium, Firefox and WebKit open and answers ground-truth
// questions about web content over NDJSON on stdio (docs/dump-format.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser/routes"

	"github.com/layout-oracle/oracle/internal/cli"
	"github.com/layout-oracle/oracle/oracle"
	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/origin"
	"github.com/layout-oracle/oracle/oracle/pagecount"
	"github.com/layout-oracle/oracle/oracle/remote"
	"github.com/layout-oracle/oracle/probes"
	"github.com/layout-oracle/oracle/profiles"
	"github.com/layout-oracle/oracle/trace"
	"github.com/rs/zerolog"
)

func main() { os.Exit(run()) }

func run() int {
	// A closed stderr must not end the oracle: without this, Go's runtime raises
	// SIGPIPE on a failed write to fd 1 or 2 (logs, and fd 1 is stderr below), and its
	// default action kills the process with cases in flight. Notify, not Ignore: an
	// ignored SIGPIPE would be inherited by the browsers across exec. The protocol fd is
	// neither 1 nor 2, so a closed stdout still fails its write and ends Serve (exit 1,
	// browsers closed) as before.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// Keep the real stdout for protocol lines only, and point file descriptor 1 at
	// stderr: anything else that writes to stdout (a library, a child browser
	// process) then lands in the diagnostics, never in the protocol stream.
	protocol, err := reserveStdout()
	if err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		return 1
	}
	if len(os.Args) > 1 && os.Args[1] == "store" {
		return storeCommand(os.Args[2:], protocol, os.Stderr)
	}
	if len(os.Args) > 1 && os.Args[1] == "browser-env" {
		return browserEnvCommand(os.Args[2:], protocol, os.Stderr)
	}

	fs := cli.NewFlagSet("oracle")
	engines := fs.String("engines", strings.Join(browser.AllEngines, ","), "engines to launch, comma-separated")
	browsers := fs.String("browsers", browser.RouteAuto, "system (Debian builds), playwright (Playwright's bundled builds) or auto (bundled where installed)")
	engineRoutes := map[string]*string{} // --ENGINE-route, one per engine the route table lets choose
	for _, e := range routes.Table.Choosable() {
		engineRoutes[e] = fs.String(e+"-route", browser.RouteAutoChoice, routes.Table.FlagHelp(e))
	}
	profile := fs.String("profile", profiles.Default.Name, "launch profile: "+strings.Join(profiles.Names(), ", "))
	deadline := fs.Duration("deadline", browser.DefaultDeadline, "per-engine deadline for one request")
	maxLine := fs.Int("max-line", oracle.DefaultMaxLine, "longest request line accepted, in bytes")
	pages := fs.String("pages", pagecount.Flag(), "pages (browser instances) per engine, each serving one case at a time: a number, or engine=count,... (firefox=3,chromium=1; engines not named get "+strconv.Itoa(pagecount.Default)+")")
	parallel := fs.Int("parallel", 0, "requests served at once (0: the largest page count of the engines)")
	cli.Alias(fs, "inflight", "parallel")
	traceMaxRecords := fs.Int("trace-max-records", trace.DefaultLimits.Records, "records one trace may hold; past it that engine's answer is an error")
	traceMaxBytes := fs.Int("trace-max-bytes", trace.DefaultLimits.Bytes, "bytes of records (their JSON in the answer line, escapes included) one trace may hold; past it that engine's answer is an error")
	screenshotDir := fs.String("screenshot-dir", "", "write screenshots (\"screenshot\": true) as PNG files into `DIR` and name them in the dump, instead of base64")
	cli.Alias(fs, "artifacts", "screenshot-dir")
	progressEvery := fs.Duration("progress-every", oracle.DefaultProgressEvery, "log a one-line progress summary (answered, errors, rate) at info level this often while serving; 0: never")
	verify := fs.Int("verify", 1, fmt.Sprintf("measure every case this many times per engine (1-%d) and list the items the runs differ on as \"unstable\" (docs/protocol.md, \"Verification\"); a request's \"verify\" overrides it", oracle.MaxVerify))
	inertReuse := fs.Bool("inert-reuse", true, "inert cases (no script, markup that cannot run any: docs/untrusted.md) are written into the window an earlier inert case used, with no navigation; false gives every case a new document")
	dumpMaxNodes := fs.Int("dump-max-nodes", oracle.DefaultDumpMaxNodes, "elements one geometry dump may hold (and 4 boxes, 512 bytes of style text and 64 of tag names per element); past it that engine's answer is an error")
	logLevel := fs.String("log-level", "info", "stderr log level: debug, info, warn, error")
	installDriver := fs.Bool("install-driver", false, "install the Playwright driver matching go.mod, without browsers, and exit")
	selfCheck := fs.Bool("self-check", true, "before serving, run one geometry, one trace and one reflection case per engine and take an engine that fails out of service")
	chromiumPath := fs.String("chromium-path", "", "Chromium binary (default "+browser.SystemChromium+"); implies the system route for chromium")
	firefoxPath := fs.String("firefox-path", "", "Firefox binary (default "+browser.SystemFirefox+"); implies the system route for firefox")
	requireSandbox := fs.Bool("require-sandbox", false, "refuse to start unless every engine runs under an unprivileged user with its own sandbox on (docs/sandbox.md)")
	webkitDriverPath := fs.String("webkit-driver-path", "", "WebKitWebDriver binary (default "+browser.SystemWebKitWebDriver+"); implies the WebDriver route for webkit")
	docRoot := fs.String("docroot", "", "directory served read-only at / on the oracle's case origins; \"url\" requests name paths under it")
	storePath := fs.String("store", storeDefault(), "ground-truth store file (docs/store.md), or off; default $ORACLE_STORE, else under $XDG_CACHE_HOME or ~/.cache")
	storeMinRuns := fs.Int("store-min-runs", 1, "serve from the store only answers resting on at least this many identical live runs (docs/store.md); a case whose stored answer rests on fewer is measured live again")
	storeMax := fs.String("store-max", "4G", "bound on the store's size (bytes, or with K, M, G); past it the least recently used answers are evicted")
	engineMemory := fs.String("engine-memory", "auto", "memory bound on each engine's processes, all its pages together, in a cgroup (bytes, or with K, M, G); a case that hits it is that engine's error and a relaunch; auto: a quarter of the machine's RAM; 0: off (docs/untrusted.md)")
	var endpoints []remote.Endpoint
	endpointFlag := func(protocol string) func(string) error {
		return func(s string) error {
			ep, err := remote.ParseEndpoint(protocol, s)
			if err == nil {
				endpoints = append(endpoints, ep)
			}
			return err
		}
	}
	fs.Func("connect", "a Playwright browser server whose browsers join ENGINE's pages: `ENGINE[:PAGES]=ws://host:port/...` (chromium or firefox; repeatable; docs/remote.md)", endpointFlag(remote.Playwright))
	fs.Func("webdriver", "a remote W3C WebDriver endpoint (a WebKitWebDriver or a Grid), one session per page: `webkit[:PAGES]=http://host:port` (repeatable; docs/remote.md)", endpointFlag(remote.WebDriver))
	originListen := fs.String("origin-listen", "", "serve the trace/case origin, every browser's proxy, on `HOST:PORT`, an address remote browsers reach (default: a free port on 127.0.0.1)")
	fs.Usage = cli.Usage(fs, "oracle [FLAGS]   (serves NDJSON on stdin/stdout; docs/protocol.md)",
		"oracle store stats|prune|export [FLAGS]", "oracle browser-env [FLAGS]")
	if code, done := cli.Parse(fs, os.Args[1:], protocol); done {
		return code
	}
	if fs.NArg() > 0 {
		// A typo ("oracle stor") must not start a full oracle on the default store.
		fmt.Fprintf(os.Stderr, "oracle: unexpected argument %q: the subcommands are store and browser-env, every flag starts with -\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	for _, e := range cli.SplitList(*engines) {
		if !slices.Contains(browser.AllEngines, e) {
			fmt.Fprintf(os.Stderr, "oracle: --engines: unknown engine %q (known: %s)\n", e, strings.Join(browser.AllEngines, ", "))
			return 2
		}
	}
	if *originListen != "" {
		if _, err := origin.ParseListen(*originListen); err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			return 2
		}
	}

	level, err := zerolog.ParseLevel(*logLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oracle: bad --log-level:", err)
		return 2
	}
	log := zerolog.New(cli.LogOutput(os.Stderr)).Level(level).With().Timestamp().Str("proc", "oracle").Logger()

	if *installDriver {
		// playwright-go reads which Node.js to use only from the environment, and
		// downloads one otherwise (impossible on a closed network): the program, not
		// the library, chooses the machine's node for the install.
		if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" {
			if node, err := exec.LookPath("node"); err == nil {
				os.Setenv("PLAYWRIGHT_NODEJS_PATH", node)
			}
		}
		b := routes.Table.Bundler()
		if b == nil {
			log.Error().Msg("install driver: the route table has no route with a driver to install")
			return 1
		}
		if err := b.Install(log); err != nil {
			log.Error().Err(err).Msg("install driver")
			return 1
		}
		log.Info().Msg("playwright driver installed")
		return 0
	}

	if *screenshotDir != "" {
		// Absolute, so the path in a dump still names the file from another directory.
		abs, err := filepath.Abs(*screenshotDir)
		if err == nil {
			*screenshotDir = abs
			err = os.MkdirAll(abs, 0o755)
		}
		if err != nil {
			log.Error().Err(err).Msg("bad --screenshot-dir")
			return 2
		}
	}
	if *progressEvery <= 0 {
		*progressEvery = -1 // never (0 in oracle.Config means the default)
	}
	prof, err := profiles.Lookup(*profile)
	if err != nil {
		log.Error().Err(err).Msg("bad --profile")
		return 2
	}
	defPages, enginePages, err := pagecount.Parse(*pages, pagecount.Default)
	if err != nil {
		log.Error().Err(err).Msg("bad --pages")
		return 2
	}
	if *verify < 1 || *verify > oracle.MaxVerify {
		log.Error().Int("verify", *verify).Msgf("bad --verify: from 1 to %d", oracle.MaxVerify)
		return 2
	}
	if *storeMinRuns < 1 {
		log.Error().Int("store-min-runs", *storeMinRuns).Msg("bad --store-min-runs: at least 1")
		return 2
	}
	memLimit, err := parseEngineMemory(*engineMemory)
	if err != nil {
		log.Error().Err(err).Msg("bad --engine-memory")
		return 2
	}
	maxBytes, err := parseSize(*storeMax)
	if err != nil {
		log.Error().Err(err).Msg("bad --store-max")
		return 2
	}
	st := openStore(*storePath, maxBytes, log)
	// Signals are caught before any engine launches: a SIGTERM during the 20-60 s
	// startup must close the browsers already started, not take Go's default action
	// (killed at once, browsers left to die with their drivers). During startup a signal cancels ctx, which ends the launches and
	// checks under way (Start then closes what launched); once serving, it closes o.
	ctx, cancelStart := context.WithCancel(context.Background())
	defer cancelStart()
	var sigMu sync.Mutex
	var caught syscall.Signal  // the signal received, under sigMu
	var serving *oracle.Oracle // set once Start returned, under sigMu
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := (<-sigs).(syscall.Signal)
		log.Info().Str("signal", s.String()).Msg("closing browsers")
		sigMu.Lock()
		caught = s
		o := serving
		sigMu.Unlock()
		if o == nil {
			cancelStart() // run below sees caught once Start returns
			return
		}
		o.Close()
		closeStore(st)
		os.Exit(128 + int(s))
	}()

	var checks []oracle.SelfCheck
	if *selfCheck {
		checks = probes.SelfChecksFor(prof)
	}
	start := time.Now()
	// Start returns at once (with --require-sandbox once every engine is up): the
	// engines keep starting while requests are served (ping at once, stored answers
	// of fingerprinted builds at once, a case that needs an engine waits for it).
	o, err := oracle.Start(ctx, oracle.Config{
		EngineMemory: memLimit,
		Engines:      cli.SplitList(*engines),
		Browsers:     *browsers,
		Routes:       routes.Table,
		EngineRoutes: flagValues(engineRoutes),
		Profile:      prof,
		Deadline:     *deadline,
		MaxLine:      *maxLine,
		Pages:        defPages,
		EnginePages:  enginePages,
		Inflight:     *parallel,

		ChromiumPath:     *chromiumPath,
		FirefoxPath:      *firefoxPath,
		WebKitDriverPath: *webkitDriverPath,
		TraceLimits:      trace.Limits{Records: *traceMaxRecords, Bytes: *traceMaxBytes},
		Artifacts:        *screenshotDir,
		ProgressEvery:    *progressEvery,
		DocRoot:          *docRoot,
		RequireSandbox:   *requireSandbox,
		Store:            st,
		DumpMaxNodes:     *dumpMaxNodes,
		FreshAlways:      !*inertReuse,
		Verify:           *verify,
		StoreMinRuns:     *storeMinRuns,
		Endpoints:        endpoints,
		OriginListen:     *originListen,
	}, checks, log)
	sigMu.Lock()
	sig := caught
	serving = o
	sigMu.Unlock()
	if sig != 0 {
		if o != nil {
			o.Close()
		}
		closeStore(st)
		log.Info().Str("signal", sig.String()).Msg("ended during startup; browsers closed")
		return 128 + int(sig)
	}
	launchFailed := func(err error) int {
		if *selfCheck && errors.Is(err, errNoEngine) {
			log.Error().Msg("no engine passed the self-check")
		}
		log.Error().Err(err).Msg("launch")
		closeStore(st)
		return 1
	}
	if err != nil {
		if *requireSandbox {
			// Plain words too: a refusal must be clear without a JSON log reader.
			fmt.Fprintln(os.Stderr, "oracle: refusing to start:", err)
		}
		return launchFailed(err)
	}
	log.Info().Strs("engines", o.Serving()).Dur("startup", time.Since(start)).Msg("serving on stdio")
	// When no engine comes up, serving ends and the process fails, as it did when
	// that was known before serving began.
	serveCtx, stopServing := context.WithCancelCause(ctx)
	defer stopServing(nil)
	// A signal's handler closes the browsers and exits 128+signal: the engines it
	// closed are not engines that failed to start, and nothing here may end the
	// process first (it did, with exit 1 and "no engine passed the self-check", when
	// the signal came while the engines were still starting).
	signaled := func() bool {
		sigMu.Lock()
		defer sigMu.Unlock()
		return caught != 0
	}
	go func() {
		o.WaitStarted()
		if len(o.Serving()) == 0 && !signaled() {
			stopServing(errNoEngine)
		}
	}()

	serveErr := o.Serve(serveCtx, os.Stdin, protocol)
	if signaled() {
		select {} // the handler exits
	}
	if serveErr != nil && errors.Is(context.Cause(serveCtx), errNoEngine) {
		o.Close()
		return launchFailed(errNoEngine)
	}
	if err := o.Close(); err != nil {
		log.Warn().Err(err).Msg("close")
	}
	closeStore(st)
	if serveErr != nil {
		log.Error().Err(serveErr).Msg("serve")
		return 1
	}
	return 0
}

// errNoEngine ends serving when every engine failed to start: Launch's own error
// for that, so one errors.Is finds both.
var errNoEngine = oracle.ErrNoEngine

func reserveStdout() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("dup stdout: %w", err)
	}
	if err := syscall.Dup2(2, 1); err != nil {
		return nil, fmt.Errorf("redirect stdout to stderr: %w", err)
	}
	syscall.CloseOnExec(fd) // browsers must not inherit the protocol stream
	return os.NewFile(uintptr(fd), "protocol"), nil
}

// flagValues is the values of a map of flags.
func flagValues(flags map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range flags {
		out[k] = *v
	}
	return out
}
