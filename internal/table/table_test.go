package table

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
)

func TestNames(t *testing.T) {
	if err := CheckNames(); err != nil {
		t.Fatal(err)
	}
	if len(All()) == 0 {
		t.Fatal("no schemas")
	}
}

// A typed row encodes to the same canonical bytes as its values object,
// and reads back to the same struct.
func TestTypedRowMatchesObject(t *testing.T) {
	rows := []*Frame{
		{FrameSite: FrameSite{FrameID: "f1", Function: "main", File: Some("/a.js"), Line: 3, Column: -1, Symbolization: Symbolized},
			SelfWeight: 5, InclusiveWeight: 7.25, Calls: Some(int64(9))},
		{FrameSite: FrameSite{FrameID: "f\"2", Function: "", Line: -1, Column: -1, Symbolization: Anonymous, Thread: Some("t\n1")},
			SelfWeight: math.Inf(1), InclusiveWeight: math.NaN(), PrimitiveCalls: Some(int64(1) << 60)},
	}
	for _, r := range rows {
		got, err := CPUFrames.AppendValues(nil, r, "sha256:x")
		if err != nil {
			t.Fatal(err)
		}
		o, err := CPUFrames.Values(r, "sha256:x")
		if err != nil {
			t.Fatal(err)
		}
		want, err := evidence.Canonical(o)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("typed encoding\n%s\nobject encoding\n%s", got, want)
		}
		// Through the wire and back.
		v, err := evidence.ParseValue(got, 0)
		if err != nil {
			t.Fatal(err)
		}
		back, err := CPUFrames.Scan(v.(evidence.Object))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := CPUFrames.AppendValues(nil, back, "sha256:x")
		if string(again) != string(got) {
			t.Fatalf("round trip changed the row:\n%s\n%s", got, again)
		}
	}
}

func TestObjectRowsAreChecked(t *testing.T) {
	good := func() evidence.Object {
		return evidence.Object{"frame_id": "f", "function": "g", "file": nil, "line": int64(1), "column": int64(-1),
			"module": nil, "symbolization": Symbolized, "thread": nil, "process": nil, "self_weight": 1.0,
			"inclusive_weight": json.Number("2"), "inclusive_occurrence_weight": nil, "calls": nil, "primitive_calls": nil}
	}
	if _, err := CPUFrames.Values(good(), "sha256:a"); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(evidence.Object){
		"missing column": func(o evidence.Object) { delete(o, "line") },
		"extra column":   func(o evidence.Object) { o["extra"] = 1 },
		"wrong type":     func(o evidence.Object) { o["line"] = "one" },
		"other artifact": func(o evidence.Object) { o[ArtifactColumn] = "sha256:b" },
	} {
		o := good()
		mut(o)
		if _, err := CPUFrames.Values(o, "sha256:a"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	o := good()
	if _, err := CPUFrames.Values(o, "sha256:a"); err != nil || o[ArtifactColumn] != "sha256:a" {
		t.Fatalf("artifact column not written: %v %v", o[ArtifactColumn], err)
	}
}

func TestScanRejectsNullInNonNullColumn(t *testing.T) {
	o, _ := CPUFrames.Values(&Frame{FrameSite: FrameSite{FrameID: "f", Symbolization: Symbolized}}, "sha256:a")
	o["line"] = nil
	if _, err := CPUFrames.Scan(o); err == nil || !strings.Contains(err.Error(), "line") {
		t.Fatalf("null line scanned: %v", err)
	}
}

func TestJSONColumns(t *testing.T) {
	r := &CoverageFile{File: "a.py", MissingLineNumbers: []int64{3, 9}, Contexts: nil}
	b, err := CoverageFiles.AppendValues(nil, r, "sha256:a")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"contexts":null`) || !strings.Contains(string(b), `"missing_line_numbers":[3,9]`) {
		t.Fatalf("%s", b)
	}
	v, _ := evidence.ParseValue(b, 0)
	back, err := CoverageFiles.Scan(v.(evidence.Object))
	if err != nil || len(back.MissingLineNumbers) != 2 || back.MissingLineNumbers[1] != 9 || back.Contexts != nil {
		t.Fatalf("%+v %v", back, err)
	}
}

func TestHeaderUnits(t *testing.T) {
	h := CPUFrames.Header("samples")
	for _, c := range h.Columns {
		if c.Unit == PerTable {
			t.Fatalf("column %s keeps the placeholder unit", c.Name)
		}
	}
	if c, _ := h.Column("self_weight"); c.Unit != "samples" {
		t.Fatalf("self_weight unit %q", c.Unit)
	}
	if c, _ := CPUFrames.Column(ArtifactColumn); !c.Identity {
		t.Fatal("artifact_id is not an identity column")
	}
}

func BenchmarkAppendFrame(b *testing.B) {
	r := &Frame{FrameSite: FrameSite{FrameID: "v8:0123456789abcdef", Function: "crunchPrimes", File: Some("file:///app/app.js"), Line: 12, Column: 4, Symbolization: Symbolized}, SelfWeight: 1234, InclusiveWeight: 5678}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = CPUFrames.AppendValues(buf[:0], r, "sha256:0000000000000000000000000000000000000000000000000000000000000000")
	}
	b.SetBytes(int64(len(buf)))
}

// An embedded row type's columns stand in its place: cpu.caller_edges is
// rank, artifact_id, then cpu.edges' columns in their order, and its rows
// encode and scan back through the embedded struct.
func TestEmbeddedColumns(t *testing.T) {
	want := append([]string{"rank", ArtifactColumn}, CPUEdges.Names()[1:]...) // cpu.edges' own artifact_id is the sink's
	if got := CPUCallerEdges.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("columns %v, want %v", got, want)
	}
	for i, c := range CPUCallerEdges.Columns[2:] {
		if e := CPUEdges.Columns[i+1]; c != e {
			t.Errorf("column %s is %+v; cpu.edges declares %+v", c.Name, c, e)
		}
	}
	r := &CallerEdge{Rank: 3, ArtifactID: "sha256:a", Edge: Edge{CallerID: "c", CallerFunction: "main", CallerLine: 1,
		CalleeID: "d", CalleeFunction: "work", CalleeFile: Some("w.go"), CalleeLine: -1, Thread: Some("t1"),
		Weight: Some(2.5), SelfWeight: Some(1.0), Calls: Some(int64(7))}}
	got, err := CPUCallerEdges.AppendValues(nil, r, "")
	if err != nil {
		t.Fatal(err)
	}
	o, err := CPUCallerEdges.Values(r, "")
	if err != nil {
		t.Fatal(err)
	}
	if o["callee_file"] != "w.go" || o["rank"] != int64(3) || o["weight"] != 2.5 || o["process"] != nil {
		t.Fatalf("values %v", o)
	}
	want2, _ := evidence.Canonical(o)
	if string(got) != string(want2) {
		t.Fatalf("typed encoding\n%s\nobject encoding\n%s", got, want2)
	}
	v, _ := evidence.ParseValue(got, 0)
	back, err := CPUCallerEdges.Scan(v.(evidence.Object))
	if err != nil {
		t.Fatal(err)
	}
	if *back != *r {
		t.Fatalf("scanned %+v, want %+v", back, r)
	}
}

func TestEmbeddedDeclarationErrors(t *testing.T) {
	type inner struct {
		A string `col:"a" doc:"a"`
	}
	type Inner struct {
		A string `col:"a" doc:"a"`
	}
	type hidden struct{ inner }
	type twice struct {
		A string `col:"a" doc:"a"`
		Inner
	}
	type artifact struct {
		Inner
		ID string `col:"artifact_id" doc:"x"`
	}
	for name, c := range map[string]struct {
		typ          reflect.Type
		fromArtifact bool
		want         string
	}{
		"unexported embedded":         {reflect.TypeFor[hidden](), false, "not exported"},
		"column declared twice":       {reflect.TypeFor[twice](), false, "column a is declared twice"},
		"artifact column and a field": {reflect.TypeFor[artifact](), true, "column artifact_id is declared twice"},
	} {
		if _, _, err := newCodec(c.typ, c.fromArtifact); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func BenchmarkAppendCallerEdge(b *testing.B) {
	r := &CallerEdge{Rank: 1, ArtifactID: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		Edge: Edge{CallerID: "v8:0123456789abcdef", CallerFunction: "main", CallerFile: Some("file:///app/app.js"), CallerLine: 3,
			CalleeID: "v8:fedcba9876543210", CalleeFunction: "crunchPrimes", CalleeLine: 12, Weight: Some(5678.0), SelfWeight: Some(1234.0)}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = CPUCallerEdges.AppendValues(buf[:0], r, "")
	}
	b.SetBytes(int64(len(buf)))
}

func TestColumnLookup(t *testing.T) {
	for _, s := range All() {
		for _, c := range s.Columns {
			if got, ok := s.Column(c.Name); !ok || got != c {
				t.Errorf("%s: Column(%s) = %+v, %v", s.Name, c.Name, got, ok)
			}
		}
		if _, ok := s.Column("no_such_column"); ok {
			t.Errorf("%s: found an undeclared column", s.Name)
		}
	}
}

// A coordinate's base is fixed by its schema or stated by each table, and
// read back from the header the way the table view needs it.
func TestCoordinateBase(t *testing.T) {
	base := func(s *Schema, h *evidence.Table, name string) (int, bool) {
		c, ok := h.Column(name)
		if !ok {
			t.Fatalf("%s: no column %s", h.Name, name)
		}
		return s.Base(c)
	}
	if _, ok := base(CPUFrames.Schema, CPUFrames.Header("samples"), "line"); ok {
		t.Error("an unstated per-table base reads as known")
	}
	for _, want := range []int{0, 1} {
		h := CPUFrames.HeaderBased("samples", want)
		for _, col := range []string{"line", "column"} {
			if b, ok := base(CPUFrames.Schema, h, col); !ok || b != want {
				t.Errorf("cpu.frames %s stated %d, read %d %v", col, want, b, ok)
			}
		}
		if _, ok := base(CPUFrames.Schema, h, "self_weight"); ok {
			t.Error("a weight has a base")
		}
	}
	if b, ok := base(PytestOutcomes.Schema, PytestOutcomes.Header(""), "line"); !ok || b != 0 {
		t.Errorf("pytest line base %d %v, want 0", b, ok)
	}
	if b, ok := base(TextLines.Schema, TextLines.Header(""), "line"); !ok || b != 1 {
		t.Errorf("text line base %d %v, want 1", b, ok)
	}
	type bad struct {
		L int64 `col:"l,base=1" doc:"a 0-based line"`
	}
	if _, _, err := newCodec(reflect.TypeFor[bad](), false); err == nil {
		t.Error("a doc that contradicts its base is accepted")
	}
}

// Every column of every schema says what it holds: docs, MCP schemas and
// block headers all show the description.
func TestEveryColumnDescribed(t *testing.T) {
	for _, s := range All() {
		if s.Doc == "" {
			t.Errorf("schema %s has no description", s.Name)
		}
		for _, c := range s.Columns {
			if c.Description == "" {
				t.Errorf("%s.%s has no description", s.Name, c.Name)
			}
		}
		for _, c := range s.EvidenceColumns("s") {
			if c.Description == "" {
				t.Errorf("%s.%s has no description in its header", s.Name, c.Name)
			}
		}
	}
}
