package mcpserver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/registry"
)

// Binary names of the composed commands.
const (
	binCapture = "flameox-capture"
	binDecode  = "flameox-decode"
	binRank    = "flameox-rank"
)

// stageSpec is one command of a pipeline.
type stageSpec struct {
	bin  string // binary name, resolved in the server's bin dir
	args []string
	env  []string // additions to the server's environment, KEY=VALUE
}

// job is a validated tool call: the commands to run, connected by pipes.
type job struct {
	operation string // "" when no analysis runs
	provider  string // capture tools only
	stages    []stageSpec
	// tee: the first stage is flameox-capture. The server reads its blocks
	// as they pass to flameox-decode, so a completed capture survives any
	// later stage.
	tee bool
	// stdin is what the first stage reads (kept blocks a reanalysis or a
	// preservation replays); nil: /dev/null.
	stdin []byte
	// detail is DetailCompact or DetailFull.
	detail string
	// extra fields of structuredContent (a session handle), and a text
	// line said before the evidence; set by the server after the run.
	extra evidence.Object
	note  string
	// respell rewrites a failure's retry action in the words of MCP.
	respell func(f evidence.Object)
	// links are resource links the result carries (preserved bundles).
	links []mcp.Content
	// handle: a capture's handle id (and scratch root, while it runs), or
	// the handle a preservation publishes; store: where it publishes.
	handle, scratch, store string
	// nested is where the analysis arguments are in the call ("analysis."
	// for a capture or a reanalysis): advice names them there.
	nested string
	// replayed are failure blocks the job feeds its first stage itself.
	replayed []evidence.Object
	// release ends the job's hold on a handle's scratch.
	release func()
	// dropTables: the last stage's tables are not result tables (a
	// preservation forwards the decoded tables it writes).
	dropTables bool
}

// maxArgDepth bounds the nesting of tool arguments.
const maxArgDepth = 16

// parseArguments reads a call's arguments into the canonical domain: exact
// numbers, repeated keys rejected. Absent arguments are an empty object.
func parseArguments(req mcp.CallToolRequest) (evidence.Object, error) {
	raw := []byte(req.Params.RawArguments)
	if len(raw) == 0 && req.Params.Arguments != nil {
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "arguments")
		}
		raw = b
	}
	if len(raw) == 0 || string(raw) == "null" {
		return evidence.Object{}, nil
	}
	v, err := evidence.ParseValue(raw, maxArgDepth)
	if err != nil {
		f := evidence.Wrap(evidence.CodeInvalidArgument, err, "arguments")
		f.Location = evidence.Location{Field: "arguments", Offset: f.Location.Offset}
		return nil, f
	}
	o, ok := v.(evidence.Object)
	if !ok {
		return nil, invalid("arguments", "arguments must be a JSON object")
	}
	return o, nil
}

func invalid(field, format string, a ...any) *evidence.Failure {
	return &evidence.Failure{Code: evidence.CodeInvalidArgument, Message: fmt.Sprintf(format, a...),
		Location: evidence.Location{Field: field}}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// checkUnknown rejects any argument that is not accepted.
func checkUnknown(args evidence.Object, accepted []string, prefix string) error {
	var unknown []string
	for k := range args {
		if !slices.Contains(accepted, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	acc := slices.Clone(accepted)
	sort.Strings(acc)
	return invalid(join(prefix, unknown[0]), "unknown argument %s (accepted: %s)",
		join(prefix, strings.Join(unknown, ", ")), strings.Join(acc, ", "))
}

// jsonType names a canonical value's JSON type.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		if isIntegerLiteral(string(x)) {
			return "an integer"
		}
		return "a number"
	case []any:
		return "an array"
	case evidence.Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func isIntegerLiteral(s string) bool {
	return !strings.ContainsAny(s, ".eE")
}

// strictType checks a value's JSON type against a parameter before
// param.Validate coerces it: MCP arguments are typed JSON, so "5" is not an
// integer and null is not an omitted argument.
func strictType(p param.Param, v any) error {
	ok := false
	switch p.Type {
	case param.String, param.Enum:
		_, ok = v.(string)
	case param.Bool:
		_, ok = v.(bool)
	case param.Int:
		n, isNum := v.(json.Number)
		ok = isNum && isIntegerLiteral(string(n))
	case param.Number:
		_, ok = v.(json.Number)
	case param.StringList:
		arr, isArr := v.([]any)
		ok = isArr
		for _, e := range arr {
			if _, s := e.(string); !s {
				ok = false
			}
		}
	}
	if ok {
		return nil
	}
	want := map[param.Type]string{param.String: "a string", param.Enum: "a string", param.Bool: "a boolean",
		param.Int: "an integer", param.Number: "a number", param.StringList: "an array of strings"}[p.Type]
	return fmt.Errorf("want %s, got %s", want, jsonType(v))
}

// validParams validates the parameters in args (which holds nothing else)
// and returns the effective arguments, the given names, and the given
// values coerced to their types (what a downstream --request carries, so
// that it fills the same defaults and sees the same given set).
func validParams(params []param.Param, args evidence.Object, prefix string) (evidence.Object, map[string]bool, evidence.Object, error) {
	for _, p := range params {
		if v, ok := args[p.Name]; ok {
			if err := strictType(p, v); err != nil {
				return nil, nil, nil, invalid(join(prefix, p.Name), "argument %s: %v", join(prefix, p.Name), err)
			}
		}
	}
	eff, given, err := param.Validate(params, args)
	if err != nil {
		f := evidence.AsFailure(err, evidence.CodeInvalidArgument)
		if f.Location.Field != "" && prefix != "" {
			f.Location.Field = join(prefix, f.Location.Field)
			f.Message = prefix + ": " + f.Message
		}
		return nil, nil, nil, f
	}
	vals := evidence.Object{}
	for k := range given {
		vals[k] = eff[k]
	}
	return eff, given, vals, nil
}

func subset(args evidence.Object, params []param.Param) evidence.Object {
	out := evidence.Object{}
	for _, p := range params {
		if v, ok := args[p.Name]; ok {
			out[p.Name] = v
		}
	}
	return out
}

// absPath checks one path argument: absolute, clean of NUL bytes.
func absPath(field string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", invalid(field, "%s: want an absolute path, got %s", field, jsonType(v))
	}
	if !filepath.IsAbs(s) || strings.ContainsRune(s, 0) {
		return "", invalid(field, "%s: %q is not an absolute path", field, s)
	}
	return s, nil
}

// pathList checks the paths argument: 1 to MaxPaths distinct absolute paths.
func pathList(v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, invalid("paths", "paths: want an array of absolute paths, got %s", jsonType(v))
	}
	if len(arr) < 1 || len(arr) > MaxPaths {
		return nil, invalid("paths", "paths: want 1 to %d paths, got %d", MaxPaths, len(arr))
	}
	out := make([]string, len(arr))
	seen := map[string]int{}
	for i, e := range arr {
		field := fmt.Sprintf("paths[%d]", i)
		p, err := absPath(field, e)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[filepath.Clean(p)]; dup {
			return nil, invalid(field, "%s repeats paths[%d]; the same artifact would be counted twice", field, j)
		}
		seen[filepath.Clean(p)] = i
		out[i] = p
	}
	return out, nil
}

func objectArg(field string, v any) (evidence.Object, error) {
	o, ok := v.(evidence.Object)
	if !ok {
		return nil, invalid(field, "%s: want an object, got %s", field, jsonType(v))
	}
	return o, nil
}

// limitsArg checks raw parser ceilings against the formats involved.
func limitsArg(v any, specs []*formats.Spec, field string) (map[string]int64, error) {
	if v == nil {
		return nil, nil
	}
	o, err := objectArg(field, v)
	if err != nil {
		return nil, err
	}
	var known []string
	for _, s := range specs {
		for _, l := range s.Limits {
			if !slices.Contains(known, l.Name) {
				known = append(known, l.Name)
			}
		}
	}
	if err := checkUnknown(o, known, field); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for k, x := range o {
		n, isNum := x.(json.Number)
		i, perr := strconv.ParseInt(string(n), 10, 64)
		if !isNum || perr != nil || i < 1 {
			return nil, invalid(join(field, k), "%s: want a positive integer, got %v", join(field, k), x)
		}
		out[k] = i
	}
	return out, nil
}

// optionsArg checks decoder options against the formats involved: each
// value must fit the declaration of some format that takes it (the
// format that decodes the artifact validates it again). They travel as
// --option k=v text, which that format types by the same declaration, so
// a string stays a string and a number a number; what the flag's comma
// splitting cannot carry unchanged is refused.
func optionsArg(v any, specs []*formats.Spec, field string) (evidence.Object, error) {
	if v == nil {
		return nil, nil
	}
	o, err := objectArg(field, v)
	if err != nil {
		return nil, err
	}
	decls := map[string][]param.Param{}
	var known []string
	for _, s := range specs {
		for _, p := range s.Options {
			if _, seen := decls[p.Name]; !seen {
				known = append(known, p.Name)
			}
			decls[p.Name] = append(decls[p.Name], p)
		}
	}
	if err := checkUnknown(o, known, field); err != nil {
		return nil, err
	}
	for _, k := range sortedNames(o) {
		x := o[k]
		var err error
		for _, p := range decls[k] {
			if _, _, _, err = validParams([]param.Param{p}, evidence.Object{k: x}, field); err == nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
		if err := flagSafe(x); err != nil {
			f := join(field, k)
			return nil, invalid(f, "%s: %v", f, err)
		}
	}
	return o, nil
}

// flagSafe refuses option text that --option k=v cannot carry unchanged:
// a string list is joined with escaped commas, so its strings may hold
// no comma, and kong keeps no backslash before a comma.
func flagSafe(v any) error {
	switch x := v.(type) {
	case string:
		if strings.Contains(x, `\,`) {
			return fmt.Errorf(`a backslash before a comma cannot be passed unchanged through --option`)
		}
	case []any:
		for i, e := range x {
			if s, _ := e.(string); strings.Contains(s, ",") {
				return fmt.Errorf("element %d: a list element with a comma cannot be passed unchanged through --option", i)
			}
		}
	}
	return nil
}

// limitFlags renders --limits k=v,... in a stable order.
func limitFlags(limits map[string]int64) []string {
	if len(limits) == 0 {
		return nil
	}
	var parts []string
	for _, k := range sortedNames(limits) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, limits[k]))
	}
	return []string{"--limits", strings.Join(parts, ",")}
}

// optionFlags renders one --option k=v per option. Commas are escaped
// because the flag splits its value on them; a string list is its
// elements joined by (escaped) commas, as param.ParseFlagValue reads it.
func optionFlags(opts evidence.Object) []string {
	var out []string
	for _, k := range sortedNames(opts) {
		var v string
		switch x := opts[k].(type) {
		case string:
			v = strings.ReplaceAll(x, ",", `\,`)
		case []any:
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = fmt.Sprint(e)
			}
			v = strings.Join(parts, `\,`)
		default:
			b, _ := evidence.Canonical(x) // numbers and booleans
			v = string(b)
		}
		out = append(out, "--option", k+"="+v)
	}
	return out
}

func request(vals evidence.Object) (string, error) {
	b, err := evidence.Canonical(vals)
	if err != nil {
		return "", evidence.Wrap(evidence.CodeInternal, err, "encode request")
	}
	return string(b), nil
}

// prepareAnalysis validates an analysis tool call. accepted lists the
// properties of the tool's generated input schema, so the schema and the
// validation cannot disagree about which arguments exist.
func prepareAnalysis(op *registry.Operation, accepted []string, args evidence.Object) (*job, error) {
	if err := checkUnknown(args, accepted, ""); err != nil {
		return nil, err
	}
	pv, ok := args["paths"]
	if !ok {
		return nil, invalid("paths", "missing required argument paths")
	}
	paths, err := pathList(pv)
	if err != nil {
		return nil, err
	}
	fmts := op.Formats()
	format := ""
	if v, ok := args["format"]; ok {
		s, isStr := v.(string)
		if _, known := registry.Format(s); !isStr || !known {
			return nil, invalid("format", "format: want one of %s, got %v", strings.Join(op.Formats(), ", "), v)
		}
		format, fmts = s, []string{s}
	}
	a, err := analysisArgs(op, args, fmts, fmts, "")
	if err != nil {
		return nil, err
	}
	if format != "" {
		if err := registry.CheckCompatible(op, fmts, a.given, a.eff); err != nil {
			return nil, err
		}
	}
	if _, err := op.Projection.New(a.eff, a.given); err != nil {
		return nil, err
	}
	req, err := request(a.vals)
	if err != nil {
		return nil, err
	}
	rank := []string{"--operation", op.Name, "--request", req, "--format", "jsonl"}
	if format != "" {
		rank = append(rank, "--artifact-format", format)
	}
	rank = append(rank, limitFlags(a.limits)...)
	rank = append(rank, optionFlags(a.opts)...)
	rank = append(append(rank, "--"), paths...)
	detail, err := detailArg(args)
	if err != nil {
		return nil, err
	}
	return &job{operation: op.Name, detail: detail, stages: []stageSpec{{bin: binRank, args: rank}}}, nil
}

// detailArg reads the detail argument: compact unless full is asked for.
func detailArg(args evidence.Object) (string, error) {
	v, ok := args["detail"]
	if !ok {
		return DetailCompact, nil
	}
	if s, _ := v.(string); s == DetailCompact || s == DetailFull {
		return s, nil
	}
	return "", invalid("detail", "detail: want %s or %s, got %v", DetailCompact, DetailFull, v)
}

// prepareCapture validates a capture tool call. Every argument, including
// the analysis arguments checked against the provider's declared formats,
// is validated before anything runs: a bad analysis argument must not cost
// a workload run. accepted and nested list the properties of the tool's
// input schema and of its analysis object (the server's own fields there).
func prepareCapture(p *capture.Provider, ops []*registry.Operation, accepted, nested []string, args evidence.Object) (*job, error) {
	if err := checkUnknown(args, accepted, ""); err != nil {
		return nil, err
	}
	av, ok := args["argv"]
	if !ok {
		return nil, invalid("argv", "missing required argument argv")
	}
	arr, isArr := av.([]any)
	if !isArr || len(arr) == 0 {
		return nil, invalid("argv", "argv: want a non-empty array of strings, got %s", jsonType(av))
	}
	argv := make([]string, len(arr))
	for i, e := range arr {
		s, isStr := e.(string)
		if !isStr || strings.ContainsRune(s, 0) || (i == 0 && s == "") {
			return nil, invalid(fmt.Sprintf("argv[%d]", i), "argv[%d]: want a string without NUL bytes (argv[0] non-empty), got %s", i, jsonType(e))
		}
		argv[i] = s
	}
	capArgs := []string{p.Name}
	_, _, pvals, err := validParams(p.Params, subset(args, p.Params), "")
	if err != nil {
		return nil, err
	}
	if len(pvals) > 0 {
		req, err := request(pvals)
		if err != nil {
			return nil, err
		}
		capArgs = append(capArgs, "--request", req)
	}
	if v, ok := args["budget"]; ok {
		b, err := budgetArg(v)
		if err != nil {
			return nil, err
		}
		if b != "" {
			capArgs = append(capArgs, "--workload-budget", b)
		}
	}
	if v, ok := args["console_output"]; ok {
		s, _ := v.(string)
		if s != capture.ConsoleBounded && s != capture.ConsoleFull {
			return nil, invalid("console_output", "console_output: want %s or %s, got %v", capture.ConsoleBounded, capture.ConsoleFull, v)
		}
		capArgs = append(capArgs, "--console-output", s)
	}
	for _, name := range []string{"preserve", "cwd"} {
		if v, ok := args[name]; ok {
			s, err := absPath(name, v)
			if err != nil {
				return nil, err
			}
			capArgs = append(capArgs, "--"+name, s)
		}
	}
	capArgs = append(append(capArgs, "--"), argv...)
	detail, err := detailArg(args)
	if err != nil {
		return nil, err
	}
	j := &job{provider: p.Name, tee: true, detail: detail, nested: "analysis.", stages: []stageSpec{{bin: binCapture, args: capArgs}}}
	if st, ok := args["preserve"].(string); ok {
		j.store = st
	}
	if len(ops) == 0 {
		return j, nil
	}
	a := evidence.Object{}
	if v, ok := args["analysis"]; ok {
		if a, err = objectArg("analysis", v); err != nil {
			return nil, err
		}
	}
	an, err := nestedAnalysis(ops, nested, a, registry.ProviderFormats(p),
		func(op *registry.Operation) []string { return feeds(p, op) }, p.Name+" captures")
	if err != nil {
		return nil, err
	}
	j.operation = an.operation
	j.stages = append(j.stages, an.stages...)
	return j, nil
}

// nestedRun is a validated "analysis" object: the operation and the
// flameox-decode | flameox-rank stages that run it on a block stream.
type nestedRun struct {
	operation string
	stages    []stageSpec
}

// nestedAnalysis validates an "analysis" object (of a capture tool, or of
// reanalyze) against the operation it selects: limits against limitFmts
// (every format the artifacts may have), options and compatibility
// against the formats feeds(op) says the operation will read. what names
// the artifacts in a compatibility failure ("py-spy captures").
func nestedAnalysis(ops []*registry.Operation, nested []string, a evidence.Object, limitFmts []string,
	feeds func(*registry.Operation) []string, what string) (*nestedRun, error) {
	op := ops[0]
	if v, ok := a["operation"]; ok {
		s, _ := v.(string)
		i := slices.IndexFunc(ops, func(o *registry.Operation) bool { return o.Name == s })
		if i < 0 {
			names := make([]string, len(ops))
			for k, o := range ops {
				names[k] = o.Name
			}
			return nil, invalid("analysis.operation", "analysis.operation: want one of %s, got %v", strings.Join(names, ", "), v)
		}
		op = ops[i]
	}
	if err := checkUnknown(a, append(slices.Clone(nested), param.Names(op.Params())...), "analysis"); err != nil {
		return nil, err
	}
	fmts := feeds(op)
	an, err := analysisArgs(op, a, limitFmts, fmts, "analysis")
	if err != nil {
		return nil, err
	}
	if err := registry.CheckCompatible(op, fmts, an.given, an.eff); err != nil {
		f := evidence.AsFailure(err, evidence.CodeInvalidArgument)
		if f.Location.Field != "" {
			f.Location.Field = join("analysis", f.Location.Field)
		}
		f.Message = fmt.Sprintf("%s on %s (%s): %s", op.Name, what, strings.Join(fmts, ", "), f.Message)
		return nil, f
	}
	if _, err := op.Projection.New(an.eff, an.given); err != nil {
		return nil, err
	}
	// flameox-decode runs apart from flameox-rank here, so the decoder
	// options an operation derives from its arguments (a text fragment's
	// window) are given to it, as flameox-rank does for explicit paths.
	opts := an.opts
	if op.DecoderOptions != nil {
		derived, err := op.DecoderOptions(an.given, an.eff)
		if err != nil {
			return nil, err
		}
		for k := range opts {
			if _, clash := derived[k]; clash {
				return nil, invalid("analysis.options."+k, "decoder option %s is set by the %s arguments; do not give it as well", k, op.Name)
			}
		}
		for k, v := range opts {
			derived[k] = v
		}
		opts = derived
	}
	req, err := request(an.vals)
	if err != nil {
		return nil, err
	}
	decode := append(limitFlags(an.limits), optionFlags(opts)...)
	return &nestedRun{operation: op.Name, stages: []stageSpec{
		{bin: binDecode, args: decode},
		{bin: binRank, args: []string{"--operation", op.Name, "--request", req, "--format", "jsonl"}}}}, nil
}

// analysis is an analysis's validated limits, decoder options and
// operation arguments.
type analysis struct {
	limits    map[string]int64
	opts      evidence.Object
	eff, vals evidence.Object // effective arguments; the given ones, coerced (what --request carries)
	given     map[string]bool
}

// analysisArgs validates, in this order, the limits in args against the
// formats limitFmts, the decoder options against optionFmts, and op's
// arguments. prefix locates them: "" at the top of a call, "analysis" in
// a capture call's analysis object.
func analysisArgs(op *registry.Operation, args evidence.Object, limitFmts, optionFmts []string, prefix string) (*analysis, error) {
	var a analysis
	var err error
	if a.limits, err = limitsArg(args["limits"], specsOf(limitFmts), join(prefix, "limits")); err != nil {
		return nil, err
	}
	if a.opts, err = optionsArg(args["options"], specsOf(optionFmts), join(prefix, "options")); err != nil {
		return nil, err
	}
	if a.eff, a.given, a.vals, err = validParams(op.Params(), subset(args, op.Params()), prefix); err != nil {
		return nil, err
	}
	return &a, nil
}

// budgetArg validates the budget against capture's argument model and
// renders it as --workload-budget k=v,... with the caller's literals.
func budgetArg(v any) (string, error) {
	o, err := objectArg("budget", v)
	if err != nil {
		return "", err
	}
	if err := checkUnknown(o, param.Names(capture.BudgetParams), "budget"); err != nil {
		return "", err
	}
	if _, _, _, err := validParams(capture.BudgetParams, o, "budget"); err != nil {
		return "", err
	}
	var parts []string
	for _, p := range capture.BudgetParams {
		if n, ok := o[p.Name].(json.Number); ok {
			parts = append(parts, p.Name+"="+string(n))
		}
	}
	return strings.Join(parts, ","), nil
}
