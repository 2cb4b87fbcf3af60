// Package benchsamples is the capture provider that runs a benchmark
// harness with FLAMEOX_BENCH_SAMPLES naming the artifact, so that the
// values the harness records through flameox's benchmark-samples SDK
// (Python flameox_bench, on PYTHONPATH during capture; Go
// pkg/benchsamples) become a bench-samples artifact.
//
// It imports capture, evidence, pkg/benchsamples, sdk/python and
// formats/benchsamples (the format it stages).
package benchsamples

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
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

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "provider benchmark-samples needs a workload ARGV", Location: evidence.Location{Field: "argv"}}
	}
	exe, err := capture.WorkloadExecutable(req.Argv[0], req.Cwd, "ARGV[0]")
	if err != nil {
		return nil, err
	}
	sum, err := capture.FileSHA256(exe)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "hash %s", exe)
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: exe, SHA256: sum}}, nil
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 || r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "provider benchmark-samples planned without a resolved ARGV")
	}
	z, err := sdkZip()
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "build the SDK archive")
	}
	zipPath := filepath.Join(scratch, SupportDir, SDKZip)
	out := filepath.Join(scratch, OutputDir)
	return &capture.Plan{
		Command:    append([]string{r.Executable.Path}, req.Argv[1:]...),
		Env:        []string{bs.EnvVar + "=" + filepath.Join(out, File), capture.PythonPath(zipPath)},
		Dir:        req.Cwd,
		OutputDir:  out,
		Support:    []capture.SupportFile{{Path: zipPath, Content: z, Mode: 0o444}},
		AcceptExit: []int{0},
	}, nil
}
