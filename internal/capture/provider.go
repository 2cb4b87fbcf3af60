package capture

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
)

// Role is one kind of native output a provider declares.
type Role struct {
	Role     string // e.g. "cpu-profile"
	Format   string // registry format name
	Pattern  string // glob, relative to the plan's OutputDir, matching the files
	Required bool   // a completed capture must have at least one
	Doc      string
	// Unflushed says why a process ended by a signal (a budget,
	// cancellation) leaves no such file, when the collector writes it only
	// at a normal exit; the capture block notes it when that happens.
	Unflushed string
}

// Binding says how a provider's collector is found.
type Binding struct {
	Executable string // program name, e.g. "node", "perf", "py-spy"
	// Managed collectors are prepared by `flameox-capture setup --provider
	// NAME` into a version-pinned environment and never taken from PATH.
	Managed bool
	// InWorkload collectors (coverage.py, pytest, memray) must import in the
	// declared workload interpreter; capture probes that interpreter.
	InWorkload bool
	Pinned     string // the pinned version of a managed collector
	Guidance   string // host guidance when the collector is missing
	// Setup is the managed collector's pin, required when Managed is set:
	// `flameox-capture setup --provider NAME` passes it to SetupManaged and
	// the provider's Resolve passes it to ResolveManaged.
	Setup *Managed
}

// Resolved is a collector found and checked before the workload runs.
type Resolved struct {
	Executable *evidence.Executable
	Version    string
}

// Request is one capture request after argument validation.
type Request struct {
	Provider string
	Argv     []string        // the workload command
	Cwd      string          // absolute
	Args     evidence.Object // validated provider arguments
	// Limits are decoder limits the caller gave with the capture. Capture
	// does not enforce them (flameox-decode does); they travel with the
	// request so a composed caller (MCP) can hand them downstream.
	Limits evidence.Object
}

// SupportFile is a file flameox writes for the collector (a plugin, a
// launcher). It is placed before the output baseline is taken, so it never
// counts as workload growth.
type SupportFile struct {
	Path    string // absolute, inside the request's scratch
	Content []byte
	Mode    uint32
}

// Plan is what to execute for a request.
type Plan struct {
	Command    []string // full argv; Command[0] is resolved
	Env        []string // additions to the environment, KEY=VALUE
	Dir        string   // working directory
	OutputDir  string   // where declared outputs appear
	Support    []SupportFile
	AcceptExit []int // exit statuses that count as completed; default {0}
	// AnyExit makes every exit status count as completed (not a signal):
	// the status is provenance, recorded in the capture block and a note,
	// and the collector's data stays evidence (coverage of a suite with
	// failing tests is still that run's coverage). Post commands run.
	AnyExit bool
	// Post commands run after the workload completes, in order, under the
	// same budgets (e.g. `coverage json` to write a report in the workload
	// interpreter). A failing post command fails the capture.
	Post [][]string
	// FullConsole forces full, disk-backed console retention: the streams
	// are the evidence (process-output capture). Console files are written
	// to <scratch>/console/stdout and <scratch>/console/stderr and emitted
	// as artifacts with roles console-stdout / console-stderr, format text.
	FullConsole bool
}

// Provider is one capture provider's immutable contract. Argument
// validation, MCP capture schemas and compatibility checks derive from it.
type Provider struct {
	Name       string
	Title      string
	Family     string
	Selection  string // when to pick this provider, for people and agents
	Params     []param.Param
	Artifacts  []Role
	Operations []string // operations its outputs feed
	// Example is a representative workload argv (after `--`), used in
	// help text and docs, e.g. ["node", "app.js"].
	Example []string
	Binding Binding
	// Resolve finds and checks the collector. An absent or changed collector
	// is a PROVIDER_UNAVAILABLE failure with a retry action or guidance.
	Resolve func(ctx context.Context, req *Request) (*Resolved, error)
	// Plan builds the command for a request inside a fresh scratch dir.
	Plan func(req *Request, scratch string, r *Resolved) (*Plan, error)
}

// WorkloadPath finds a program the way the workload's ARGV[0] runs: a name
// with a slash relative to the request's working directory, a bare name
// through PATH (the only lookup that can fail; its error is exec's).
func WorkloadPath(name, cwd string) (string, error) {
	if !strings.ContainsRune(name, '/') {
		return exec.LookPath(name)
	}
	if filepath.IsAbs(name) {
		return name, nil
	}
	return filepath.Join(cwd, name), nil
}

// WorkloadExecutable is WorkloadPath made absolute and checked to be an
// executable regular file; what names the program in the failures
// ("ARGV[0]", "interpreter"). Symbolic links are kept, so a virtual
// environment's interpreter stays the environment's.
func WorkloadExecutable(name, cwd, what string) (string, error) {
	p, err := WorkloadPath(name, cwd)
	if err != nil {
		return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("%s %q is not on PATH", what, name), Err: err, Location: evidence.Location{Field: "argv"}}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", evidence.Wrap(evidence.CodeInvalidArgument, err, "%s %q", what, name)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", &evidence.Failure{Code: evidence.CodeInvalidArgument,
			Message: fmt.Sprintf("%s %s is not an executable file", what, abs), Err: err, Location: evidence.Location{Field: "argv"}}
	}
	return abs, nil
}

// ZipModule returns a zip archive holding one Python module file, for a
// provider to put on the workload's PYTHONPATH: Python writes no bytecode
// cache for zip imports, so importing it adds no file. A fixed time keeps
// the archive byte-identical across builds.
func ZipModule(file string, source []byte) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	h := &zip.FileHeader{Name: file, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
	h.SetMode(0o444)
	w, err := zw.CreateHeader(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(source); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// PythonPath is the environment entry that imports from first before
// anything on the caller's own PYTHONPATH.
func PythonPath(first string) string {
	if old := os.Getenv("PYTHONPATH"); old != "" {
		first += string(os.PathListSeparator) + old
	}
	return "PYTHONPATH=" + first
}
