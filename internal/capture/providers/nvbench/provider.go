// Package nvbench is the capture provider that runs an NVBench benchmark
// binary (any program built on NVIDIA's NVBench) with `--json FILE`, so
// that NVBench writes its results (benchmarks, devices, axes, states with
// their summaries) into the capture's output directory.
//
// The binary is the workload, ARGV[0]. Resolve probes it before the
// capture: `ARGV[0] --version` must print NVBench's version line
// (`NVBench v0.1.0 ...`), else `ARGV[0] --help` must be NVBench's option
// help (it names NVBench and --json); a program that shows neither is
// PROVIDER_UNAVAILABLE. The rest of ARGV passes to NVBench unchanged
// (benchmark and axis selection, devices, stopping criteria); the provider
// owns --json, so ARGV may not give --json or --jsonbin itself.
package nvbench

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	nvbenchformat "github.com/flameox/flameox/internal/formats/nvbench"
)

// Names of the provider and its output.
const (
	Name      = "nvbench"
	Role      = "nvbench-result"
	File      = "nvbench.json"
	OutputDir = "out"
)

// probeTimeout bounds each probe run of the binary.
const probeTimeout = 30 * time.Second

// versionLine is NVBench's --version answer.
var versionLine = regexp.MustCompile(`\bNVBench v?(\d+\.\d+\.\d+)`)

// Provider is the registry entry.
var Provider = &capture.Provider{
	Name:    Name,
	Title:   "NVBench benchmark binary",
	Example: []string{"./build/bin/nvbench.example.axes", "-b", "0"},
	Family:  "Benchmarks",
	Selection: "Run an NVBench benchmark binary (ARGV[0], built on NVIDIA's NVBench) with `--json FILE`, for " +
		"summarize_benchmarks and compare_benchmarks over its states' summaries. The binary is probed first " +
		"(`--version`, else `--help`, must show NVBench). The rest of ARGV passes to NVBench unchanged; " +
		"the provider owns --json. Needs a CUDA device to measure anything.",
	Artifacts: []capture.Role{{Role: Role, Format: nvbenchformat.FormatName, Pattern: File, Required: true,
		Doc:       "NVBench's --json result: benchmarks, devices, axes, states with summaries",
		Unflushed: "NVBench writes its JSON when all benchmarks have run: a binary ended early leaves none"}},
	Binding: capture.Binding{
		Executable: "nvbench",
		InWorkload: true,
		Guidance:   "ARGV[0] must be a benchmark binary built with NVBench (https://github.com/NVIDIA/nvbench), e.g. build/bin/nvbench.example.axes",
	},
	Resolve: Resolve,
	Plan:    Plan,
}

// Resolve checks ARGV and probes ARGV[0] for NVBench.
func Resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: "provider nvbench needs an NVBench benchmark binary as ARGV[0]",
			Location: evidence.Location{Field: "argv"}}
	}
	if err := checkArgv(req.Argv[1:]); err != nil {
		return nil, err
	}
	exe, err := capture.WorkloadExecutable(req.Argv[0], req.Cwd, "ARGV[0]")
	if err != nil {
		return nil, err
	}
	version, err := probe(ctx, exe, req.Cwd)
	if err != nil {
		return nil, err
	}
	sum, err := capture.FileSHA256(exe)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "hash %s", exe)
	}
	return &capture.Resolved{Executable: &evidence.Executable{Path: exe, SHA256: sum}, Version: version}, nil
}

// checkArgv refuses the options the provider owns.
func checkArgv(args []string) error {
	for _, a := range args {
		for _, owned := range []string{"--json", "--jsonbin"} {
			if a == owned || strings.HasPrefix(a, owned+"=") {
				return &evidence.Failure{Code: evidence.CodeInvalidArgument, Location: evidence.Location{Field: "argv"},
					Message: fmt.Sprintf("ARGV gives %s; provider nvbench writes the JSON result itself: drop it", owned)}
			}
		}
	}
	return nil
}

// probe runs the binary with --version, then --help, and returns the
// NVBench version it reports ("" when only the help shows NVBench).
func probe(ctx context.Context, exe, dir string) (string, error) {
	out, verr := run(ctx, exe, dir, "--version")
	if m := versionLine.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	help, herr := run(ctx, exe, dir, "--help")
	if strings.Contains(string(help), "NVBench") && strings.Contains(string(help), "--json") {
		return "", nil
	}
	why := fmt.Sprintf("`%s --version` printed %s", filepath.Base(exe), quoteTail(out))
	if verr != nil {
		why += fmt.Sprintf(" (%v)", verr)
	}
	if herr != nil && errors.Is(herr, context.DeadlineExceeded) {
		why += "; --help did not answer"
	}
	return "", &evidence.Failure{Code: evidence.CodeProviderUnavailable,
		Message: fmt.Sprintf("%s is not an NVBench benchmark binary: %s, and its --help does not show NVBench's options", exe, why),
		Retry:   &evidence.Retry{Action: "give an NVBench benchmark binary as ARGV[0] (one built with NVBench; it answers --version with `NVBench vX.Y.Z`)"}}
}

func run(ctx context.Context, exe, dir, flag string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, flag)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, err
}

// quoteTail quotes the probe's answer, bounded, for the failure message.
func quoteTail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "nothing"
	}
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// Plan builds `ARGV[0] ARGV[1:]... --json OUT/nvbench.json`.
func Plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 || r == nil || r.Executable == nil {
		return nil, evidence.Failf(evidence.CodeInternal, "provider nvbench planned without a resolved binary")
	}
	out := filepath.Join(scratch, OutputDir)
	cmd := append(append([]string{r.Executable.Path}, req.Argv[1:]...), "--json", filepath.Join(out, File))
	return &capture.Plan{Command: cmd, Dir: req.Cwd, OutputDir: out, AcceptExit: []int{0}}, nil
}
