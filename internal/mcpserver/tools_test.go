package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/capture"
	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/projection"
	"github.com/flameox/flameox/internal/registry"
	"github.com/flameox/flameox/internal/table"
)

func mustOp(t *testing.T, name string) *registry.Operation {
	t.Helper()
	op, ok := registry.OperationByName(name)
	if !ok {
		t.Fatalf("operation %s is not registered", name)
	}
	return op
}

// testProvider declares a V8 CPU profile output feeding both CPU
// operations: it exercises capture schemas and the pre-run checks without
// depending on which providers the registry holds today. Its Resolve and
// Plan are never called: the server runs flameox-capture, which owns them.
func testProvider(t *testing.T) *capture.Provider {
	return &capture.Provider{
		Name:      "test-v8",
		Title:     "Test V8 provider",
		Family:    "CPU profiles",
		Selection: "test only",
		Params: []param.Param{
			{Name: "sampling_interval_us", Type: param.Int, Min: param.F(1), Doc: "sampling interval"},
		},
		Artifacts:  []capture.Role{{Role: "cpu-profile", Format: "v8-cpuprofile", Pattern: "*.cpuprofile", Required: true}},
		Operations: []string{"summarize_cpu_hotspots", "summarize_cpu_caller_edges"},
		Binding:    capture.Binding{Executable: "node"},
	}
}

func schemaOf(t *testing.T, raw json.RawMessage) evidence.Object {
	t.Helper()
	v, err := evidence.ParseValue(raw, 64)
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	return v.(evidence.Object)
}

func props(o evidence.Object) evidence.Object { return o["properties"].(evidence.Object) }

func TestToolsCoverRegistry(t *testing.T) {
	s, err := New(Options{BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, op := range registry.Operations() {
		want = append(want, op.Name)
	}
	for _, p := range registry.Providers() {
		want = append(want, CaptureToolName(p.Name))
	}
	want = append(want, ServiceTools()...)
	var got []string
	for _, tool := range s.Tools() {
		got = append(got, tool.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want one per operation and provider %v", got, want)
	}
	for _, tool := range s.Tools() {
		in := schemaOf(t, tool.RawInputSchema)
		if in["additionalProperties"] != false || in["type"] != "object" {
			t.Errorf("%s: input schema must be a closed object: %v", tool.Name, in)
		}
		if tool.Description == "" || tool.RawOutputSchema == nil {
			t.Errorf("%s: missing description or output schema", tool.Name)
		}
		op, isOp := registry.OperationByName(tool.Name)
		if !isOp {
			continue
		}
		// paths, and the operation's own required arguments (a trace
		// window's start_ns and end_ns), as param.JSONSchema sorts them.
		wantReq := []string{"paths"}
		for _, p := range op.Params() {
			if p.Required {
				wantReq = append(wantReq, p.Name)
			}
		}
		slices.Sort(wantReq)
		var req []string
		for _, r := range in["required"].([]any) {
			req = append(req, r.(string))
		}
		if !slices.Equal(req, wantReq) {
			t.Errorf("%s: required = %v, want %v", tool.Name, req, wantReq)
		}
		for _, p := range op.Params() {
			if _, ok := props(in)[p.Name]; !ok {
				t.Errorf("%s: parameter %s is not in the schema", tool.Name, p.Name)
			}
		}
		enum := props(in)["format"].(evidence.Object)["enum"].([]any)
		if len(enum) != len(op.Formats()) {
			t.Errorf("%s: format enum %v, want %v", tool.Name, enum, op.Formats())
		}
	}
}

func TestCaptureSchemaFromProvider(t *testing.T) {
	p := testProvider(t)
	s, err := New(Options{BinDir: t.TempDir(), Providers: []*capture.Provider{p}})
	if err != nil {
		t.Fatal(err)
	}
	var tool *struct{ raw json.RawMessage }
	for _, tl := range s.Tools() {
		if tl.Name == "capture_test_v8" {
			tool = &struct{ raw json.RawMessage }{tl.RawInputSchema}
			if tl.Annotations.ReadOnlyHint != nil && *tl.Annotations.ReadOnlyHint {
				t.Error("a capture tool runs a workload: it must not claim to be read-only")
			}
		}
	}
	if tool == nil {
		t.Fatal("no capture_test_v8 tool")
	}
	in := schemaOf(t, tool.raw)
	for _, name := range []string{"argv", "cwd", "budget", "console_output", "preserve", "analysis", "sampling_interval_us"} {
		if _, ok := props(in)[name]; !ok {
			t.Errorf("capture schema lacks %s", name)
		}
	}
	// The operation's own arguments are declared once, by its tool; the
	// capture's analysis object names the operation, and the instructions
	// say, once for every capture tool, what else it holds.
	a := props(in)["analysis"].(evidence.Object)
	op := props(a)["operation"].(evidence.Object)
	if got := op["enum"].([]any); len(got) != 2 || got[0] != "summarize_cpu_hotspots" {
		t.Errorf("analysis.operation = %v", op)
	}
	if !strings.Contains(Instructions(nil), "analysis holds operation") {
		t.Error("the instructions do not say what a capture's analysis holds")
	}
	if d := tooldesc(s, "capture_test_v8"); !strings.Contains(d, `Example: {"analysis":{"top":10},"argv":`) {
		t.Errorf("a capture tool's description has no example: %q", d)
	}
}

func tooldesc(s *Server, name string) string {
	for _, tl := range s.Tools() {
		if tl.Name == name {
			return tl.Description
		}
	}
	return ""
}

func TestReservedNamesRefused(t *testing.T) {
	op := &registry.Operation{Name: "bad_op", Title: "bad", Projection: &projection.Spec{Name: "bad",
		Tables: []*table.Schema{table.CPUFrames.Schema}, Params: []param.Param{{Name: "paths", Type: param.String}}}}
	if _, err := New(Options{BinDir: t.TempDir(), Operations: []*registry.Operation{op}, Providers: []*capture.Provider{}}); err == nil {
		t.Error("an operation parameter named paths must be refused")
	}
	p := testProvider(t)
	p.Params = append(p.Params, param.Param{Name: "argv", Type: param.String})
	if _, err := New(Options{BinDir: t.TempDir(), Providers: []*capture.Provider{p}}); err == nil {
		t.Error("a provider parameter named argv must be refused")
	}
	nested := &registry.Operation{Name: "summarize_cpu_hotspots", Title: "x", Projection: &projection.Spec{Name: "x",
		Tables: []*table.Schema{table.CPUFrames.Schema}, Params: []param.Param{{Name: "operation", Type: param.String}}}}
	if _, err := New(Options{BinDir: t.TempDir(), Operations: []*registry.Operation{nested}, Providers: []*capture.Provider{testProvider(t)}}); err == nil {
		t.Error("an operation parameter named operation must be refused in a capture's analysis object")
	}
}

// An example is shown only with a format it fits: a metric example is
// never illustrated with a V8 profile, whose weight is fixed.
func TestExamplesFitTheirFormat(t *testing.T) {
	op := mustOp(t, "summarize_cpu_hotspots")
	if s, ok := exampleFormat(op, evidence.Object{"metric": "cumulative"}); ok && s.Name == "v8-cpuprofile" {
		t.Error("a metric example was illustrated with a V8 profile")
	}
	if s, ok := exampleFormat(op, evidence.Object{"top": int64(5)}); !ok || !slices.Contains(op.Formats(), s.Name) {
		t.Errorf("a plain example got format %v", s)
	}
	desc := analysisDescription(op, nil)
	for _, line := range strings.Split(desc, "\n") {
		if !strings.HasPrefix(line, "Example") {
			continue
		}
		raw := line[strings.Index(line, "{"):]
		v, err := evidence.ParseValue([]byte(raw), 16)
		if err != nil {
			t.Fatalf("example %q is not JSON: %v", line, err)
		}
		if _, err := prepareAnalysis(op, analysisAccepted(t, op), v.(evidence.Object)); err != nil {
			t.Errorf("example %q does not validate: %v", line, err)
		}
	}
}

func analysisAccepted(t *testing.T, op *registry.Operation) []string {
	t.Helper()
	in, err := analysisSchema(op)
	if err != nil {
		t.Fatal(err)
	}
	return sortedNames(props(in))
}

// Decoder options are typed by their declarations: an analysis tool's
// options carry each option's type, bounds and default, and an option that
// formats declare differently is an anyOf of the declarations.
// Decoder options and limits are named in the tool's schema; their
// declarations (types, bounds) stay the formats', which validate them.
func TestOptionsSchemaNamesDeclarations(t *testing.T) {
	op := mustOp(t, "preview_artifact")
	in, err := analysisSchema(op)
	if err != nil {
		t.Fatal(err)
	}
	desc := props(in)["options"].(evidence.Object)["description"].(string)
	for _, s := range specsOf(op.Formats()) {
		for _, p := range s.Options {
			if !strings.Contains(desc, p.Name) {
				t.Errorf("options does not name %s (a %s option): %q", p.Name, s.Name, desc)
			}
		}
	}
	if _, ok := props(in)["limits"]; !ok {
		t.Error("no limits argument")
	}
}

func TestClipDoc(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"short", "short"},
		// clauses that fit
		{"keep these kinds of device activity (kernel, memcpy); default: all of them", "keep these kinds of device activity (kernel, memcpy)"},
		// the first clause, when none fits
		{"aggregate: one row per series (name, phase, unit, process, artifact) in name order; raw: in file order",
			"aggregate: one row per series (name, phase, unit, process, artifact) in name order"},
		// a clause end inside a parenthesis is not one
		{"keep files whose recorded path matches one of these globs (`**` spans directories; a directory matches everything below it)",
			"keep files whose recorded path matches one of these globs (`**` spans directories; a directory matches everything below it)"},
		// a trailing flag reference, or the pattern syntax
		{"record tensor memory allocation events of every op (--profile-memory: profile_memory=True)",
			"record tensor memory allocation events of every op"},
		{"keep findings whose source file matches this regular expression (RE2)",
			"keep findings whose source file matches this regular expression"},
		// a parenthesis listing values stays
		{"keep producer-made frames such as (program), (idle) and (garbage collector)",
			"keep producer-made frames such as (program), (idle) and (garbage collector)"},
		{"keep these kinds of device activity (kernel, memcpy, memset, memory pool operations)",
			"keep these kinds of device activity (kernel, memcpy, memset, memory pool operations)"},
		// the detail after a colon stays: a cursor's source, a glob's syntax
		{"continue after the last row of an earlier result: its summary's coverage.next_cursor",
			"continue after the last row of an earlier result: its summary's coverage.next_cursor"},
	} {
		if got := clipDoc(c.in, 56); got != c.want {
			t.Errorf("clipDoc(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFirstSentences(t *testing.T) {
	long := "Use to see what changed between two CPU profiles of the same workload (before and after a change): " +
		"per function the baseline and new weights, their shares and the change, ranked by the change of self weight."
	if got, want := firstSentences(long, 160), "Use to see what changed between two CPU profiles of the same workload (before and after a change)."; got != want {
		t.Errorf("firstSentences = %q, want %q", got, want)
	}
	two := "Sample a program. Then say more about it than fits in the bound of this description, at length, at length."
	if got := firstSentences(two, 40); got != "Sample a program." {
		t.Errorf("firstSentences = %q", got)
	}
	// a short clause would say too little: the first sentence stays whole
	one := "Track every allocation with Memray: pick it for where Python memory goes at its peak and what leaks at exit."
	if got := firstSentences(one, 80); got != one {
		t.Errorf("firstSentences = %q", got)
	}
}

// An argument description several schemas share is said once, in the
// instructions; one described otherwise keeps its own.
func TestShareDocs(t *testing.T) {
	mk := func(top string) evidence.Object {
		return evidence.Object{"properties": evidence.Object{
			"top":     evidence.Object{"type": "integer", "description": top},
			"options": evidence.Object{"type": "object", "description": "a, b"},
		}}
	}
	schemas := []evidence.Object{mk("rows to keep"), mk("rows to keep"), mk("slices to return")}
	shared := shareDocs(schemas)
	if len(shared) != 1 || shared[0] != [2]string{"top", "rows to keep"} {
		t.Fatalf("shared = %v", shared)
	}
	for i, want := range []string{"", "", "slices to return"} {
		if got, _ := props(schemas[i])["top"].(evidence.Object)["description"].(string); got != want {
			t.Errorf("schema %d: top description %q, want %q", i, got, want)
		}
		if _, ok := props(schemas[i])["options"].(evidence.Object)["description"]; !ok {
			t.Errorf("schema %d: the options' names were removed", i)
		}
	}
	if ins := Instructions(shared); !strings.Contains(ins, "top: rows to keep.") {
		t.Errorf("instructions do not carry the shared description: %q", ins[len(ins)-80:])
	}
}

// A schema keeps what a model needs to call the tool: types, enums,
// bounds, defaults other than false; a type beside an enum and a false
// boolean default are dropped.
func TestCompactSchema(t *testing.T) {
	in, err := analysisSchema(mustOp(t, "summarize_cpu_hotspots"))
	if err != nil {
		t.Fatal(err)
	}
	p := props(in)
	if m := p["metric"].(evidence.Object); m["type"] != nil || m["enum"] == nil {
		t.Errorf("metric = %v, want a bare enum", m)
	}
	if top := p["top"].(evidence.Object); top["type"] != "integer" || top["minimum"] == nil || top["maximum"] == nil || top["default"] == nil {
		t.Errorf("top = %v, want its type, bounds and default", top)
	}
	if s := p["include_synthetic"].(evidence.Object); s["default"] != true {
		t.Errorf("include_synthetic = %v, want its true default kept", s)
	}
	p2 := testProvider(t)
	p2.Params = append(p2.Params, param.Param{Name: "native", Type: param.Bool, Default: false, Doc: "native frames"})
	cin, err := captureSchema(p2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := props(cin)["native"].(evidence.Object); n["default"] != nil || n["type"] != "boolean" {
		t.Errorf("native = %v, want a boolean without its false default", n)
	}
}
