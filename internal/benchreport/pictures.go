package main

import (
	"os"
	"os/exec"
	"path/filepath"
)

// picturesCases measure the stack outputs (issue 15): a flame graph of a
// 100 MiB V8 profile, to read beside "v8 decode+rank 100 MiB" (target: at
// most twice its time), and folded stacks of the 200 MB perf script, to
// read beside "perf-script decode+rank 200 MB" (target: within 1.2×) and
// inferno-collapse-perf, the peer a user would pick for the same job.
func picturesCases(v8, perf func(string, int64) error, perfInput string) []benchCase {
	picture := func(format string) func(bin, in string) []string {
		return func(bin, in string) []string {
			return []string{filepath.Join(bin, "flameox-rank"), "--format", format, in}
		}
	}
	return []benchCase{
		{"v8 svg 100 MiB", "v8-100MiB.cpuprofile", 100 << 20, v8, picture("svg"), 0, true, nil},
		{"perf-script folded 200 MB", perfInput, 200e6, perf, picture("folded"), 0, true, infernoCollapsePerf},
	}
}

// infernoCollapsePerf is inferno's perf script folder (crates.io inferno).
var infernoCollapsePerf = &peer{name: "inferno-collapse-perf " + version(cargoTool("inferno-collapse-perf"), "--version"),
	argv: func(in string) []string { return []string{cargoTool("inferno-collapse-perf"), in} }}

// cargoTool finds a tool cargo installed: on PATH, else in ~/.cargo/bin.
func cargoTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cargo", "bin", name)
	}
	return name
}
