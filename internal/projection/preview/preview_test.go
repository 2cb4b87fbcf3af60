package preview

import (
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/csvpreview"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/jsonpreview"
	"github.com/flameox/flameox/internal/formats/text"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

// project decodes a fixture and runs the preview projection over it with
// the given arguments, validated as flameox-rank would. It feeds the rows
// both as a block stream gives them (values) and as a process does (typed
// rows), and the two results must be the same.
func project(t *testing.T, spec *formats.Spec, fixture string, decodeOpts, args evidence.Object) *formatstest.Emitter {
	t.Helper()
	sink, err := formatstest.Decode(spec, fixture, formatstest.Read(t, fixture), decodeOpts, nil)
	if err != nil {
		t.Fatal(err)
	}
	eff, given, err := param.Validate(Spec.Params, args)
	if err != nil {
		t.Fatal(err)
	}
	var outs []*formatstest.Emitter
	for _, typed := range []bool{false, true} {
		p, err := Spec.New(eff, given)
		if err != nil {
			t.Fatal(err)
		}
		out := formatstest.Project(t, p, spec, "sha256:test", sink, typed)
		for _, tb := range out.Tables {
			if tb.Header.Operation != "" || tb.Header.Projection != Name {
				t.Fatalf("result header %+v", tb.Header)
			}
		}
		outs = append(outs, out)
	}
	if a, b := render(t, outs[0]), render(t, outs[1]); a != b {
		t.Fatalf("values and typed rows give different results:\n%s\n%s", a, b)
	}
	return outs[0]
}

func render(t *testing.T, e *formatstest.Emitter) string {
	var b strings.Builder
	for _, tb := range e.Tables {
		b.WriteString(formatstest.Canonical(t, tb.Header) + formatstest.Canonical(t, tb.Rows) + formatstest.Canonical(t, tb.Summary))
	}
	return b.String()
}

// TestSelectionBeforeBounds: AIPerf's CSV has 10 ok rows then 12 ragged
// ones. Asking for problems with rows=5 must show 5 ragged rows out of 12,
// not an empty prefix of the ok rows.
func TestSelectionBeforeBounds(t *testing.T) {
	out := project(t, csvpreview.Spec, "preview/csv/aiperf-profile_export_aiperf.csv", nil, evidence.Object{"status": "problems", "rows": 5})
	rs := out.Table(table.PreviewRecords.Name)
	if rs.Summary.RowsObserved != 12 || rs.Summary.RowsEmitted != 5 || rs.Summary.Truncation.Reason != "row_limit" || rs.Summary.Truncation.Omitted != 7 {
		t.Errorf("%+v %+v", rs.Summary, rs.Summary.Truncation)
	}
	for _, r := range rs.Rows {
		if r["status"] != table.StatusRagged {
			t.Errorf("selected a %v row", r["status"])
		}
	}
}

func TestBounds(t *testing.T) {
	t.Run("rows, with rows the decoder counted but did not emit", func(t *testing.T) {
		out := project(t, csvpreview.Spec, "preview/csv/duckdb-range.csv", nil, evidence.Object{"rows": 10})
		s := out.Table(table.PreviewRecords.Name).Summary
		if s.RowsObserved != 1000 || s.RowsEmitted != 10 || s.Truncation.Omitted != 990 || s.Complete {
			t.Errorf("%+v %+v", s, s.Truncation)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		out := project(t, csvpreview.Spec, "preview/csv/duckdb-range.csv", nil, evidence.Object{"rows": 1000, "bytes": 1024})
		rs := out.Table(table.PreviewRecords.Name)
		size := 0
		for _, r := range rs.Rows {
			size += len(formatstest.Canonical(t, r))
		}
		if size > 1024 || len(rs.Rows) == 0 || rs.Summary.Truncation.Reason != "byte_limit" {
			t.Errorf("%d rows, %d bytes, %+v", len(rs.Rows), size, rs.Summary.Truncation)
		}
	})
	t.Run("a complete small table stays complete", func(t *testing.T) {
		out := project(t, jsonpreview.JSON, "preview/json/pip-list.json", nil, nil)
		if s := out.Table(table.PreviewRecords.Name).Summary; !s.Complete || s.RowsEmitted != 4 {
			t.Errorf("%+v", s)
		}
	})
}

func TestFields(t *testing.T) {
	t.Run("csv columns by header name", func(t *testing.T) {
		out := project(t, csvpreview.Spec, "preview/csv/duckdb-range.csv", nil, evidence.Object{"fields": []any{"sq", "label"}, "rows": 2})
		if f := out.Table(table.PreviewFields.Name); len(f.Rows) != 2 {
			t.Errorf("fields %v", f.Rows)
		}
		// Header order, whatever the order asked.
		if v := formatstest.Canonical(t, out.Table(table.PreviewRecords.Name).Rows[1]["value"]); v != `["row 1","1"]` {
			t.Errorf("value %s", v)
		}
	})
	t.Run("json keys", func(t *testing.T) {
		out := project(t, jsonpreview.JSONL, "preview/jsonl/go-test.jsonl", nil, evidence.Object{"fields": []any{"Action", "Nope"}, "rows": 1})
		rs := out.Table(table.PreviewRecords.Name)
		if v := formatstest.Canonical(t, rs.Rows[0]["value"]); v != `{"Action":"start"}` {
			t.Errorf("value %s", v)
		}
		if !strings.Contains(strings.Join(rs.Summary.Limitations, " "), "[Nope] were not among the fields observed") {
			t.Errorf("an unknown field is stated: %v", rs.Summary.Limitations)
		}
	})
	t.Run("empty list", func(t *testing.T) {
		if _, err := Spec.New(evidence.Object{"fields": []string{}}, map[string]bool{"fields": true}); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%v", err)
		}
	})
}

// TestSelectionOnDecoderPrefix: when the decoder emitted only some of the
// rows it counted, a selection cannot know about the others and says so.
func TestSelectionOnDecoderPrefix(t *testing.T) {
	out := project(t, jsonpreview.JSONL, "preview/jsonl/go-test.jsonl", evidence.Object{"max_rows": 3}, evidence.Object{"status": "problems"})
	s := out.Table(table.PreviewRecords.Name).Summary
	if s.Complete || !strings.Contains(strings.Join(s.Limitations, " "), "lower bound") {
		t.Errorf("%+v", s)
	}
}

func TestTextLines(t *testing.T) {
	out := project(t, text.Spec, "preview/text/iconv-latin1.txt", nil, evidence.Object{"status": "problems"})
	ls := out.Table(table.TextLines.Name)
	if ls.Summary.RowsObserved != 2 || ls.Rows[0]["escaped"] != true {
		t.Errorf("%+v %v", ls.Summary, ls.Rows)
	}
	out = project(t, text.Spec, "preview/text/python-importtime.txt", nil, evidence.Object{"rows": 3})
	if s := out.Table(table.TextLines.Name).Summary; s.RowsEmitted != 3 || s.RowsObserved != 26 || s.Truncation.Omitted != 23 {
		t.Errorf("%+v", s)
	}
}

func TestAdmission(t *testing.T) {
	p, _ := New(evidence.Object{"rows": int64(5), "bytes": int64(1000), "status": "all"}, nil)
	if err := p.Table(&evidence.Table{ID: "x", Name: "cpu.frames"}, formats.Caps{}); evidence.CodeOf(err) != evidence.CodeUnsupportedFormat {
		t.Errorf("%v", err)
	}
	if err := p.Row(&evidence.Table{ID: "y"}, evidence.Object{}); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
		t.Errorf("%v", err)
	}
}

// TestMissingSummary: a decode that failed midway leaves a table without
// summary; the projection shows its rows and says it is incomplete.
func TestMissingSummary(t *testing.T) {
	p, _ := New(evidence.Object{"rows": int64(5), "bytes": int64(1000), "status": "all"}, nil)
	h := &evidence.Table{ID: "t", Name: table.PreviewRecords.Name, Columns: table.PreviewRecords.EvidenceColumns("")}
	if err := p.Table(h, formats.Caps{}); err != nil {
		t.Fatal(err)
	}
	_ = p.Row(h, evidence.Object{"index": 0, "line": 1, "offset": 0, "bytes": 2, "status": "ok", "value": 1, "error": nil})
	out := &formatstest.Emitter{}
	if err := p.Finish(out); err != nil {
		t.Fatal(err)
	}
	if s := out.Tables[0].Summary; s.Complete || len(out.Tables[0].Rows) != 1 {
		t.Errorf("%+v", s)
	}
}

// TestFieldPositionsCapability: the CSV columns of a fields selection come
// from the format's capability, not from its name: without it the field
// positions say nothing about record values, and none are kept.
func TestFieldPositionsCapability(t *testing.T) {
	blind := *csvpreview.Spec
	blind.Caps = formats.Caps{}
	out := project(t, &blind, "preview/csv/duckdb-range.csv", nil, evidence.Object{"fields": []any{"sq", "label"}, "rows": 2})
	if v := formatstest.Canonical(t, out.Table(table.PreviewRecords.Name).Rows[1]["value"]); v != `[]` {
		t.Errorf("value %s", v)
	}
}

// FuzzProject decodes arbitrary bytes as CSV and as JSON Lines and
// projects them with a selection and small bounds: the projection never
// fails on what a decoder emitted, and its summaries stay honest.
func FuzzProject(f *testing.F) {
	for _, dir := range []string{"preview/csv", "preview/jsonl"} {
		for _, s := range formatstest.Seeds(f, dir, 2048) {
			f.Add(s, true, uint8(3))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, problems bool, rows uint8) {
		args := evidence.Object{"rows": int64(rows%8) + 1, "bytes": 512, "fields": []any{"a", "label", "Action"}}
		if problems {
			args["status"] = Problems
		}
		eff, given, err := param.Validate(Spec.Params, args)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range []*formats.Spec{csvpreview.Spec, jsonpreview.JSONL} {
			sink, _ := formatstest.Decode(spec, "f", data, evidence.Object{"max_rows": 20}, nil)
			p, err := Spec.New(eff, given)
			if err != nil {
				t.Fatal(err)
			}
			formatstest.Project(t, p, spec, "sha256:fuzz", sink, true)
		}
	})
}

func BenchmarkProject(b *testing.B) {
	data := formatstest.Read(b, "preview/csv/duckdb-range.csv")
	sink, err := formatstest.Decode(csvpreview.Spec, "d.csv", data, evidence.Object{"max_rows": 1000}, nil)
	if err != nil {
		b.Fatal(err)
	}
	eff, given, err := param.Validate(Spec.Params, evidence.Object{"rows": 1000, "bytes": 1 << 20, "fields": []any{"sq", "label"}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p, _ := Spec.New(eff, given)
		formatstest.Project(b, p, csvpreview.Spec, "sha256:bench", sink, true)
	}
}
