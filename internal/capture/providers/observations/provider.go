// Package observations is the capture provider that runs a workload with
// FLAMEOX_OBSERVATIONS set, so that the workload's own calls to flameox's
// observations SDK (Python flameox_observe, Go pkg/observe) record named
// values and phases into a declared artifact.
package observations

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
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
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	h := &zip.FileHeader{Name: pysdk.ModuleName + ".py", Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.SetMode(0o444)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(pysdk.Module()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
})

// Provider is the observations capture provider's contract.
var Provider = &capture.Provider{
	Name:   Name,
	Title:  "workload observations (flameox SDK)",
	Family: "Reliability",
	Selection: "Run ARGV with " + observe.EnvVar + " naming the artifact, so that values and phases the workload " +
		"records itself through flameox's SDK (Python `import flameox_observe`, which this provider puts on " +
		"PYTHONPATH; Go `pkg/observe`) become evidence. Use when the program knows what to measure (loss, " +
		"batch latency, rows processed, phases of work). A workload that records nothing fails with missing outputs.",
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

// Executable resolves ARGV[0] the way the workload runs it: a name without
// a slash through PATH, a relative path against the working directory.
func Executable(name, cwd string) (string, error) {
	p := name
	if !strings.ContainsRune(name, '/') {
		lp, err := exec.LookPath(name)
		if err != nil {
			return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message: fmt.Sprintf("ARGV[0] %q is not on PATH", name), Err: err, Location: evidence.Location{Field: "argv"}}
		}
		p = lp
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", evidence.Wrap(evidence.CodeInvalidArgument, err, "ARGV[0] %q", name)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("ARGV[0] %s is not an executable file", abs), Err: err, Location: evidence.Location{Field: "argv"}}
	}
	return abs, nil
}

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "provider observations needs a workload ARGV", Location: evidence.Location{Field: "argv"}}
	}
	exe, err := Executable(req.Argv[0], req.Cwd)
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
		return nil, evidence.Failf(evidence.CodeInternal, "provider observations planned without a resolved ARGV")
	}
	z, err := sdkZip()
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "build the SDK archive")
	}
	zipPath := filepath.Join(scratch, SupportDir, SDKZip)
	out := filepath.Join(scratch, OutputDir)
	pythonPath := zipPath
	if old := os.Getenv("PYTHONPATH"); old != "" {
		pythonPath += string(os.PathListSeparator) + old
	}
	return &capture.Plan{
		Command:    append([]string{r.Executable.Path}, req.Argv[1:]...),
		Env:        []string{observe.EnvVar + "=" + filepath.Join(out, File), "PYTHONPATH=" + pythonPath},
		Dir:        req.Cwd,
		OutputDir:  out,
		Support:    []capture.SupportFile{{Path: zipPath, Content: z, Mode: 0o444}},
		AcceptExit: []int{0},
	}, nil
}
