// Package perf is the capture provider for Linux perf: `perf record` with
// callchains around the workload, writing <OutputDir>/perf.data (format
// perf-data, role cpu-profile). perf is a system package resolved from
// PATH and identified by digest and `perf --version`; before the workload
// runs, Resolve also opens a user-space software counter on itself, the
// same permission perf record needs, so a kernel that forbids sampling
// (perf_event_paranoid, missing capabilities, no perf events at all) is a
// PROVIDER_UNAVAILABLE failure with host guidance, not a failed workload.
//
// It imports capture, evidence, param, and formats/perfscript for the name of the format it stages.
package perf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/perfscript"
	"github.com/flameox/flameox/internal/param"
)

// Argument names.
const (
	ArgCallGraph = "call_graph"
	ArgFrequency = "frequency"
	ArgEvent     = "event"
)

// OutputName is the file perf record writes in the plan's OutputDir.
const OutputName = "perf.data"

const installGuidance = "install perf and put it on PATH: Debian `apt-get install linux-perf`, Ubuntu `apt-get install linux-tools-common linux-tools-$(uname -r)`, Fedora `dnf install perf`"

const permissionGuidance = "allow perf sampling for this user: run as root, grant CAP_PERFMON (or CAP_SYS_ADMIN), or lower the limit with `sysctl -w kernel.perf_event_paranoid=2` (user-space sampling of your own processes; 1 or lower adds kernel frames)"

// Provider is the perf capture provider.
var Provider = &capture.Provider{
	Name:      "perf",
	Example:   []string{"./bench"},
	Title:     "Linux perf record (sampled CPU callchains)",
	Family:    "CPU profiles",
	Selection: "Sample native CPU time with callchains for any Linux process (C, C++, Rust, Go, JIT runtimes with perf maps). Needs the perf tool and permission to open perf events; frame-pointer callchains need binaries built with frame pointers, dwarf works without them at a higher cost.",
	Params: []param.Param{
		{Name: ArgCallGraph, Type: param.Enum, Enum: []string{"fp", "dwarf", "lbr"}, Default: "fp",
			Doc: "callchain method passed to perf record --call-graph: fp (frame pointers), dwarf (stack copies unwound with DWARF), lbr (Intel last-branch records)"},
		{Name: ArgFrequency, Type: param.Int, Default: int64(999), Min: param.F(1), Max: param.F(100000),
			Doc: "sampling frequency in Hz (perf record -F); 999 avoids lockstep with timer ticks"},
		{Name: ArgEvent, Type: param.String,
			Doc: "perf event to sample (perf record -e), e.g. cycles, cpu-clock, instructions:u; default is perf's own (cycles, or cpu-clock where hardware counters are absent)"},
	},
	Artifacts: []capture.Role{
		{Role: "cpu-profile", Format: perfscript.DataSpec.Name, Pattern: OutputName, Required: true,
			Doc: "native perf.data with sampled callchains"},
	},
	Binding: capture.Binding{Executable: "perf", Guidance: installGuidance},
	Resolve: resolve,
	Plan:    plan,
}

// probe opens a user-space software counter on this process, as perf
// record will; tests replace it.
var probe = probePerfEvent

func resolve(ctx context.Context, req *capture.Request) (*capture.Resolved, error) {
	path, digest, err := (&capture.HostTool{Name: "perf", Missing: "perf is not on PATH", Guidance: installGuidance}).Look()
	if err != nil {
		return nil, err
	}
	out, err := capture.HostVersion(ctx, path, 30*time.Second, "PERF_CONFIG=/dev/null")
	version := strings.TrimSpace(string(out))
	if err != nil || !strings.HasPrefix(version, "perf version ") {
		return nil, &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("%s --version did not identify perf (output %q, error %v)", path, version, err),
			Retry:   &evidence.Retry{Action: installGuidance}}
	}
	if err := permitted(); err != nil {
		return nil, err
	}
	return &capture.Resolved{
		Executable: &evidence.Executable{Path: path, SHA256: digest},
		Version:    strings.TrimPrefix(version, "perf version "),
	}, nil
}

// permitted turns the probe's errno into host guidance.
func permitted() error {
	err := probe()
	if err == nil {
		return nil
	}
	paranoid := "unknown"
	if b, rerr := os.ReadFile("/proc/sys/kernel/perf_event_paranoid"); rerr == nil {
		paranoid = strings.TrimSpace(string(b))
	}
	details := evidence.Object{"perf_event_paranoid": paranoid, "errno": err.Error()}
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: fmt.Sprintf("this user may not open perf events (kernel.perf_event_paranoid=%s): perf record would fail", paranoid),
			Details: details, Retry: &evidence.Retry{Action: permissionGuidance}, Err: err}
	case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENODEV), errors.Is(err, syscall.EOPNOTSUPP):
		return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
			Message: "this kernel offers no perf events (perf_event_open: " + err.Error() + "); perf cannot sample here",
			Details: details, Retry: &evidence.Retry{Action: "run on a Linux kernel built with CONFIG_PERF_EVENTS, outside sandboxes that block perf_event_open (seccomp, gVisor)"}, Err: err}
	}
	return &evidence.Failure{Code: evidence.CodeProviderUnavailable,
		Message: "perf_event_open failed: " + err.Error(), Details: details, Err: err}
}

// perfEventAttr is the first, version-0 part of struct perf_event_attr.
type perfEventAttr struct {
	Type         uint32
	Size         uint32
	Config       uint64
	SamplePeriod uint64
	SampleType   uint64
	ReadFormat   uint64
	Flags        uint64
	WakeupEvents uint32
	BpType       uint32
	Config1      uint64
}

// probePerfEvent opens (and closes) a disabled cpu-clock counter on this
// process that excludes the kernel and hypervisor: the least that perf
// record -g on a user workload needs.
func probePerfEvent() error {
	const (
		typeSoftware  = 1
		swCPUClock    = 0
		flagDisabled  = 1 << 0
		flagExclKern  = 1 << 5
		flagExclHV    = 1 << 6
		flagFDCloexec = 1 << 3
	)
	attr := perfEventAttr{Type: typeSoftware, Config: swCPUClock, Flags: flagDisabled | flagExclKern | flagExclHV}
	attr.Size = uint32(unsafe.Sizeof(attr))
	fd, _, errno := syscall.Syscall6(syscall.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(&attr)), 0, ^uintptr(0), ^uintptr(0), flagFDCloexec, 0)
	if errno != 0 {
		return errno
	}
	return syscall.Close(int(fd))
}

var eventName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:/=,@-]*$`)

func plan(req *capture.Request, scratch string, r *capture.Resolved) (*capture.Plan, error) {
	if len(req.Argv) == 0 {
		return nil, evidence.Failf(evidence.CodeInvalidArgument, "perf capture needs a workload command after --")
	}
	mode, _ := req.Args[ArgCallGraph].(string)
	if mode == "" {
		mode = "fp"
	}
	freq, ok := evidence.AsInt(req.Args[ArgFrequency])
	if !ok {
		freq = 999
	}
	out := filepath.Join(scratch, "perf")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, evidence.Wrap(evidence.CodeIOFailure, err, "perf output directory")
	}
	cmd := []string{r.Executable.Path, "record", "--call-graph", mode, "-F", strconv.FormatInt(freq, 10)}
	if ev, _ := req.Args[ArgEvent].(string); ev != "" {
		if !eventName.MatchString(ev) {
			return nil, &evidence.Failure{Code: evidence.CodeInvalidArgument,
				Message:  fmt.Sprintf("event %q is not a perf event name", ev),
				Location: evidence.Location{Field: ArgEvent}}
		}
		cmd = append(cmd, "-e", ev)
	}
	cmd = append(cmd, "-o", filepath.Join(out, OutputName), "--")
	cmd = append(cmd, req.Argv...)
	return &capture.Plan{Command: cmd, Dir: req.Cwd, OutputDir: out}, nil
}
