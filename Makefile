# The two commands a newcomer runs: `make demo` and `make test`. Both install what
# they need first (scripts/setup.sh, idempotent).
SHELL := /bin/bash
GO ?= go
BIN := bin
export PLAYWRIGHT_NODEJS_PATH ?= $(shell command -v node)

.PHONY: setup build demo demo-cases test norace vet fmt-check cross lint unit fuzz bench clean

setup:
	bash scripts/setup.sh

# -buildvcs=auto: stamp the commit (and a tag's version) into every binary's --version
# even where GOFLAGS turns stamping off, as it is on some build machines; a tree that
# is no git checkout builds as before.
build:
	$(GO) build -buildvcs=auto -o $(BIN)/ ./cmd/...

# Pipe the bundled cases through one oracle process, print the three-engine vote, and
# write the HTML report (compare prints its path: open it from disk in any browser).
# The demo's requests are the bundled cases with "screenshot": true on each geometry
# request, so the report shows every engine's picture under its boxes; the file
# itself asks for none, as the tests that read it expect. `make -s demo-cases`
# prints them.
DEMO_CASES = sed -E '/"op": *"(reflect|trace|ping|shutdown)"/!s/^\{/{"screenshot": true, /' testdata/cases.ndjson
demo-cases:
	@$(DEMO_CASES)

demo: setup build
	set -o pipefail; $(DEMO_CASES) | $(BIN)/oracle > $(BIN)/demo-responses.ndjson
	$(BIN)/compare --answers $(BIN)/demo-responses.ndjson --out $(CURDIR)/$(BIN)/demo-report

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# staticcheck at a pinned version, installed through the Go module proxy into GOBIN
# (else the first GOPATH entry's bin) when that one is not there.
STATICCHECK_VERSION := v0.8.2
GOBIN_DIR = $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)
lint:
	@case "$$($(GOBIN_DIR)/staticcheck -version 2>/dev/null)" in \
	  *"($(STATICCHECK_VERSION:v%=%))"*) ;; \
	  *) echo "installing staticcheck $(STATICCHECK_VERSION) into $(GOBIN_DIR)"; \
	     GOBIN=$(GOBIN_DIR) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION);; \
	esac
	$(GOBIN_DIR)/staticcheck ./...

# The Linux-only code (pidfd, Pdeathsig, /dev/ptmx) sits behind build tags with stubs
# elsewhere: this keeps the tree, tests included, compiling for macOS.
cross:
	GOOS=darwin $(GO) build ./...
	GOOS=darwin $(GO) vet ./...

# Everything, against the real engines, one package at a time (-p 1): the browser
# packages would otherwise share 2 cores and squeeze their deadlines. Every package's
# tests run under the race detector (measured on 2 cores under a load average of
# 13: oracle 94 s, trace 42 s, cmd/probe 62 s, cmd/bench 8 s, the pure packages
# about 60 s with compiling). cmd/oracle is most of the time: each oracle process
# costs a launch of three browsers and the self-check, so its tests share three
# oracles where they only send cases, and the tests with an oracle of their own and
# no tight timing run two at a time (t.Parallel); docs/testing.md lists what each
# fresh oracle costs. oracle's TestMain fails the run on leaked goroutines.
# cmd/oracle's end-to-end tests build the binary itself without -race unless
# ORACLE_TEST_RACE_BINARY=1: race-built, it cannot serve the 50 MB hostile case
# within its deadline. One test always runs a race-built oracle (race_test.go). Fuzz targets then run briefly on top of their seeds.
test: setup fmt-check vet lint cross
	$(GO) test -race -count=1 -p 1 -timeout 40m ./...
	$(MAKE) norace
	$(MAKE) fuzz FUZZTIME=50000x

# The tests the race run skips (testutil.NotUnderRace): each crosses a data race
# inside a dependency the oracle cannot change, so they run here without -race.
# A renamed test would leave the -run pattern matching nothing, so that fails too.
NORACE_TESTS = ^TestRelayClosesAMalformedServerAlone$$
norace:
	@out=$$($(GO) test -count=1 -v -run '$(NORACE_TESTS)' ./oracle/browser/playwright 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "$$out" | grep -- '^--- PASS' || { echo "$$out"; echo 'norace: no test ran'; exit 1; }

# The pure tests of every package, in seconds (no browser starts): the quick loop
# while editing. Every test that drives a browser calls testutil.NeedsBrowsers and
# skips under -short, so listing ./... leaves no pure package out (measured: 19 s
# wall under a load average of 13, nearly all of it building the test binaries; the
# slowest package's tests took 3 s).
unit: cross
	$(GO) test -short -count=1 ./...

# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can report a
# spurious "context deadline exceeded" at the boundary (golang/go#75804, fixed in
# 1.27), which failed a CI run with no failing input.
FUZZTIME ?= 200000x
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# The throughput benchmark (cmd/bench/README.md): the same N generated cases through
# (a) the oracle, (b) a browser per case (sampled), (c) the oracle with one page and
# one request in flight, (d) each engine's bare setContent+evaluate; prints the table.
BENCH_CASES ?= 500
SOAK_CASES ?= 10000
.PHONY: soak bench-go
# Then the ground-truth store (docs/store.md): STORE_BENCH_CASES cases cold into a
# fresh store, then warm from it in a new oracle process; fails unless warm is 50x faster.
STORE_BENCH_CASES ?= 1000
bench: setup build
	$(BIN)/bench --oracle $(BIN)/oracle --cases $(BENCH_CASES)
	$(BIN)/bench --oracle $(BIN)/oracle --store-bench $(STORE_BENCH_CASES)

# The gate (cmd/bench/README.md, "The gate, the versus run and the store bench"): the bundled cases, the
# small WPT tree by url, GATE_CASES generated cases and the hostile cases, answered
# with a new document per case and then, in two random orders, with the inert reuse;
# prints the engine answers compared and different, and fails on any difference.
# GATE_CORPUS adds NDJSON request files (comma-separated), e.g. a WPT corpus built by
# scripts/corpus/wpt_corpus.py, and GATE_ARGS oracle flags, space-separated (its
# --docroot), each passed on as one --oracle-flag.
GATE_CASES ?= 200
GATE_CORPUS ?=
GATE_ARGS ?= --docroot=testdata/wpt
.PHONY: gate
gate: setup build
	$(BIN)/bench --oracle $(BIN)/oracle --gate --gate-cases $(GATE_CASES) \
	  --gate-corpus testdata/cases.ndjson,testdata/gate/wpt-small.ndjson$(if $(GATE_CORPUS),$(comma)$(GATE_CORPUS)) \
	  $(addprefix --oracle-flag=,$(GATE_ARGS))
comma := ,

# The differential fuzzer of inert cases (cmd/bench/README.md, "The gate"): FUZZ_INERT_PAIRS generated hostile-then-innocent pairs on one page per
# engine with the inert reuse, each innocent answer against a new document's; fails
# on any difference.
FUZZ_INERT_PAIRS ?= 2000
.PHONY: fuzz-inert
fuzz-inert: setup build
	$(BIN)/bench --oracle $(BIN)/oracle --fuzz-inert $(FUZZ_INERT_PAIRS)

# The versus run: the script-free and the scripted generated cases through the
# oracle of VERSUS_COMMIT (built side by side in a temporary worktree) and this one.
VERSUS_COMMIT ?= af94af5
VERSUS_CASES ?= 200
.PHONY: bench-versus
bench-versus: setup build
	rm -rf $(BIN)/versus-src && git worktree add --detach $(BIN)/versus-src $(VERSUS_COMMIT)
	cd $(BIN)/versus-src && $(GO) build -o ../oracle-$(VERSUS_COMMIT) ./cmd/oracle
	git worktree remove --force $(BIN)/versus-src
	$(BIN)/bench --oracle $(BIN)/oracle --versus $(BIN)/oracle-$(VERSUS_COMMIT) --cases $(VERSUS_CASES)

# The reducer benchmark (docs/reduce.md): each disagreeing WPT case of
# REDUCE_CASES reduced by bin/reduce in its own oracle; a row per case (bytes
# before and after, oracle calls, wall time, reproduced) and the medians; the
# reduced requests go to bin/reduced.ndjson.
REDUCE_CASES ?= testdata/reduce/wpt.ndjson
REDUCE_LIMIT ?= 0
REDUCE_ARGS ?= --timeout=3m
.PHONY: bench-reduce
bench-reduce: setup build
	$(BIN)/reduce --bench $(REDUCE_CASES) --bench-limit $(REDUCE_LIMIT) --out $(BIN)/reduced.ndjson $(REDUCE_ARGS)

# The triage benchmark (docs/triage.md, "Benchmark"): the bundled corpus, then
# TRIAGE_CASES generated cases (bin/bench --emit-cases), through bin/triage with the
# WeasyPrint adapter (examples/weasyprint), each in a fresh store under TRIAGE_DIR.
# Prints, per corpus: cases/s, the oracle's and the candidate's share of the time,
# buckets, causes per bucket, and each reduced bucket's bytes and reduction time.
TRIAGE_CASES ?= 100
TRIAGE_REDUCE ?= 3
# TRIAGE_MODE=server runs the WeasyPrint adapter as one process (adapter.py --server,
# --candidate-server) laying out TRIAGE_WORKERS cases at once; cmd (the default)
# starts it once per case (--candidate-cmd).
TRIAGE_MODE ?= cmd
TRIAGE_WORKERS ?= 1
TRIAGE_CANDIDATE_cmd = --candidate-cmd '/usr/bin/python3 $(CURDIR)/examples/weasyprint/adapter.py'
TRIAGE_CANDIDATE_server = --candidate-server '/usr/bin/python3 $(CURDIR)/examples/weasyprint/adapter.py --server --workers $(TRIAGE_WORKERS)'
TRIAGE_DIR ?= $(BIN)/bench-triage
# TRIAGE_CORPORA: the NDJSON corpora triaged in turn, e.g. a WPT corpus from
# scripts/corpus/wpt_corpus.py (docs/triage.md, "Measured").
TRIAGE_CORPORA ?= testdata/cases.ndjson $(TRIAGE_DIR)/generated.ndjson
TRIAGE_ARGS ?=
.PHONY: bench-triage
bench-triage: setup build
	rm -rf $(TRIAGE_DIR) && mkdir -p $(TRIAGE_DIR)
	$(BIN)/bench --emit-cases --cases $(TRIAGE_CASES) > $(TRIAGE_DIR)/generated.ndjson
	for corpus in $(TRIAGE_CORPORA); do \
	  name=$$(basename $$corpus .ndjson); echo "== $$corpus (candidate mode: $(TRIAGE_MODE))"; \
	  $(BIN)/triage $(TRIAGE_CANDIDATE_$(TRIAGE_MODE)) \
	    --out $(TRIAGE_DIR)/$$name --oracle $(BIN)/oracle --oracle-flag=--store=$(TRIAGE_DIR)/store-$$name.db \
	    --reduce $(TRIAGE_REDUCE) $(TRIAGE_ARGS) $$corpus 2>$(TRIAGE_DIR)/$$name.log; \
	  test $$? -le 1 || { tail -20 $(TRIAGE_DIR)/$$name.log; exit 1; }; \
	done

# The planted-defect harness (docs/planted.md): triage runs the planted candidate (one
# engine with the Defects table's CSS and a crash) over PLANTED_CASES generated cases
# and every entry of its buckets.json is explained by the defects; prints recall,
# entries per defect, noise, the crash's rank and the wall time.
PLANTED_CASES ?= 100
PLANTED_REDUCE ?= -1
PLANTED_DIR ?= $(BIN)/bench-planted
# list-indent is left out: the generated cases with lists overflow the viewport in
# the engines, so the contract discards all of them but one and no entry can show it.
PLANTED_DEFECTS ?= p-tall,p-margin,cell-padding,inline-spacing,link-margin,code-size,crash
PLANTED_ARGS ?=
.PHONY: bench-planted
bench-planted: setup build
	rm -rf $(PLANTED_DIR) && mkdir -p $(PLANTED_DIR)
	$(BIN)/bench --emit-cases --cases $(PLANTED_CASES) > $(PLANTED_DIR)/generated.ndjson
	$(BIN)/planted bench --out $(PLANTED_DIR)/run --oracle $(BIN)/oracle --reduce $(PLANTED_REDUCE) --defects $(PLANTED_DEFECTS) \
	  --triage-flag=--oracle-flag=--store=off $(PLANTED_ARGS) $(PLANTED_DIR)/generated.ndjson

.PHONY: bench-store
bench-store: setup build
	$(BIN)/bench --oracle $(BIN)/oracle --store-bench $(STORE_BENCH_CASES)

# Memory over a long run: SOAK_CASES cases through one oracle, RSS of the oracle and
# every process under it sampled every 1000 cases; exits 1 if the last sample exceeds
# the one at 20% of the run by more than 50% (total, or the oracle process alone).
soak: setup build
	$(BIN)/bench --oracle $(BIN)/oracle --soak $(SOAK_CASES)

# The go test benchmarks that `make bench` ran before.
bench-go: setup
	$(GO) test -run '^$$' -bench . -benchtime 200x ./...

clean:
	rm -rf $(BIN)
