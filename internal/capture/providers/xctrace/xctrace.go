// Package xctrace is the capture provider for Apple's xctrace (Xcode's
// Instruments command line): `xctrace record --template 'Time Profiler'
// --output <scratch>/run.trace --no-prompt --launch -- <workload>`, then
// `xctrace export --input run.trace --xpath '…/table[@schema="time-profile"]'
// --output time-profile.xml`, staging the XML it exports (format
// xctrace-xml). xctrace ships with Xcode on macOS and flameox never
// installs it: before the workload runs it is resolved (xctrace on PATH,
// else `xcrun xctrace`) and `xctrace version` must identify it; otherwise
// the capture is PROVIDER_UNAVAILABLE with host guidance.
//
// It imports capture, evidence, param, and formats/xctrace for the name
// of the format it stages.
package xctrace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/xctrace"
	"github.com/flameox/flameox/internal/param"
)

// Argument names.
const (
	ArgInstrument = "instrument"
	ArgTimeLimit  = "time_limit"
)

// Guidance is what to do when xctrace is missing.
const Guidance = "xctrace ships with Xcode (12 or later) on macOS: install Xcode, select it with " +
	"`sudo xcode-select -s /Applications/Xcode.app`, and check `xcrun xctrace version`; the Command Line Tools alone " +
	"do not include it, and it does not run on Linux or Windows (capture there with perf or py-spy instead)"

// instruments maps the instrument argument to its recording template and
// the table exported from it.
var instruments = map[string]struct{ template, schema string }{
	"time-profiler": {"Time Profiler", "time-profile"},
	"cpu-profiler":  {"CPU Profiler", "cpu-profile"},
}

// Provider is the xctrace capture provider.
var Provider = &capture.Provider{
	Name:    "xctrace",
	Example: []string{"./app"},
	Title:   "Apple xctrace (Instruments Time Profiler on macOS)",
	Family:  "CPU profiles",
	Selection: "Sample a native macOS workload with Instruments' Time Profiler (or CPU Profiler): backtraces with " +
		"symbols and binaries per thread and process. The exported table feeds the CPU hotspot, caller-edge and " +
		"stack operations. Needs macOS with Xcode.",
	Params: []param.Param{
		{Name: ArgInstrument, Type: param.Enum, Enum: []string{"time-profiler", "cpu-profiler"}, Default: "time-profiler",
			Doc: "time-profiler (template \"Time Profiler\", table time-profile, weights in ns) or cpu-profiler (template \"CPU Profiler\", table cpu-profile, weights in cycles)"},
		{Name: ArgTimeLimit, Type: param.Int, Min: param.F(1), Max: param.F(86400),
			Doc: "seconds after which xctrace stops recording (--time-limit); unset: until the workload exits"},
	},
	Artifacts: []capture.Role{
		{Role: "cpu-profile", Format: xctrace.Spec.Name, Pattern: "*.xml", Required: true,
			Doc:       "the exported time-profile (or cpu-profile) table of run 1",
			Unflushed: "xctrace exports the table after the recording ends; a stopped capture leaves no export"},
	},
	Binding: capture.Binding{Executable: "xctrace", Guidance: Guidance},
	Resolve: resolve,
	Plan:    plan,
}

var versionLine = regexp.MustCompile(`xctrace version ([0-9][^\s]*)`)

// xcrun is the name xctrace is reached through when it is not on PATH
// itself (replaced by tests).
var xcrun = "xcrun"

func resolve(ctx context.Context, _ *capture.Request) (*capture.Resolved, error) {
	var argv []string
	if p, err := exec.LookPath("xctrace"); err == nil {
		argv = []string{p}
	} else if p, err := exec.LookPath(xcrun); err == nil {
		argv = []string{p, "xctrace"}
	} else {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: "xctrace (Xcode's Instruments command line) is not on PATH, and neither is xcrun", Retry: &evidence.Retry{Action: Guidance}, Err: err}
	}
	path, err := filepath.Abs(argv[0])
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "resolve xctrace")
	}
	argv[0] = path
	digest, err := capture.FileSHA256(path)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeProviderUnavailable, err, "read %s", path)
	}
	out, err := capture.HostProbe(ctx, append(argv[:len(argv):len(argv)], "version"), 60*time.Second)
	m := versionLine.FindSubmatch(out)
	if err != nil || m == nil {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("%q version did not print an xctrace version (error %v)", argv, err),
			Retry:   &evidence.Retry{Action: Guidance}, Details: evidence.Object{"xctrace": path}}
	}
	// Through xcrun, the executable is xcrun itself (plan adds "xctrace").
	return &capture.Resolved{Executable: &evidence.Executable{Path: path, SHA256: digest}, Version: string(m[1])}, nil
}

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "xctrace capture needs a workload command after --")
	}
	name, _ := req.Args[ArgInstrument].(string)
	if name == "" {
		name = "time-profiler"
	}
	ins := instruments[name]
	out := filepath.Join(scratch, "xctrace")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "xctrace output directory")
	}
	base := []string{r.Executable.Path}
	if filepath.Base(r.Executable.Path) == "xcrun" {
		base = append(base, "xctrace")
	}
	trace := filepath.Join(out, "run.trace")
	rec := append(append([]string{}, base...), "record", "--template", ins.template, "--output", trace, "--no-prompt")
	if n, ok := evidence.AsInt(req.Args[ArgTimeLimit]); ok && n > 0 {
		rec = append(rec, "--time-limit", fmt.Sprintf("%ds", n))
	}
	rec = append(rec, "--launch", "--")
	rec = append(rec, req.Argv...)
	export := append(append([]string{}, base...), "export", "--input", trace,
		"--xpath", `/trace-toc/run[@number="1"]/data/table[@schema="`+ins.schema+`"]`,
		"--output", filepath.Join(out, ins.schema+".xml"))
	return &capture.Plan{Command: rec, Dir: req.Cwd, OutputDir: out, Post: [][]string{export}}, nil
}
