package main

import (
	"github.com/flameox/flameox/internal/formats/rocprof"
)

// rocprofSeed is the real rocprofv3 kernel_trace the inputs grow from.
const rocprofSeed = "testdata/rocprofv3/kernel_trace.csv"

// rocprofCases: a rocprofv3 kernel_trace CSV grown from a real one to
// 100 MB, decoded, and summarized by operation beside Python's csv
// module summing the same durations.
func rocprofCases() []benchCase {
	gen := seeded(rocprofSeed, rocprof.Generate)
	ops := traceOps()
	return []benchCase{
		{"rocprofv3 kernel_trace decode 100 MB", "rocprofv3-100MB-kernel_trace.csv", 100e6, gen, decodeArgv, 0, true, nil},
		{"rocprofv3 kernel_trace summarize operations 100 MB", "rocprofv3-100MB-kernel_trace.csv", 100e6, gen, ops, 0, true, pythonRocprof},
	}
}

// pythonRocprof is Python's csv module summing durations per name
// (internal/benchreport/peers/rocprof-ops.py).
var pythonRocprof = &peer{name: "python3 csv " + version("python3", "--version"), argv: func(in string) []string {
	return []string{"python3", "internal/benchreport/peers/rocprof-ops.py", in}
}}
