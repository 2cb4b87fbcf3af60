// Package observations is the capture provider that runs a workload with
// FLAMEOX_OBSERVATIONS set, so that the workload's own calls to flameox's
// observations SDK (Python flameox_observe, Go pkg/observe) record named
// values and phases into a declared artifact.
//
// It imports capture, pkg/observe and sdk/python (the SDK it ships to the workload), and formats/observations for the name of the format it stages.
package observations

import (
	"context"
	"sync"

	"github.com/flameox/flameox/internal/capture"
	obsformat "github.com/flameox/flameox/internal/formats/observations"
	"github.com/flameox/flameox/pkg/observe"
	pysdk "github.com/flameox/flameox/sdk/python"
)

// Names the provider and its output use.
const (
	Name = "observations"
	Role = "observations"
	// File is the artifact's name in the output directory; its suffix is
	// the format's explicit-path suffix.
	File = "flameox.observations.jsonl"
	// SupportDir and OutputDir lay out a request's scratch: the SDK archive
	// lives outside the output directory, and as a zip on PYTHONPATH it
	// gets no bytecode cache, so importing it adds no file.
	SupportDir = "support"
	OutputDir  = "out"
	SDKZip     = pysdk.ModuleName + ".zip"
)

var sdkZip = sync.OnceValues(func() ([]byte, error) {
	return capture.ZipModule(pysdk.ModuleName+".py", pysdk.Module())
})

// Provider is the observations capture provider's contract.
var Provider = &capture.Provider{
	Name:    Name,
	Title:   "workload observations (flameox SDK)",
	Example: []string{"go", "test", "-run", "TestLoad", "./..."},
	Family:  "Reliability",
	Selection: "Run a workload that records values and phases itself through flameox's SDK (Python " +
		"`import flameox_observe`, Go `pkg/observe`). Use when the program knows what to measure (loss, " +
		"batch latency, rows processed, phases of work). ARGV runs with " + observe.EnvVar + " naming the artifact, " +
		"and this provider puts flameox_observe on PYTHONPATH. A workload that records nothing fails with missing outputs.",
	Artifacts: []capture.Role{{
		Role:     Role,
		Format:   obsformat.Spec.Name,
		Pattern:  File,
		Required: true,
		Doc:      "the SDK's JSONL records (docs/observations.md)",
	}},
	Binding: capture.Binding{
		Executable: pysdk.ModuleName,
		InWorkload: true,
		Guidance:   "the workload must call flameox's SDK: Python `import flameox_observe` (provided on PYTHONPATH during capture) or Go github.com/flameox/flameox/pkg/observe",
	},
	Resolve: resolve,
	Plan:    plan,
}

// workload is the resolve and plan this provider shares with the other SDK providers.
var workload = &capture.SDKWorkload{Provider: Name, EnvVar: observe.EnvVar, File: File,
	OutputDir: OutputDir, SupportDir: SupportDir, ZipName: SDKZip, Zip: sdkZip}

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	return workload.Resolve(ctx, req)
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	return workload.Plan(req, scratch, r)
}
