# flameox — see README.md. `make demo` and `make test` must work on a fresh clone.
GO        ?= go
BIN       := bin
VENV      ?= .venv
FUZZTIME  ?= 10s
FUZZLONG  ?= 10m
BENCHTIME ?= 1x
BENCH_BASE ?= 09f49d7
BENCH_RUNS ?= 3
BENCH_BASE_DIR := .cache/bench/base
GOSEC_VERSION := v2.30.0
STATICCHECK_VERSION := v0.8.2
XTOOLS_VERSION := v0.52.0
export FLAMEOX_VENV      := $(abspath $(VENV))
export FLAMEOX_SARIF_NPM := $(abspath tools/sarif-npm)
export GOSEC             := $(abspath .cache/bin/gosec)

SHELL := /bin/bash

PREFIX    ?= /usr/local
COMMANDS  := flameox-capture flameox-decode flameox-rank flameox-preserve flameox-mcp

.PHONY: all build install venv tools test demo bench bench-report bench-base fuzz fuzz-long check docs clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The five commands into $(DESTDIR)$(PREFIX)/bin, side by side: flameox-mcp
# runs the others from its own directory.
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(addprefix $(BIN)/,$(COMMANDS)) $(DESTDIR)$(PREFIX)/bin/

# The project virtualenv holds the pinned Python collectors (py-spy, pytest,
# coverage.py, ...) that tests and captures use.
$(VENV)/.stamp: tools/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --disable-pip-version-check -q -r tools/requirements.txt
	touch $@

venv: $(VENV)/.stamp

# Real producers the tests drive, pinned: gosec and ESLint (SARIF), and the
# MCP Inspector CLI (an external MCP client).
.cache/bin/gosec:
	GOBIN=$(abspath .cache/bin) $(GO) install github.com/securego/gosec/v2/cmd/gosec@$(GOSEC_VERSION)

tools/%/node_modules/.stamp: tools/%/package-lock.json
	cd tools/$* && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Linters for make check, pinned.
.cache/bin/staticcheck:
	GOBIN=$(abspath .cache/bin) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

.cache/bin/deadcode:
	GOBIN=$(abspath .cache/bin) $(GO) install golang.org/x/tools/cmd/deadcode@$(XTOOLS_VERSION)

tools: .cache/bin/gosec tools/sarif-npm/node_modules/.stamp tools/mcp-inspector/node_modules/.stamp

test: build venv tools
	$(GO) test ./...

# Capture the bundled Node workload, decode it and rank its hotspots.
demo: build
	$(BIN)/flameox-capture node-cpu-profile -- node examples/hotspot/app.js \
	  | $(BIN)/flameox-decode | $(BIN)/flameox-rank --top 10 --format table

# Go benchmarks for every decoder and projection, then end-to-end
# throughput (MB/s), CPU seconds and peak RSS of the binaries on large
# inputs, side by side with the same binaries built from BENCH_BASE (by
# default the last commit before the foundations refactor) in one run.
# The base is built from `git archive` (no worktree), offline from the
# module cache, and rebuilt only when BENCH_BASE names another commit.
bench: build bench-base
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...
	$(GO) run ./tools/perfbench -runs 1
	$(MAKE) --no-print-directory bench-report

# Only the side-by-side end-to-end report (BENCH_RUNS runs of each case).
bench-report: build bench-base
	$(GO) run ./tools/perfbench -runs 0
	$(GO) run ./internal/benchreport -bin $(BIN) -base $(BENCH_BASE_DIR)/bin -base-name $(BENCH_BASE) -runs $(BENCH_RUNS)

bench-base:
	@want=$$(git rev-parse --verify -q '$(BENCH_BASE)^{commit}') || { echo "BENCH_BASE=$(BENCH_BASE) is not a commit"; exit 1; }; \
	if [ "$$(cat $(BENCH_BASE_DIR)/.commit 2>/dev/null)" != "$$want" ] || [ ! -x $(BENCH_BASE_DIR)/bin/flameox-rank ]; then \
	  echo "building the base binaries from $(BENCH_BASE) ($$want) in $(BENCH_BASE_DIR)"; \
	  rm -rf $(BENCH_BASE_DIR) && mkdir -p $(BENCH_BASE_DIR) && \
	  git archive $$want | tar -x -C $(BENCH_BASE_DIR) && \
	  (cd $(BENCH_BASE_DIR) && GOWORK=off GOFLAGS=-mod=readonly GOPROXY=off $(GO) build -o bin/ ./cmd/...) && \
	  echo $$want > $(BENCH_BASE_DIR)/.commit; \
	fi

# A short fuzz pass over every fuzz target (FUZZTIME each).
fuzz:
	tools/fuzz.sh $(FUZZTIME)

# A long pass: every fuzz target for FUZZLONG each, one after the other
# (hours in all: FUZZONLY=regex narrows it), one result line per target.
fuzz-long:
	tools/fuzz.sh $(FUZZLONG)

docs:
	$(GO) run ./internal/gendocs

# Formatting, vet, staticcheck, no unreachable code but what
# tools/deadcode-allow.txt names (with its reason), and docs/support.md in
# step with the registry.
check: .cache/bin/staticcheck .cache/bin/deadcode
	@test -z "$$(gofmt -l cmd pkg internal tools sdk)" || { gofmt -l cmd pkg internal tools sdk; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	.cache/bin/staticcheck ./...
	@dead=$$(.cache/bin/deadcode -test ./... | grep -v -F -f <(grep -v '^#' tools/deadcode-allow.txt | cut -d' ' -f1)); \
	  test -z "$$dead" || { echo "$$dead"; echo "unreachable code (delete it, or add it to tools/deadcode-allow.txt with a reason)"; exit 1; }
	$(GO) run ./internal/gendocs
	git diff --exit-code docs/support.md docs/tables.md

clean:
	rm -rf $(BIN) .cache/bench
