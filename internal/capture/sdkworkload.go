package capture

import (
	"context"
	"path/filepath"

	"github.com/flameox/flameox/internal/evidence"
)

// SDKWorkload is the resolve and plan of a provider whose workload writes
// its own evidence through a flameox SDK (observations, benchmark
// samples): ARGV runs as given, with EnvVar naming the artifact and the
// SDK's Python module on PYTHONPATH as a zip in the scratch's SupportDir,
// outside the output directory (a zip import writes no bytecode cache, so
// importing it adds no file there).
type SDKWorkload struct {
	Provider   string // the provider's name, for its failures
	EnvVar     string // the variable the SDK reads the artifact's path from
	File       string // the artifact's name in OutputDir
	OutputDir  string // the output directory's name in the scratch
	SupportDir string // the support directory's name in the scratch
	ZipName    string // the SDK archive's name in SupportDir
	// Zip builds the SDK archive (once: see ZipModule).
	Zip func() ([]byte, error)
}

// Resolve binds ARGV[0] as the workload runs it.
func (w *SDKWorkload) Resolve(_ context.Context, req *Request) (*Resolved, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "provider " + w.Provider + " needs a workload ARGV", Location: evidence.Location{Field: "argv"}}
	}
	exe, err := WorkloadExecutable(req.Argv[0], req.Cwd, "ARGV[0]")
	if err != nil {
		return nil, err
	}
	sum, err := FileSHA256(exe)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "hash %s", exe)
	}
	return &Resolved{Executable: &evidence.Executable{Path: exe, SHA256: sum}}, nil
}

// Plan runs the resolved ARGV with the SDK's environment.
func (w *SDKWorkload) Plan(req *Request, scratch string, r *Resolved) (*Plan, error) {
	if len(req.Argv) == 0 || r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "provider %s planned without a resolved ARGV", w.Provider)
	}
	z, err := w.Zip()
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "build the SDK archive")
	}
	zipPath := filepath.Join(scratch, w.SupportDir, w.ZipName)
	out := filepath.Join(scratch, w.OutputDir)
	return &Plan{
		Command:    append([]string{r.Executable.Path}, req.Argv[1:]...),
		Env:        []string{w.EnvVar + "=" + filepath.Join(out, w.File), PythonPath(zipPath)},
		Dir:        req.Cwd,
		OutputDir:  out,
		Support:    []SupportFile{{Path: zipPath, Content: z, Mode: 0o444}},
		AcceptExit: []int{0},
	}, nil
}
