package main

import (
	"os"
	"path/filepath"

	"github.com/flameox/flameox/internal/formats/perfetto"
)

// perfettoSeed is the real trace the Perfetto inputs are built from.
const perfettoSeed = "testdata/perfetto/chromium-startup.pftrace.gz"

// perfettoCases: Chromium's startup trace repeated to 100 MB and 1 GB
// (fresh sequence ids and later times per copy, perfetto.Generate),
// decoded (peak RSS must stay flat from one to the other) and summarized
// by operation beside perfetto_trace_pb2 reading the same packets in
// Python.
func perfettoCases() []benchCase {
	gen := seeded(perfettoSeed, perfetto.Generate)
	ops := traceOps()
	return []benchCase{
		{"perfetto decode 100 MB", "perfetto-100MB.pftrace", 100e6, gen, decodeArgv, 0, true, nil},
		{"perfetto decode 1 GB", "perfetto-1GB.pftrace", 1e9, gen, decodeArgv, 0, true, nil},
		{"perfetto summarize operations 1 GB", "perfetto-1GB.pftrace", 1e9, gen, ops, 0, true, perfettoPython},
	}
}

// perfettoPython reads the trace one packet at a time with the perfetto
// package's TracePacket (internal/benchreport/peers/perfetto-ops.py).
var perfettoPython = &peer{name: "python perfetto_trace_pb2", argv: func(in string) []string {
	py := ".venv/bin/python"
	if v := os.Getenv("FLAMEOX_VENV"); v != "" {
		py = filepath.Join(v, "bin", "python")
	}
	return []string{py, "internal/benchreport/peers/perfetto-ops.py", in}
}}
