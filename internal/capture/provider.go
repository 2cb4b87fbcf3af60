package capture

import (
	"context"

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
