package mcpserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/registry"
)

// MaxPaths bounds how many artifacts one analysis call ranks together.
const MaxPaths = 32

// Argument names the server owns. Operation and provider parameters may
// not reuse them; New fails when one does, rather than shadowing it.
var (
	analysisFields = []string{"paths", "format", "limits", "options", "detail"}
	captureFields  = []string{"argv", "cwd", "budget", "console_output", "preserve", "analysis", "detail"}
	nestedFields   = []string{"operation", "limits", "options"}
)

// CaptureToolName is the MCP tool name of a capture provider:
// node-cpu-profile → capture_node_cpu_profile.
func CaptureToolName(provider string) string {
	return "capture_" + strings.ReplaceAll(provider, "-", "_")
}

// specsOf returns the registered specs of the named formats, in order.
func specsOf(names []string) []*formats.Spec {
	var out []*formats.Spec
	for _, n := range names {
		if s, ok := registry.Format(n); ok {
			out = append(out, s)
		}
	}
	return out
}

// limitsSchema describes the raw parser ceilings of the given formats,
// named but not listed: the server checks each name against the formats
// (an unknown one fails naming every accepted one) and a crossed limit's
// failure names it, its value and the observed value; the instructions
// say what limits are once, docs/support.md lists them with defaults.
func limitsSchema(specs []*formats.Spec) evidence.Object {
	for _, s := range specs {
		if len(s.Limits) > 0 {
			return evidence.Object{"type": "object"}
		}
	}
	return nil
}

// optionsSchema describes the decoder options of the given formats by
// name only: the format that decodes an artifact declares and validates
// its options strictly (types and bounds), and an unknown name fails
// naming every accepted one; docs/support.md describes them. The
// description is the names alone: the instructions say what options are.
func optionsSchema(specs []*formats.Spec) evidence.Object {
	var names []string
	for _, s := range specs {
		for _, p := range s.Options {
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return evidence.Object{"type": "object", "description": strings.Join(names, ", ")}
}

func checkReserved(what string, params []param.Param, reserved []string) error {
	for _, p := range params {
		if slices.Contains(reserved, p.Name) {
			return fmt.Errorf("mcpserver: %s parameter %q collides with a field the server owns", what, p.Name)
		}
	}
	return nil
}

// maxParamDoc bounds an argument's description in a tool's schema (see
// clipDoc); docs/support.md has the whole text.
const maxParamDoc = 56

// compactSchema bounds the descriptions of a schema's properties and
// drops what carries nothing a model needs: the type beside an enum (the
// enum says it), and the default of a boolean that is false (the
// instructions say an omitted boolean is false unless its default says
// otherwise). Types, enums, bounds, other defaults and required stay; the
// server validates every argument strictly anyway.
func compactSchema(schema evidence.Object) evidence.Object {
	props, _ := schema["properties"].(evidence.Object)
	for _, v := range props {
		o, ok := v.(evidence.Object)
		if !ok {
			continue
		}
		if d, ok := o["description"].(string); ok && o["type"] != "object" {
			o["description"] = clipDoc(d, maxParamDoc) // an object's (options) is its names
		}
		if _, ok := o["enum"]; ok && o["type"] == "string" {
			delete(o, "type")
		}
		if o["type"] == "boolean" && o["default"] == false {
			delete(o, "default")
		}
	}
	return schema
}

// clipDoc bounds an argument's description at about n bytes, at a clause
// boundary only: a longer one keeps the clauses (up to "; ", outside
// parentheses) that fit, or its first clause; then drops a trailing
// reference to the native tool's flag or the pattern syntax ("(--idle)",
// "(RE2)": the CLI's words, which docs/support.md keeps). What is still
// longer stays whole rather than lose its sense; a parenthesis listing
// values, or the detail after a colon (a pattern's syntax, where a cursor
// comes from), is never dropped.
func clipDoc(d string, n int) string {
	if len(d) <= n {
		return d
	}
	cut := -1 // the last clause end within n, else the first
	for i := 0; i+1 < len(d); i++ {
		if d[i] == ';' && d[i+1] == ' ' && strings.Count(d[:i], "(") == strings.Count(d[:i], ")") {
			if i > n && cut > 0 {
				break
			}
			cut = i
		}
	}
	if cut > 0 {
		if d = d[:cut]; len(d) <= n {
			return d
		}
	}
	if i := strings.LastIndex(d, " ("); i > 0 && strings.HasSuffix(d, ")") && !strings.Contains(d[i+2:], "(") {
		if p := d[i+2:]; strings.HasPrefix(p, "-") || strings.Contains(p, " -") || p == "RE2)" {
			return d[:i]
		}
	}
	return d
}

// shareDocs moves the descriptions of arguments several tools share out
// of their schemas: for each argument name, its most common description
// (used by at least two schemas; a tie goes to the first in byte order)
// is removed wherever it is used and returned, by name, for the
// instructions, which say it once. A schema that describes the name
// otherwise keeps its own description: there its meaning differs.
func shareDocs(schemas []evidence.Object) [][2]string {
	count := map[string]map[string]int{}
	for _, in := range schemas {
		for name, v := range in["properties"].(evidence.Object) {
			if d, ok := shareable(v); ok {
				if count[name] == nil {
					count[name] = map[string]int{}
				}
				count[name][d]++
			}
		}
	}
	common := map[string]string{}
	var out [][2]string
	for _, name := range sortedNames(count) {
		best, n := "", 1
		for _, d := range sortedNames(count[name]) {
			if count[name][d] > n {
				best, n = d, count[name][d]
			}
		}
		if best != "" {
			common[name] = best
			out = append(out, [2]string{name, best})
		}
	}
	for _, in := range schemas {
		for name, v := range in["properties"].(evidence.Object) {
			if d, ok := shareable(v); ok && common[name] == d {
				delete(v.(evidence.Object), "description")
			}
		}
	}
	return out
}

// shareable is a property's description, unless it is an object's (the
// names of options), which is that object's own.
func shareable(v any) (string, bool) {
	o, _ := v.(evidence.Object)
	d, ok := o["description"].(string)
	return d, ok && o["type"] != "object"
}

// detailSchema is the detail argument every evidence tool takes.
var detailSchema = evidence.Object{"enum": []string{DetailCompact, DetailFull}}

// analysisSchema is the input schema of an operation's analysis tool.
func analysisSchema(op *registry.Operation) (evidence.Object, error) {
	if err := checkReserved("operation "+op.Name, op.Params(), analysisFields); err != nil {
		return nil, err
	}
	specs := specsOf(op.Formats())
	extra := map[string]evidence.Object{
		"paths": {
			"type":     "array",
			"items":    evidence.Object{"type": "string"},
			"minItems": 1,
			"maxItems": MaxPaths,
		},
		"detail": detailSchema,
	}
	for name, o := range map[string]evidence.Object{"limits": limitsSchema(specs), "options": optionsSchema(specs)} {
		if o != nil { // a format that declares none: the argument is refused
			extra[name] = o
		}
	}
	if fs := op.Formats(); len(fs) > 0 {
		extra["format"] = evidence.Object{"enum": fs}
	}
	return compactSchema(param.JSONSchema(op.Params(), extra, []string{"paths"})), nil
}

// feeds returns the formats a provider declares that an operation accepts.
func feeds(p *capture.Provider, op *registry.Operation) []string {
	var out []string
	for _, f := range registry.ProviderFormats(p) {
		if slices.Contains(op.Formats(), f) {
			out = append(out, f)
		}
	}
	return out
}

// captureSchema is the input schema of a provider's capture tool.
func captureSchema(p *capture.Provider, ops []*registry.Operation) (evidence.Object, error) {
	if err := checkReserved("provider "+p.Name, p.Params, captureFields); err != nil {
		return nil, err
	}
	extra := map[string]evidence.Object{
		"argv": {
			"type":     "array",
			"items":    evidence.Object{"type": "string"},
			"minItems": 1,
		},
		"cwd":            {"type": "string"},
		"budget":         budgetSchema(),
		"console_output": {"enum": []string{capture.ConsoleBounded, capture.ConsoleFull}},
		"preserve":       {"type": "string"},
		"detail":         detailSchema,
	}
	if len(ops) > 0 {
		a, err := nestedSchema(p, ops)
		if err != nil {
			return nil, err
		}
		extra["analysis"] = a
	}
	return compactSchema(param.JSONSchema(p.Params, extra, []string{"argv"})), nil
}

// budgetSchema is the workload budget, from capture's argument model:
// typed and strict; its names are said once, in the instructions.
func budgetSchema() evidence.Object {
	return evidence.Object{"type": "object"}
}

// nestedSchema is the "analysis" object of a capture tool (and of
// reanalyze): the operation, decode limits and options, and the
// operation's own arguments. Those are declared once, by the operation's
// analysis tool; here their names are strict (propertyNames) and the
// server validates their values against the selected operation before
// the workload runs.
func nestedSchema(p *capture.Provider, ops []*registry.Operation) (evidence.Object, error) {
	names := make([]string, len(ops))
	var fmts []string
	for i, op := range ops {
		names[i] = op.Name
		if err := checkReserved("operation "+op.Name, op.Params(), nestedFields); err != nil {
			return nil, err
		}
		for _, f := range feedsOf(p, op) {
			if !slices.Contains(fmts, f) {
				fmts = append(fmts, f)
			}
		}
	}
	return evidence.Object{
		"type":       "object",
		"properties": evidence.Object{"operation": evidence.Object{"enum": names}},
	}, nil
}

// feedsOf is feeds, or every format of op when no provider is given
// (reanalyze, whose artifacts may come from any provider).
func feedsOf(p *capture.Provider, op *registry.Operation) []string {
	if p == nil {
		return op.Formats()
	}
	return feeds(p, op)
}

// outputSchema is the one output schema every tool shares, trimmed to
// what MCP requires of one (an object). The shape of structuredContent
// is stated once, in the server's instructions and docs/mcp.md.
var outputSchema = evidence.Object{"type": "object"}

// annotations states what differs from MCP's defaults (not read-only,
// destructive, not idempotent, open world): an analysis only reads named
// files; a capture runs an arbitrary workload, so the defaults hold.
func annotations(readOnly bool) mcp.ToolAnnotation {
	if !readOnly {
		return mcp.ToolAnnotation{}
	}
	return mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
}

func rawJSON(v evidence.Object) (json.RawMessage, error) {
	b, err := evidence.Canonical(v)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: encode schema: %w", err)
	}
	return b, nil
}

func newTool(name, title, description string, input evidence.Object, readOnly bool) (mcp.Tool, error) {
	in, err := rawJSON(input)
	if err != nil {
		return mcp.Tool{}, err
	}
	out, err := rawJSON(outputSchema)
	if err != nil {
		return mcp.Tool{}, err
	}
	return mcp.Tool{
		Name:            name,
		Title:           title,
		Description:     description,
		RawInputSchema:  in,
		RawOutputSchema: out,
		Annotations:     annotations(readOnly),
	}, nil
}

// exampleFormat picks the first accepted format the example's arguments
// fit. An example no registered format accepts is not shown: it would fail.
func exampleFormat(op *registry.Operation, args evidence.Object) (*formats.Spec, bool) {
	given := map[string]bool{}
	for k := range args {
		given[k] = true
	}
	for _, s := range specsOf(op.Formats()) {
		if registry.CheckCompatible(op, []string{s.Name}, given, args) == nil {
			return s, true
		}
	}
	return nil, false
}

// maxExamples bounds the examples a tool description shows.
const maxExamples = 1

func analysisDescription(op *registry.Operation, providers []*capture.Provider) string {
	var b strings.Builder
	b.WriteString(spell(firstSentences(op.Guidance, maxGuidance), ""))
	var caps []string
	for _, p := range providers {
		if slices.Contains(p.Operations, op.Name) {
			caps = append(caps, CaptureToolName(p.Name))
		}
	}
	if len(caps) > 0 {
		fmt.Fprintf(&b, " To capture too: %s.", strings.Join(caps, ", "))
	}
	b.WriteString("\n")
	shown := 0
	for _, ex := range op.Examples {
		s, ok := exampleFormat(op, ex.Args)
		if !ok || shown == maxExamples {
			continue
		}
		args := evidence.Object{}
		for k, v := range ex.Args {
			args[k] = v
		}
		name := "artifact"
		if len(s.Suffixes) > 0 {
			name += s.Suffixes[0]
		}
		args["paths"] = []string{path.Join("/abs", name)}
		if j, err := evidence.Canonical(args); err == nil {
			fmt.Fprintf(&b, "Example (%s): %s\n", ex.Title, j)
			shown++
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func bindingText(p *capture.Provider) string {
	switch b := p.Binding; {
	case b.Managed:
		return fmt.Sprintf("%s %s, managed (prepare_providers)", b.Executable, b.Pinned)
	case b.InWorkload:
		return fmt.Sprintf("%s in the workload's interpreter", b.Executable)
	default:
		return fmt.Sprintf("%s on PATH", b.Executable)
	}
}

func captureDescription(p *capture.Provider, ops []*registry.Operation) string {
	var b strings.Builder
	b.WriteString(spell(firstSentences(p.Selection, maxSelection), ""))
	var roles []string
	for _, r := range p.Artifacts {
		roles = append(roles, r.Format)
	}
	fmt.Fprintf(&b, "\nCollector: %s; outputs: %s.", bindingText(p), strings.Join(roles, ", "))
	for _, ex := range captureExamples(p, ops) {
		fmt.Fprintf(&b, "\nExample: %s", ex)
	}
	return b.String()
}

// maxSelection bounds how much of a provider's selection text a capture
// tool's description carries; docs/support.md has all of it.
const maxSelection = 160

// maxGuidance bounds an operation's guidance in its tool's description.
const maxGuidance = 160

// firstSentences is s up to the last sentence end within n bytes (all of
// s when it fits). A first sentence longer than n is cut at its last
// clause (": " or "; ") within n when that keeps more than half of n (the
// rest details what the clause says; docs/support.md has it), else kept
// whole: a shorter cut would drop what the tool is for.
func firstSentences(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if cut := strings.LastIndex(s[:n], ". "); cut >= 0 {
		return s[:cut+1]
	}
	if cut := max(strings.LastIndex(s[:n], ": "), strings.LastIndex(s[:n], "; ")); cut > n/2 {
		return s[:cut] + "."
	}
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// captureExamples are a capture tool's example calls: the provider's
// representative workload, with the default analysis's top bound. The
// instructions show a budget once.
func captureExamples(p *capture.Provider, ops []*registry.Operation) []string {
	argv := p.Example
	if len(argv) == 0 {
		argv = []string{"./workload"}
	}
	ex := evidence.Object{"argv": argv}
	if len(ops) > 0 && slices.Contains(param.Names(ops[0].Params()), "top") {
		ex["analysis"] = evidence.Object{"top": 10}
	}
	j, err := evidence.Canonical(ex)
	if err != nil {
		return nil
	}
	return []string{string(j)}
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
