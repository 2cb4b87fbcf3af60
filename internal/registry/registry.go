// Package registry is the one explicit list of what flameox supports: native
// formats, operations (analysis tasks over projections) and capture
// providers. CLI flags, MCP input schemas, explicit-path suffix detection,
// pre-execution compatibility checks and docs/support.md are all derived
// from these lists; nothing registers itself elsewhere. Names live here
// too: operation names are written only in list.go, a provider names its
// formats by their specs, and Check fails on a format or operation name
// written as a literal anywhere else. It imports the formats, projections
// and providers it lists, and what they import.
package registry

import (
	"fmt"
	"slices"
	"sort"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
)

// Example is a bounded, model-visible example of an operation's arguments.
type Example struct {
	Title string
	Args  evidence.Object
}

// Operation is one analysis task.
type Operation struct {
	Name       string // canonical task name, e.g. "summarize_cpu_hotspots"
	Title      string
	Family     string
	Projection *projection.Spec
	Guidance   string // when to use it, for people and agents
	Examples   []Example
	Overhead   string
	// Limitations are stated in every result of this operation.
	Limitations []string
	// Check rejects arguments that do not fit the formats involved before
	// anything runs (before a decode, before a capture's workload). It asks
	// the specs for capabilities, never for names.
	Check func(specs []*formats.Spec, given map[string]bool, args evidence.Object) error
	// DecoderOptions derives decoder options from the operation's
	// arguments, for when the operation decodes explicit paths itself (a
	// text fragment reads only its window).
	DecoderOptions func(given map[string]bool, args evidence.Object) (evidence.Object, error)
	// Exit derives a non-zero exit status from a successful result's
	// summary (a regression gate), with the line that says why; 0 for
	// none. Nil: the operation always exits 0 on success.
	Exit func(s *evidence.Summary) (code int, note string)
	// Outputs are the flameox-rank --format outputs beyond jsonl and table
	// that this operation's result feeds (folded, svg, html, pprof); asked
	// for one, flameox-rank infers an operation that lists it.
	Outputs []string
}

// Params are the operation's arguments: its projection's.
func (o *Operation) Params() []param.Param { return o.Projection.Params }

// Formats derives the formats an operation accepts: every registered format
// that emits a table its projection consumes. Adding a format's table is
// what makes an operation accept it; there is no second list to forget.
func (o *Operation) Formats() []string {
	var out []string
	for _, f := range formatList {
		for _, t := range f.Tables {
			if o.Projection.Consumes(t.Name) {
				out = append(out, f.Name)
				break
			}
		}
	}
	return out
}

// SourceModes derives how an operation can get its input: an explicit path
// when it accepts formats, a capture when some provider feeds it.
func (o *Operation) SourceModes() []string {
	var modes []string
	if len(o.Formats()) > 0 {
		modes = append(modes, "path")
	}
	for _, p := range Providers() {
		if slices.Contains(p.Operations, o.Name) {
			modes = append(modes, "capture")
			break
		}
	}
	return modes
}

// Formats returns every registered format, in registry order.
func Formats() []*formats.Spec { return formatList }

// Operations returns every registered operation.
func Operations() []*Operation { return operationList }

// Providers returns every registered capture provider.
func Providers() []*capture.Provider { return providerList }

// Format finds a format by name.
func Format(name string) (*formats.Spec, bool) {
	for _, f := range formatList {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// OperationByName finds an operation.
func OperationByName(name string) (*Operation, bool) {
	for _, o := range operationList {
		if o.Name == name {
			return o, true
		}
	}
	return nil, false
}

// Provider finds a capture provider.
func Provider(name string) (*capture.Provider, bool) {
	for _, p := range providerList {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// OperationsForTables returns the operations whose projection consumes any
// of the named tables, in registry order.
func OperationsForTables(tables []string) []*Operation {
	var out []*Operation
	for _, o := range operationList {
		for _, t := range o.Projection.Tables {
			if slices.Contains(tables, t.Name) {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// CheckCompatible runs the operation's pre-execution checks: every format
// must be accepted and the given arguments must fit those formats.
func CheckCompatible(op *Operation, fmts []string, given map[string]bool, args evidence.Object) error {
	for _, f := range fmts {
		if accepted := op.Formats(); !slices.Contains(accepted, f) {
			return &evidence.Failure{Code: evidence.CodeUnsupportedFormat,
				Message: fmt.Sprintf("operation %s does not accept format %s (accepted: %v)", op.Name, f, accepted),
				Details: evidence.Object{"format": f, "accepted_formats": accepted}}
		}
	}
	if op.Check != nil {
		specs := make([]*formats.Spec, 0, len(fmts))
		for _, f := range fmts {
			if s, ok := Format(f); ok {
				specs = append(specs, s)
			}
		}
		return op.Check(specs, given, args)
	}
	return nil
}

// ProviderFormats lists the formats a provider declares, sorted.
func ProviderFormats(p *capture.Provider) []string {
	var out []string
	for _, r := range p.Artifacts {
		if r.Format != "" && !slices.Contains(out, r.Format) {
			out = append(out, r.Format)
		}
	}
	sort.Strings(out)
	return out
}

// feeds returns a copy of p that feeds ops: the provider's package
// declares how to capture, the registry what the capture is for.
func feeds(p *capture.Provider, ops ...*Operation) *capture.Provider {
	q := *p
	q.Operations = make([]string, len(ops))
	for i, o := range ops {
		q.Operations[i] = o.Name
	}
	return &q
}
