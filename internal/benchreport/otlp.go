package main

import (
	"os"
	"path/filepath"

	"github.com/flameox/flameox/internal/formats/otlp"
)

// otlpSeed is the real exporter body the OTLP inputs are built from.
const otlpSeed = "testdata/otlp/python-sdk.pb"

// otlpCases: a 200 MB OTLP protobuf body grown from the Python SDK's,
// decoded, and summarized by operation beside the opentelemetry-proto
// Python classes parsing it whole (they must be installed in the venv:
// tools/requirements-regen.txt).
func otlpCases() []benchCase {
	gen := seeded(otlpSeed, otlp.Generate)
	ops := traceOps()
	return []benchCase{
		{"otlp decode 200 MB", "otlp-200MB.pb", 200e6, gen, decodeArgv, 0, true, nil},
		{"otlp summarize operations 200 MB", "otlp-200MB.pb", 200e6, gen, ops, 0, true, otlpPython},
	}
}

// otlpPython is opentelemetry-proto's TracesData.FromString of the whole
// body and a per-name sum of durations (internal/benchreport/peers/otlp-ops.py).
var otlpPython = &peer{name: "python opentelemetry-proto", argv: func(in string) []string {
	py := ".venv/bin/python"
	if v := os.Getenv("FLAMEOX_VENV"); v != "" {
		py = filepath.Join(v, "bin", "python")
	}
	return []string{py, "internal/benchreport/peers/otlp-ops.py", in}
}}
