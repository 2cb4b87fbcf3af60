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
	analysisFields = []string{"paths", "format", "limits", "options"}
	captureFields  = []string{"argv", "cwd", "budget", "console_output", "preserve", "analysis"}
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

// limitsSchema describes the raw parser ceilings of the given formats.
func limitsSchema(specs []*formats.Spec) evidence.Object {
	docs := map[string][]string{}
	var names []string
	for _, s := range specs {
		for _, l := range s.Limits {
			if _, seen := docs[l.Name]; !seen {
				names = append(names, l.Name)
			}
			d := fmt.Sprintf("%s (default %d %s)", l.Doc, l.Default, l.Unit)
			if len(specs) > 1 {
				d = s.Name + ": " + d
			}
			docs[l.Name] = append(docs[l.Name], d)
		}
	}
	props := evidence.Object{}
	for _, n := range names {
		props[n] = evidence.Object{"type": "integer", "minimum": 1, "description": strings.Join(docs[n], "; ")}
	}
	return evidence.Object{
		"type":                 "object",
		"description":          "raw parser ceilings; crossing one fails with LIMIT_EXCEEDED instead of cutting evidence silently",
		"properties":           props,
		"additionalProperties": false,
	}
}

// optionsSchema describes the decoder options of the given formats, typed
// by their declarations.
func optionsSchema(specs []*formats.Spec) evidence.Object {
	sets := make([]owned, len(specs))
	for i, s := range specs {
		sets[i] = owned{s.Name, s.Options}
	}
	return evidence.Object{
		"type":                 "object",
		"description":          "decoder options, typed by the declarations of the formats that take them",
		"properties":           unionProperties(sets),
		"additionalProperties": false,
	}
}

// owned is a list of parameter declarations and who declares them: a
// format's decoder options, an operation's arguments.
type owned struct {
	owner  string
	params []param.Param
}

// unionProperties merges the declarations of several owners into the
// properties of one object, each typed by param.JSONSchema. A name that
// every owner declaring it declares alike (type, bounds, default) is one
// property; otherwise it is an anyOf of the distinct declarations. With
// several owners, each description says whose it is. The union lists no
// required names, since what is required depends on the owner that takes
// the arguments (it validates them strictly); a required argument says so
// in its description.
func unionProperties(sets []owned) evidence.Object {
	type variant struct {
		schema evidence.Object // without its description
		key    string
		docs   []string // distinct descriptions, in order
		owners [][]string
	}
	byName := map[string][]*variant{}
	var order []string
	for _, set := range sets {
		ps := param.JSONSchema(set.params, nil, nil)["properties"].(evidence.Object)
		for _, p := range set.params {
			s := ps[p.Name].(evidence.Object)
			doc := fmt.Sprint(s["description"])
			if p.Required {
				doc += " (required)"
			}
			delete(s, "description")
			k, _ := evidence.Canonical(s)
			if _, seen := byName[p.Name]; !seen {
				order = append(order, p.Name)
			}
			i := slices.IndexFunc(byName[p.Name], func(v *variant) bool { return v.key == string(k) })
			if i < 0 {
				byName[p.Name] = append(byName[p.Name], &variant{schema: s, key: string(k)})
				i = len(byName[p.Name]) - 1
			}
			v := byName[p.Name][i]
			if j := slices.Index(v.docs, doc); j >= 0 {
				v.owners[j] = append(v.owners[j], set.owner)
			} else {
				v.docs = append(v.docs, doc)
				v.owners = append(v.owners, []string{set.owner})
			}
		}
	}
	describe := func(v *variant) string {
		parts := make([]string, len(v.docs))
		for i, d := range v.docs {
			parts[i] = d
			if len(sets) > 1 {
				parts[i] += " [" + strings.Join(v.owners[i], ", ") + "]"
			}
		}
		return strings.Join(parts, "; ")
	}
	props := evidence.Object{}
	for _, name := range order {
		vs := byName[name]
		if len(vs) == 1 {
			vs[0].schema["description"] = describe(vs[0])
			props[name] = vs[0].schema
			continue
		}
		alts := make([]any, len(vs))
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = describe(v)
			v.schema["description"] = parts[i]
			alts[i] = v.schema
		}
		props[name] = evidence.Object{"anyOf": alts, "description": strings.Join(parts, "; ")}
	}
	return props
}

// hasProperties reports whether an object schema can hold anything. One
// that cannot is left out of the tool's schema, and so is refused.
func hasProperties(schema evidence.Object) bool {
	props, _ := schema["properties"].(evidence.Object)
	return len(props) > 0
}

func checkReserved(what string, params []param.Param, reserved []string) error {
	for _, p := range params {
		if slices.Contains(reserved, p.Name) {
			return fmt.Errorf("mcpserver: %s parameter %q collides with a field the server owns", what, p.Name)
		}
	}
	return nil
}

// analysisSchema is the input schema of an operation's analysis tool.
func analysisSchema(op *registry.Operation) (evidence.Object, error) {
	if err := checkReserved("operation "+op.Name, op.Params(), analysisFields); err != nil {
		return nil, err
	}
	specs := specsOf(op.Formats())
	extra := map[string]evidence.Object{
		"paths": {
			"type":        "array",
			"description": fmt.Sprintf("absolute paths of the artifacts to analyze, 1 to %d, of one format", MaxPaths),
			"items":       evidence.Object{"type": "string", "minLength": 2},
			"minItems":    1,
			"maxItems":    MaxPaths,
		},
	}
	for name, o := range map[string]evidence.Object{"limits": limitsSchema(specs), "options": optionsSchema(specs)} {
		if hasProperties(o) {
			extra[name] = o
		}
	}
	if fs := op.Formats(); len(fs) > 0 {
		extra["format"] = evidence.Object{"type": "string", "enum": fs,
			"description": "decode every path as this format (default: detected from suffix and content)"}
	}
	return param.JSONSchema(op.Params(), extra, []string{"paths"}), nil
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
			"type":        "array",
			"description": "the workload command, executed directly (no shell); argv[0] is looked up in PATH",
			"items":       evidence.Object{"type": "string"},
			"minItems":    1,
		},
		"cwd":    {"type": "string", "description": "absolute working directory of the workload (default: the server's)"},
		"budget": budgetSchema(),
		"console_output": {"type": "string", "enum": []string{capture.ConsoleBounded, capture.ConsoleFull}, "default": capture.ConsoleBounded,
			"description": "bounded keeps a bounded console excerpt with observed/retained/omitted byte counts; full keeps the streams as artifacts"},
		"preserve": {"type": "string",
			"description": "absolute evidence store directory; native outputs are published there even when analysis fails"},
	}
	if len(ops) > 0 {
		a, err := nestedSchema(p, ops)
		if err != nil {
			return nil, err
		}
		extra["analysis"] = a
	}
	return param.JSONSchema(p.Params, extra, []string{"argv"}), nil
}

// budgetSchema is the workload budget, from capture's argument model.
func budgetSchema() evidence.Object {
	b := param.JSONSchema(capture.BudgetParams, nil, nil)
	b["description"] = "optional workload budgets, unset by default; a crossed budget ends the workload's process tree " +
		"with LIMIT_EXCEEDED and a limit receipt in the capture block"
	delete(b, "required")
	return b
}

// nestedSchema is the "analysis" object of a capture tool: the operation,
// decode limits and options, and the union of the operations' parameters.
// A parameter that differs between operations becomes an anyOf; the server
// validates strictly against the selected operation.
func nestedSchema(p *capture.Provider, ops []*registry.Operation) (evidence.Object, error) {
	names := make([]string, len(ops))
	var fmts []string
	for i, op := range ops {
		names[i] = op.Name
		if err := checkReserved("operation "+op.Name, op.Params(), nestedFields); err != nil {
			return nil, err
		}
		for _, f := range feeds(p, op) {
			if !slices.Contains(fmts, f) {
				fmts = append(fmts, f)
			}
		}
	}
	props := evidence.Object{
		"operation": evidence.Object{"type": "string", "enum": names, "default": names[0],
			"description": "the analysis to run on the captured artifacts"},
	}
	for name, o := range map[string]evidence.Object{"limits": limitsSchema(specsOf(registry.ProviderFormats(p))), "options": optionsSchema(specsOf(fmts))} {
		if hasProperties(o) {
			props[name] = o
		}
	}
	sets := make([]owned, len(ops))
	for i, op := range ops {
		sets[i] = owned{op.Name, op.Params()}
	}
	for name, s := range unionProperties(sets) {
		props[name] = s
	}
	return evidence.Object{
		"type":                 "object",
		"description":          "what to run on the captured artifacts; parameters apply to the selected operation",
		"properties":           props,
		"additionalProperties": false,
	}, nil
}

// outputSchema describes structuredContent for every tool: a result on
// success, a failure with partial evidence on isError.
func outputSchema() evidence.Object {
	obj := evidence.Object{"type": "object"}
	objs := evidence.Object{"type": "array", "items": obj}
	return evidence.Object{
		"type":     "object",
		"required": []string{"ok"},
		"properties": evidence.Object{
			"ok":        evidence.Object{"type": "boolean", "description": "false exactly when isError is true"},
			"operation": evidence.Object{"type": []string{"string", "null"}},
			"provider":  evidence.Object{"type": "string"},
			"tables": evidence.Object{
				"type":        "array",
				"description": "the result tables, usually one: header (table block), rows (values), summary (summary block)",
				"items": evidence.Object{
					"type": "object",
					"properties": evidence.Object{
						"header":  obj,
						"rows":    objs,
						"summary": evidence.Object{"type": []string{"object", "null"}},
					},
				},
			},
			"capture":   evidence.Object{"type": []string{"object", "null"}, "description": "the capture block (execution provenance)"},
			"artifacts": evidence.Object{"type": "array", "items": obj, "description": "artifact blocks of the native inputs"},
			"bundles":   evidence.Object{"type": "array", "items": obj, "description": "bundle blocks of preserved evidence"},
			"failure": evidence.Object{
				"type":        "object",
				"description": "code, message, location, retry, limit receipt, and details.partial_evidence",
				"required":    []string{"code", "message"},
			},
			"text": evidence.Object{"type": "object", "description": "how the JSONL text content was bounded"},
		},
	}
}

func annotations(readOnly bool, title string) mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(!readOnly),
		IdempotentHint:  mcp.ToBoolPtr(readOnly),
		OpenWorldHint:   mcp.ToBoolPtr(!readOnly),
	}
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
	out, err := rawJSON(outputSchema())
	if err != nil {
		return mcp.Tool{}, err
	}
	return mcp.Tool{
		Name:            name,
		Title:           title,
		Description:     description,
		RawInputSchema:  in,
		RawOutputSchema: out,
		Annotations:     annotations(readOnly, title),
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

func analysisDescription(op *registry.Operation, providers []*capture.Provider) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s. %s\n", op.Title, op.Guidance)
	var fs []string
	for _, s := range specsOf(op.Formats()) {
		f := s.Name + " (" + s.Title
		if len(s.Suffixes) > 0 {
			f += ", *" + strings.Join(s.Suffixes, ", *")
		}
		fs = append(fs, f+")")
	}
	fmt.Fprintf(&b, "\nInput: paths, 1-%d absolute artifact paths of one format: %s. "+
		"The format is detected from suffix and content unless `format` names it; `limits` sets raw parser ceilings.\n",
		MaxPaths, strings.Join(fs, "; "))
	var caps []string
	for _, p := range providers {
		if slices.Contains(p.Operations, op.Name) {
			caps = append(caps, CaptureToolName(p.Name))
		}
	}
	if len(caps) > 0 {
		fmt.Fprintf(&b, "To capture and analyze in one call, use %s.\n", strings.Join(caps, " or "))
	}
	if op.Overhead != "" {
		fmt.Fprintf(&b, "Overhead: %s.\n", op.Overhead)
	}
	for _, l := range op.Limitations {
		fmt.Fprintf(&b, "Limitation: %s.\n", l)
	}
	for _, ex := range op.Examples {
		s, ok := exampleFormat(op, ex.Args)
		if !ok {
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
		args["paths"] = []string{path.Join("/abs/path", name)}
		if j, err := evidence.Canonical(args); err == nil {
			fmt.Fprintf(&b, "Example (%s): %s\n", ex.Title, j)
		}
	}
	b.WriteString(resultNote)
	return b.String()
}

const resultNote = "Result: structuredContent.tables holds the result table (header, rows, summary; one per series where series must not blend) with the artifact " +
	"(and capture) blocks; the text content is the same evidence as bounded canonical JSONL. A failure returns " +
	"isError with failure.code, message, location, retry and details.partial_evidence (every block that did arrive)."

func bindingText(p *capture.Provider) string {
	switch b := p.Binding; {
	case b.Managed:
		return fmt.Sprintf("managed %s %s, prepared once with `flameox-capture setup --provider %s`", b.Executable, b.Pinned, p.Name)
	case b.InWorkload:
		return fmt.Sprintf("%s, imported in the workload's own interpreter", b.Executable)
	default:
		return fmt.Sprintf("%s from PATH", b.Executable)
	}
}

func captureDescription(p *capture.Provider) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s. %s\n", p.Title, p.Selection)
	var roles []string
	for _, r := range p.Artifacts {
		roles = append(roles, fmt.Sprintf("%s (%s)", r.Role, r.Format))
	}
	fmt.Fprintf(&b, "\nRuns argv (no shell) under %s and stages its outputs: %s.\n", bindingText(p), strings.Join(roles, ", "))
	if len(p.Operations) > 0 {
		fmt.Fprintf(&b, "Then analyzes them with analysis.operation (%s; default %s) through flameox-decode and flameox-rank. "+
			"Analysis arguments are checked against the provider's formats before the workload runs.\n",
			strings.Join(p.Operations, ", "), p.Operations[0])
	}
	fmt.Fprintf(&b, "A missing collector fails the call with PROVIDER_UNAVAILABLE and its retry action. "+
		"budget (%s) bounds the workload; console_output selects bounded (default) or full console retention; "+
		"preserve publishes the native outputs to an evidence store even when analysis fails. "+
		"A failed analysis keeps the completed capture and its artifacts in details.partial_evidence: "+
		"re-analyze them with the analysis tools instead of re-running the workload.\n", strings.Join(param.Names(capture.BudgetParams), ", "))
	b.WriteString(resultNote)
	return b.String()
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
