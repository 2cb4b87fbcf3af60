# flameox — see README.md. `make demo` and `make test` must work on a fresh clone.
GO        ?= go
BIN       := bin
VENV      ?= .venv
FUZZTIME  ?= 10s
BENCHTIME ?= 1x
export FLAMEOX_VENV := $(abspath $(VENV))

.PHONY: all build venv test demo bench fuzz check docs clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The project virtualenv holds the pinned Python collectors (py-spy, pytest,
# coverage.py, ...) that tests and captures use.
$(VENV)/.stamp: tools/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --disable-pip-version-check -q -r tools/requirements.txt
	touch $@

venv: $(VENV)/.stamp

test: build venv
	$(GO) test ./...

# Capture the bundled Node workload, decode it and rank its hotspots.
demo: build
	$(BIN)/flameox-capture node-cpu-profile -- node examples/hotspot/app.js \
	  | $(BIN)/flameox-decode | $(BIN)/flameox-rank --top 10 --format table

# Go benchmarks for every decoder and projection, then end-to-end
# throughput (MB/s, rows/s) and peak RSS of the binaries on large inputs.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...
	$(GO) run ./internal/benchreport -bin $(BIN)

# A short fuzz pass over every fuzz target (FUZZTIME each).
fuzz:
	tools/fuzz.sh $(FUZZTIME)

docs:
	$(GO) run ./internal/gendocs

# Formatting, vet, and docs/support.md in step with the registry.
check:
	@test -z "$$(gofmt -l cmd pkg internal)" || { gofmt -l cmd pkg internal; echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) run ./internal/gendocs
	git diff --exit-code docs/support.md

clean:
	rm -rf $(BIN) .cache/bench
