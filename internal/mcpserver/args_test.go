package mcpserver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/flameox/flameox/internal/command"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/registry"
)

// args parses a JSON literal the way a tool call's raw arguments arrive.
func args(t *testing.T, s string) evidence.Object {
	t.Helper()
	o, err := parseArguments(mcp.CallToolRequest{Params: mcp.CallToolParams{RawArguments: []byte(s)}})
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return o
}

func wantFailure(t *testing.T, err error, code evidence.Code, field string) {
	t.Helper()
	var f *evidence.Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a %s failure", err, code)
	}
	if f.Code != code || f.Location.Field != field {
		t.Fatalf("failure = %s at field %q, want %s at field %q (%s)", f.Code, f.Location.Field, code, field, f.Message)
	}
}

func TestParseArgumentsStrict(t *testing.T) {
	for _, tc := range []struct{ name, raw string }{
		{"duplicate key", `{"paths":["/a"],"paths":["/b"]}`},
		{"not an object", `["/a"]`},
		{"bad json", `{"paths":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseArguments(mcp.CallToolRequest{Params: mcp.CallToolParams{RawArguments: []byte(tc.raw)}})
			var f *evidence.Failure
			if !errors.As(err, &f) || f.Code != evidence.CodeInvalidArgument {
				t.Fatalf("err = %v, want INVALID_ARGUMENT", err)
			}
		})
	}
	// Without raw bytes (an in-process client), the decoded map is used.
	o, err := parseArguments(mcp.CallToolRequest{Params: mcp.CallToolParams{Arguments: map[string]any{"top": 3}}})
	if err != nil || fmt.Sprint(o["top"]) != "3" {
		t.Fatalf("in-process arguments = %v, %v", o, err)
	}
}

func TestAnalysisArgumentsRejected(t *testing.T) {
	op := mustOp(t, "summarize_cpu_hotspots")
	acc := analysisAccepted(t, op)
	many := make([]string, MaxPaths+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"/p/%d.cpuprofile"`, i)
	}
	for _, tc := range []struct {
		name, raw string
		code      evidence.Code
		field     string
	}{
		{"unknown argument", `{"paths":["/a.cpuprofile"],"bogus":1}`, evidence.CodeInvalidArgument, "bogus"},
		{"option no accepted format declares", `{"paths":["/a.cpuprofile"],"options":{"bogus":true}}`, evidence.CodeInvalidArgument, "options.bogus"},
		{"paths missing", `{"top":1}`, evidence.CodeInvalidArgument, "paths"},
		{"paths not an array", `{"paths":"/a.cpuprofile"}`, evidence.CodeInvalidArgument, "paths"},
		{"paths empty", `{"paths":[]}`, evidence.CodeInvalidArgument, "paths"},
		{"too many paths", `{"paths":[` + strings.Join(many, ",") + `]}`, evidence.CodeInvalidArgument, "paths"},
		{"relative path", `{"paths":["a.cpuprofile"]}`, evidence.CodeInvalidArgument, "paths[0]"},
		{"path not a string", `{"paths":["/a.cpuprofile",7]}`, evidence.CodeInvalidArgument, "paths[1]"},
		{"repeated path", `{"paths":["/a.cpuprofile","/x/../a.cpuprofile"]}`, evidence.CodeInvalidArgument, "paths[1]"},
		{"unknown format", `{"paths":["/a"],"format":"nope"}`, evidence.CodeInvalidArgument, "format"},
		{"unknown limit", `{"paths":["/a"],"limits":{"max_rows":5}}`, evidence.CodeInvalidArgument, "limits.max_rows"},
		{"zero limit", `{"paths":["/a"],"limits":{"max_nodes":0}}`, evidence.CodeInvalidArgument, "limits.max_nodes"},
		{"string limit", `{"paths":["/a"],"limits":{"max_nodes":"5"}}`, evidence.CodeInvalidArgument, "limits.max_nodes"},
		{"fractional limit", `{"paths":["/a"],"limits":{"max_nodes":1.5}}`, evidence.CodeInvalidArgument, "limits.max_nodes"},
		{"integer as string", `{"paths":["/a"],"top":"5"}`, evidence.CodeInvalidArgument, "top"},
		{"fractional integer", `{"paths":["/a"],"top":2.5}`, evidence.CodeInvalidArgument, "top"},
		{"null is not omission", `{"paths":["/a"],"top":null}`, evidence.CodeInvalidArgument, "top"},
		{"below minimum", `{"paths":["/a"],"top":0}`, evidence.CodeInvalidArgument, "top"},
		{"enum", `{"paths":["/a"],"metric":"wall"}`, evidence.CodeInvalidArgument, "metric"},
		{"boolean as string", `{"paths":["/a"],"include_synthetic":"true"}`, evidence.CodeInvalidArgument, "include_synthetic"},
		{"bad pattern", `{"paths":["/a"],"function_pattern":"("}`, evidence.CodeInvalidArgument, "function_pattern"},
		{"metric on an explicit V8 profile", `{"paths":["/a"],"format":"v8-cpuprofile","metric":"self"}`, evidence.CodeInvalidArgument, "metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := prepareAnalysis(op, acc, args(t, tc.raw))
			wantFailure(t, err, tc.code, tc.field)
		})
	}
}

func TestAnalysisCommandLine(t *testing.T) {
	op := mustOp(t, "summarize_cpu_hotspots")
	j, err := prepareAnalysis(op, analysisAccepted(t, op), args(t,
		`{"paths":["/p/a.cpuprofile","/p/b.cpuprofile"],"top":5,"format":"v8-cpuprofile","limits":{"max_samples":9,"max_nodes":10}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--operation", "summarize_cpu_hotspots", "--request", `{"top":5}`, "--format", "jsonl",
		"--artifact-format", "v8-cpuprofile", "--limits", "max_nodes=10,max_samples=9", "--", "/p/a.cpuprofile", "/p/b.cpuprofile"}
	if len(j.stages) != 1 || j.stages[0].bin != binRank || !slices.Equal(j.stages[0].args, want) {
		t.Fatalf("stages = %+v\nwant flameox-rank %q", j.stages, want)
	}
	// Defaults are not sent as given: flameox-rank fills them itself, so
	// its pre-execution checks see exactly what the caller gave.
	j, err = prepareAnalysis(op, analysisAccepted(t, op), args(t, `{"paths":["/p/a.cpuprofile"]}`))
	if err != nil || j.stages[0].args[3] != "{}" {
		t.Fatalf("request = %v, %v; want {}", j.stages[0].args, err)
	}
}

func captureAccepted(t *testing.T) (accepted, nested []string) {
	in, err := captureSchema(testProvider(t), cpuOps(t))
	if err != nil {
		t.Fatal(err)
	}
	return sortedNames(props(in)), nestedNames(testProvider(t), cpuOps(t))
}

func cpuOps(t *testing.T) []*registry.Operation {
	return []*registry.Operation{mustOp(t, "summarize_cpu_hotspots"), mustOp(t, "summarize_cpu_caller_edges")}
}

func TestCaptureArgumentsRejectedBeforeRunning(t *testing.T) {
	acc, nested := captureAccepted(t)
	for _, tc := range []struct {
		name, raw string
		field     string
	}{
		{"argv missing", `{}`, "argv"},
		{"argv empty", `{"argv":[]}`, "argv"},
		{"argv not strings", `{"argv":["node",1]}`, "argv[1]"},
		{"argv0 empty", `{"argv":[""]}`, "argv[0]"},
		{"unknown argument", `{"argv":["node"],"metric":"self"}`, "metric"},
		{"relative cwd", `{"argv":["node"],"cwd":"rel"}`, "cwd"},
		{"relative store", `{"argv":["node"],"preserve":"store"}`, "preserve"},
		{"unknown budget", `{"argv":["node"],"budget":{"cpu_seconds":1}}`, "budget.cpu_seconds"},
		{"zero budget", `{"argv":["node"],"budget":{"timeout_seconds":0}}`, "budget.timeout_seconds"},
		{"fractional byte budget", `{"argv":["node"],"budget":{"max_memory_bytes":1.5}}`, "budget.max_memory_bytes"},
		{"console mode", `{"argv":["node"],"console_output":"none"}`, "console_output"},
		{"provider param type", `{"argv":["node"],"sampling_interval_us":"100"}`, "sampling_interval_us"},
		{"analysis not an object", `{"argv":["node"],"analysis":"hotspots"}`, "analysis"},
		{"unknown operation", `{"argv":["node"],"analysis":{"operation":"summarize_failures"}}`, "analysis.operation"},
		{"unknown analysis argument", `{"argv":["node"],"analysis":{"bogus":1}}`, "analysis.bogus"},
		{"argument of the other operation", `{"argv":["node"],"analysis":{"operation":"summarize_cpu_caller_edges","metric":"self"}}`, "analysis.metric"},
		{"analysis type", `{"argv":["node"],"analysis":{"top":"5"}}`, "analysis.top"},
		{"analysis limit", `{"argv":["node"],"analysis":{"limits":{"max_rows":1}}}`, "analysis.limits.max_rows"},
		// V8 profiles have a fixed weight: an explicit metric cannot apply,
		// and the workload must not run to find that out.
		{"metric on a V8 capture", `{"argv":["node"],"analysis":{"metric":"self"}}`, "analysis.metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := prepareCapture(testProvider(t), cpuOps(t), acc, nested, args(t, tc.raw))
			wantFailure(t, err, evidence.CodeInvalidArgument, tc.field)
		})
	}
}

func TestCaptureCommandLines(t *testing.T) {
	acc, nested := captureAccepted(t)
	j, err := prepareCapture(testProvider(t), cpuOps(t), acc, nested, args(t, `{
		"argv":["node","app.js","--flag"],"cwd":"/w","preserve":"/store","console_output":"full",
		"budget":{"max_output_bytes":4096,"max_memory_bytes":1073741824,"timeout_seconds":0.5},"sampling_interval_us":100,
		"analysis":{"operation":"summarize_cpu_caller_edges","top":3,"limits":{"max_nodes":99}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []stageSpec{
		{bin: binCapture, args: []string{"test-v8", "--request", `{"sampling_interval_us":100}`,
			"--workload-budget", "timeout_seconds=0.5,max_memory_bytes=1073741824,max_output_bytes=4096", "--console-output", "full",
			"--preserve", "/store", "--cwd", "/w", "--", "node", "app.js", "--flag"}},
		{bin: binDecode, args: []string{"--limits", "max_nodes=99"}},
		{bin: binRank, args: []string{"--operation", "summarize_cpu_caller_edges", "--request", `{"top":3}`, "--format", "jsonl"}},
	}
	if len(j.stages) != len(want) || !j.tee || j.operation != "summarize_cpu_caller_edges" {
		t.Fatalf("job = %+v", j)
	}
	for i := range want {
		if j.stages[i].bin != want[i].bin || !slices.Equal(j.stages[i].args, want[i].args) {
			t.Errorf("stage %d = %s %q\nwant %s %q", i, j.stages[i].bin, j.stages[i].args, want[i].bin, want[i].args)
		}
	}
	// The default operation is the provider's first.
	j, err = prepareCapture(testProvider(t), cpuOps(t), acc, nested, args(t, `{"argv":["node","app.js"]}`))
	if err != nil || j.operation != "summarize_cpu_hotspots" || !slices.Equal(j.stages[0].args, []string{"test-v8", "--", "node", "app.js"}) {
		t.Fatalf("job = %+v, %v", j, err)
	}
}

// Decoder options travel as --option k=v through kong's map flag; what the
// decoder receives, typed by its declarations, must be what the caller
// sent, or the call is refused.
func TestOptionsSurviveTheCommandLine(t *testing.T) {
	spec := &formats.Spec{Name: "x", Options: []param.Param{
		{Name: "source_root", Type: param.String, Doc: "root"},
		{Name: "depth", Type: param.Int, Doc: "n"},
		{Name: "strict", Type: param.Bool, Doc: "b"},
		{Name: "roots", Type: param.StringList, Doc: "l"},
		{Name: "ratio", Type: param.Number, Doc: "r"},
	}}
	specs := []*formats.Spec{spec}
	for _, in := range []string{`{"source_root":"/src/a,b=c","depth":3,"strict":true}`, `{"source_root":"123"}`, `{"source_root":"true"}`,
		`{"roots":["/a","b=c"],"ratio":0.25}`, `{"roots":[]}`, `{"roots":["one"]}`} {
		o, err := optionsArg(args(t, in), specs, "options")
		if err != nil {
			t.Fatal(err)
		}
		flags := optionFlags(o)
		got := map[string]string{}
		for i := 1; i < len(flags); i += 2 {
			for _, kv := range kong.SplitEscaped(flags[i], ',') {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v
			}
		}
		vals, _, err := formats.EffectiveOptions(spec, command.OptionValues(got))
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := formats.EffectiveOptions(spec, args(t, in))
		if a, b := fmt.Sprint(vals), fmt.Sprint(want); a != b {
			t.Fatalf("options after the command line = %v, sent %v", a, b)
		}
	}
	for _, bad := range []string{`{"depth":"3"}`, `{"strict":"true"}`, `{"depth":1.5}`,
		`{"source_root":"a\\,b"}`, `{"source_root":{"a":1}}`, `{"nope":"x"}`,
		`{"roots":["a,b"]}`, `{"roots":"a"}`, `{"ratio":"0.5"}`} {
		if _, err := optionsArg(args(t, bad), specs, "options"); err == nil {
			t.Errorf("options %s were accepted; they cannot reach the decoder unchanged", bad)
		}
	}
}

// Decoder options an operation derives from its arguments reach
// flameox-decode, which runs apart from flameox-rank in a capture.
func TestCaptureDerivedDecoderOptions(t *testing.T) {
	p, ok := registry.Provider("process")
	if !ok {
		t.Fatal("the process provider is not registered")
	}
	var ops []*registry.Operation
	for _, n := range p.Operations {
		ops = append(ops, mustOp(t, n))
	}
	in, err := captureSchema(p, ops)
	if err != nil {
		t.Fatal(err)
	}
	nested := nestedNames(p, ops)
	j, err := prepareCapture(p, ops, sortedNames(props(in)), nested, args(t,
		`{"argv":["sh","-c","seq 500"],"analysis":{"operation":"preview_text_fragment","start_line":100,"lines":50}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := j.stages[1].args; !slices.Equal(got, []string{"--option", "max_lines=50", "--option", "start_line=100"}) {
		t.Errorf("flameox-decode %q", got)
	}
	_, err = prepareCapture(p, ops, sortedNames(props(in)), nested, args(t,
		`{"argv":["sh"],"analysis":{"operation":"preview_text_fragment","start_line":100,"options":{"start_line":5}}}`))
	wantFailure(t, err, evidence.CodeInvalidArgument, "analysis.options.start_line")
}
