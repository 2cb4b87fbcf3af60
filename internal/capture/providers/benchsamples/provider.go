// Package benchsamples is the capture provider that runs a benchmark
// harness with FLAMEOX_BENCH_SAMPLES naming the artifact, so that the
// values the harness records through flameox's benchmark-samples SDK
// (Python flameox_bench, on PYTHONPATH during capture; Go
// pkg/benchsamples) become a bench-samples artifact.
//
// It imports capture, pkg/benchsamples, sdk/python and
// formats/benchsamples (the format it stages).
package benchsamples

import (
	"context"
	"sync"

	"github.com/flameox/flameox/internal/capture"
	bsformat "github.com/flameox/flameox/internal/formats/benchsamples"
	bs "github.com/flameox/flameox/pkg/benchsamples"
	pysdk "github.com/flameox/flameox/sdk/python"
)

// Names the provider and its output use.
const (
	Name = "benchmark-samples"
	Role = "bench-samples"
	// File is the artifact's name in the output directory; its suffix is
	// the format's explicit-path suffix.
	File       = "flameox.bench.jsonl"
	SupportDir = "support"
	OutputDir  = "out"
	SDKZip     = pysdk.BenchModuleName + ".zip"
)

var sdkZip = sync.OnceValues(func() ([]byte, error) {
	return capture.ZipModule(pysdk.BenchModuleName+".py", pysdk.BenchModule())
})

// Provider is the benchmark-samples capture provider's contract.
var Provider = &capture.Provider{
	Name:    Name,
	Title:   "benchmark samples (flameox SDK)",
	Example: []string{"python3", "bench.py"},
	Family:  "Benchmarks",
	Selection: "Run a benchmark harness that records its values through flameox's benchmark-samples SDK " +
		"(Python `import flameox_bench`, Go `pkg/benchsamples`), for summarize_benchmarks and compare_benchmarks. " +
		"ARGV runs with " + bs.EnvVar + " naming the artifact, and this provider puts flameox_bench on PYTHONPATH. " +
		"A harness that writes no file fails with missing outputs.",
	Artifacts: []capture.Role{{
		Role:     Role,
		Format:   bsformat.Spec.Name,
		Pattern:  File,
		Required: true,
		Doc:      "the SDK's JSONL series (docs/benchmarks.md)",
	}},
	Binding: capture.Binding{
		Executable: pysdk.BenchModuleName,
		InWorkload: true,
		Guidance:   "the harness must write through flameox's SDK: Python `flameox_bench.Writer()` (provided on PYTHONPATH during capture) or Go github.com/flameox/flameox/pkg/benchsamples FromEnv",
	},
	Resolve: resolve,
	Plan:    plan,
}

// workload is the resolve and plan this provider shares with the other SDK providers.
var workload = &capture.SDKWorkload{Provider: Name, EnvVar: bs.EnvVar, File: File,
	OutputDir: OutputDir, SupportDir: SupportDir, ZipName: SDKZip, Zip: sdkZip}

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	return workload.Resolve(ctx, req)
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	return workload.Plan(req, scratch, r)
}
