package jsonpreview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

func decodeOK(t *testing.T, spec *formats.Spec, name string, data []byte, opts evidence.Object) *formatstest.Sink {
	t.Helper()
	sink, err := formatstest.Decode(spec, name, data, opts, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return sink
}

// TestJSONMatchesPythonJSON compares record counts and the first records
// with what Python's json module read from the same fixtures (regen.sh).
func TestJSONMatchesPythonJSON(t *testing.T) {
	for _, name := range []string{"pip-list.json", "duckdb-range-array.json", "aiperf-profile_export_aiperf.json"} {
		t.Run(name, func(t *testing.T) {
			want := formatstest.ReadJSON(t, "preview/expected/"+name+".json")
			sink := decodeOK(t, JSON, name, formatstest.Read(t, filepath.Join("preview/json", name)), nil)
			recs := sink.Table(table.PreviewRecords.Name)
			n, _ := evidence.AsInt(want["records"])
			if recs.Summary.RowsObserved != n {
				t.Errorf("records observed %d, python json %d", recs.Summary.RowsObserved, n)
			}
			first := want["first"].([]any)
			for i, w := range first {
				if got := formatstest.Canonical(t, recs.Rows[i]["value"]); got != formatstest.Canonical(t, w) {
					t.Errorf("record %d:\n got %s\nwant %s", i, got, formatstest.Canonical(t, w))
				}
			}
			if !recs.Summary.Complete && n <= 100 {
				t.Errorf("a small document read whole is complete: %+v", recs.Summary)
			}
		})
	}
}

// TestJSONRecordLocations checks that each record's offset and bytes
// delimit exactly the native text of its value.
func TestJSONRecordLocations(t *testing.T) {
	data := formatstest.Read(t, "preview/json/duckdb-range-array.json")
	sink := decodeOK(t, JSON, "a.json", data, nil)
	for _, r := range sink.Table(table.PreviewRecords.Name).Rows {
		off, _ := evidence.AsInt(r["offset"])
		n, _ := evidence.AsInt(r["bytes"])
		v, err := evidence.ParseValue(data[off:off+n], 0)
		if err != nil {
			t.Fatalf("record %v: slice does not parse: %v", r["index"], err)
		}
		if formatstest.Canonical(t, v) != formatstest.Canonical(t, r["value"]) {
			t.Fatalf("record %v: slice and value differ", r["index"])
		}
	}
}

func TestJSONFieldsAndOutline(t *testing.T) {
	sink := decodeOK(t, JSON, "d.json", formatstest.Read(t, "preview/json/duckdb-range-array.json"), nil)
	fields := sink.Table(table.PreviewFields.Name)
	got := map[string]string{}
	for _, f := range fields.Rows {
		got[f["name"].(string)] = fmt.Sprintf("%s/%v/%v", f["type"], f["observed"], f["nulls"])
	}
	// DuckDB wrote sq as null for every multiple of 7 among 0..49.
	want := map[string]string{"i": "number/50/0", "label": "string/50/0", "half": "number/50/0", "third": "boolean/50/0", "sq": "number|null/50/8"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	out := sink.Table(table.PreviewOutline.Name)
	if len(out.Rows) != 1 || out.Rows[0]["records"] != true || out.Rows[0]["members"] != int64(50) {
		t.Errorf("outline of a top-level array: %v", out.Rows)
	}
}

func TestJSONBounds(t *testing.T) {
	data := formatstest.Read(t, "preview/json/duckdb-range-array.json")
	t.Run("max_rows", func(t *testing.T) {
		s := decodeOK(t, JSON, "d.json", data, evidence.Object{"max_rows": 3}).Table(table.PreviewRecords.Name).Summary
		if s.RowsObserved != 50 || s.RowsEmitted != 3 || s.Complete || s.Truncation == nil ||
			s.Truncation.Reason != "row_limit" || s.Truncation.Omitted != 47 {
			t.Errorf("summary %+v %+v", s, s.Truncation)
		}
	})
	t.Run("max_bytes", func(t *testing.T) {
		sink := decodeOK(t, JSON, "d.json", data, evidence.Object{"max_bytes": 500})
		s := sink.Table(table.PreviewRecords.Name).Summary
		read, _ := evidence.AsInt(s.Coverage["bytes_read"])
		if s.Complete || s.Coverage["end_reached"] != false || read < 500 || read >= int64(len(data)) {
			t.Errorf("coverage %v", s.Coverage)
		}
		if s.RowsObserved == 0 || s.RowsObserved >= 50 {
			t.Errorf("a 500-byte prefix holds some, not all, of 50 records: %d", s.RowsObserved)
		}
		if !strings.Contains(strings.Join(s.Limitations, " "), "not observed") {
			t.Errorf("limitations do not say the rest is unobserved: %v", s.Limitations)
		}
		if o := sink.Table(table.PreviewOutline.Name); o.Rows[0]["complete"] != false {
			t.Errorf("the records array was not read to its end: %v", o.Rows[0])
		}
	})
	t.Run("max_record_bytes", func(t *testing.T) {
		rs := decodeOK(t, JSON, "d.json", data, evidence.Object{"max_record_bytes": 40}).Table(table.PreviewRecords.Name)
		over := 0
		for _, r := range rs.Rows {
			if r["status"] == table.StatusOversized {
				over++
				if r["value"] != nil {
					t.Errorf("oversized record keeps its value: %v", r)
				}
			}
		}
		if over == 0 || rs.Summary.Complete {
			t.Errorf("no record reported oversized at 40 bytes: %d, %+v", over, rs.Summary)
		}
	})
}

func TestJSONRecordsPointer(t *testing.T) {
	doc := []byte(`{"meta":{"n":2},"a/b":[1,2],"deep":{"items":[{"x":1},{"x":2},{"x":3}]},"s":"str"}`)
	for _, c := range []struct {
		ptr     string
		records int64
		code    evidence.Code
	}{
		{"", 2, ""}, // auto: the first array-valued member
		{"/deep/items", 3, ""},
		{"/a~1b", 2, ""},
		{"/s", 0, evidence.CodeInvalidArgument},
		{"/missing", 0, evidence.CodeInvalidArgument},
		{"no-slash", 0, evidence.CodeInvalidArgument},
		{"/bad~2escape", 0, evidence.CodeInvalidArgument},
	} {
		t.Run(c.ptr, func(t *testing.T) {
			sink, err := formatstest.Decode(JSON, "p.json", doc, evidence.Object{"records": c.ptr}, nil)
			formatstest.CheckInvariants(t, sink, err)
			if got := evidence.CodeOf(err); got != c.code {
				t.Fatalf("code %q, want %q (%v)", got, c.code, err)
			}
			if c.code == "" && sink.Table(table.PreviewRecords.Name).Summary.RowsObserved != c.records {
				t.Errorf("records %d, want %d", sink.Table(table.PreviewRecords.Name).Summary.RowsObserved, c.records)
			}
		})
	}
}

func TestJSONValues(t *testing.T) {
	doc := []byte("\xEF\xBB\xBF" + `[{"big":123456789012345678901234567890,"huge":1e400,"tiny":1e-400,"f":0.1,"u":"\u00e9\ud83d\ude00"}]`)
	sink := decodeOK(t, JSON, "v.json", doc, nil)
	got := formatstest.Canonical(t, sink.Table(table.PreviewRecords.Name).Rows[0]["value"])
	want := `{"big":"123456789012345678901234567890","f":0.1,"huge":{"type":"double","value":"Infinity"},"tiny":0,"u":"é😀"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if off := sink.Table(table.PreviewRecords.Name).Rows[0]["offset"]; off != int64(4) {
		t.Errorf("offset after a BOM is %v, want 4", off)
	}
}

// TestJSONHostile feeds malformed and adversarial documents; each must end
// in its typed failure, never a panic or an untyped error.
func TestJSONHostile(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	for _, c := range []struct {
		name   string
		data   string
		limits map[string]int64
		code   evidence.Code
		// partial: tables are still emitted before the failure.
		partial bool
	}{
		{"empty", "", nil, evidence.CodeDecodeFailure, false},
		{"not json", "hello", nil, evidence.CodeDecodeFailure, false},
		{"deep nesting", deep, nil, evidence.CodeLimitExceeded, true},
		{"syntax error after records", `[{"a":1},{"a":2},{"a":]`, nil, evidence.CodeDecodeFailure, true},
		{"duplicate key", `{"a":[1],"a":[2]}`, nil, evidence.CodeDecodeFailure, true},
		{"invalid utf-8", "[\"\xff\xfe\"]", nil, evidence.CodeDecodeFailure, true},
		{"trailing data", `[1,2] [3]`, nil, evidence.CodeDecodeFailure, true},
		{"token ceiling", `["` + strings.Repeat("x", 2000) + `"]`, map[string]int64{"max_token_bytes": 1000}, evidence.CodeLimitExceeded, true},
		{"depth ceiling", `[[[[1]]]]`, map[string]int64{"max_depth": 3}, evidence.CodeLimitExceeded, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink, err := formatstest.Run(t, JSON, "h.json", []byte(c.data), c.limits, nil)
			formatstest.CheckInvariants(t, sink, err)
			if got := evidence.CodeOf(err); got != c.code {
				t.Fatalf("code %q, want %q (%v)", got, c.code, err)
			}
			if c.partial {
				r := sink.Table(table.PreviewRecords.Name)
				if r == nil || r.Summary.Complete || r.Summary.Coverage["end_reached"] != false {
					t.Fatalf("a failure after reading must close the tables incomplete: %+v", r)
				}
			}
		})
	}
	t.Run("syntax error keeps the records before it", func(t *testing.T) {
		sink, _ := formatstest.Decode(JSON, "h.json", []byte(`[{"a":1},{"a":2},{"a":]`), nil, nil)
		if n := len(sink.Table(table.PreviewRecords.Name).Rows); n != 2 {
			t.Errorf("records before the error: %d, want 2", n)
		}
	})
	t.Run("10 MB string record", func(t *testing.T) {
		big := `[{"s":"` + strings.Repeat("x", 10<<20) + `"},{"s":"small"}]`
		sink := decodeOK(t, JSON, "big.json", []byte(big), evidence.Object{"max_bytes": 64 << 20})
		rs := sink.Table(table.PreviewRecords.Name).Rows
		if rs[0]["status"] != table.StatusOversized || rs[1]["status"] != table.StatusOK {
			t.Errorf("statuses %v, %v", rs[0]["status"], rs[1]["status"])
		}
	})
	t.Run("unknown option", func(t *testing.T) {
		_, err := formatstest.Decode(JSON, "o.json", []byte(`[]`), evidence.Object{"max_rowz": 1}, nil)
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("unknown option: %v", err)
		}
	})
}

// TestReaders decodes every JSON and JSONL fixture through iotest readers
// and expects the same blocks as a plain read.
func TestReaders(t *testing.T) {
	cases := []struct {
		spec *formats.Spec
		path string
	}{
		{JSON, "preview/json/duckdb-range-array.json"}, {JSON, "preview/json/aiperf-profile_export_aiperf.json"},
		{JSONL, "preview/jsonl/go-test.jsonl"}, {JSONL, "preview/jsonl/duckdb-range.jsonl"},
	}
	wraps := map[string]func(io.Reader) io.Reader{
		"OneByteReader": iotest.OneByteReader, "HalfReader": iotest.HalfReader, "DataErrReader": iotest.DataErrReader,
	}
	for _, c := range cases {
		data := formatstest.Read(t, c.path)
		plain := render(t, decodeOK(t, c.spec, c.path, data, nil))
		for name, wrap := range wraps {
			t.Run(c.path+"/"+name, func(t *testing.T) {
				sink, err := formatstest.Decode(c.spec, c.path, data, nil, wrap)
				formatstest.CheckInvariants(t, sink, err)
				if err != nil {
					t.Fatal(err)
				}
				if got := render(t, sink); got != plain {
					t.Errorf("blocks differ from a plain read")
				}
			})
		}
		t.Run(c.path+"/ErrReader", func(t *testing.T) {
			broken := func(r io.Reader) io.Reader {
				return io.MultiReader(io.LimitReader(r, int64(len(data)/2)), iotest.ErrReader(errors.New("disk gone")))
			}
			sink, err := formatstest.Decode(c.spec, c.path, data, nil, broken)
			formatstest.CheckInvariants(t, sink, err)
			if evidence.CodeOf(err) != evidence.CodeIOFailure {
				t.Errorf("a read error is IO_FAILURE, got %v", err)
			}
		})
	}
}

func render(t *testing.T, s *formatstest.Sink) string {
	var b bytes.Buffer
	for _, tb := range s.Tables {
		b.WriteString(formatstest.Canonical(t, tb.Header))
		for _, r := range tb.Rows {
			b.WriteString(formatstest.Canonical(t, r))
		}
		b.WriteString(formatstest.Canonical(t, tb.Summary))
	}
	return b.String()
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		in   string
		want formats.Verdict
	}{
		{`{"a":1}`, formats.NeedMore}, {"\xEF\xBB\xBF[1]", formats.NeedMore}, {"  \n", formats.NeedMore},
		{"PAR1", formats.No}, {"hello", formats.No}, {"\x00\x01", formats.No},
	} {
		if got := sniffJSON([]byte(c.in)); got != c.want {
			t.Errorf("sniff %q = %v, want %v", c.in, got, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range formatstest.Seeds(f, "preview/json", 0) {
		f.Add(s)
	}
	for _, s := range formatstest.Seeds(f, "preview/jsonl", 4096) {
		f.Add(s)
	}
	f.Add([]byte(`[{"a":[1,{"b":null}]},"x",-0.5e3,true]`))
	f.Add([]byte(`{"k":[[[]]],"t":{"u":[{}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := evidence.Object{"max_rows": 3, "max_bytes": 2048, "max_record_bytes": 64, "max_fields": 4, "max_outline_nodes": 8}
		for _, spec := range []*formats.Spec{JSON, JSONL} {
			sink, err := formatstest.Decode(spec, "f", data, opts, nil)
			formatstest.CheckInvariants(t, sink, err)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	// A JSON array of the Mooncake trace's records (~1.1 MB), and the
	// JSONL trace itself.
	lines := bytes.Split(bytes.TrimSpace(formatstest.Read(b, "preview/jsonl/mooncake-synthetic_trace.jsonl")), []byte("\n"))
	array := append(append([]byte("["), bytes.Join(lines, []byte(","))...), ']')
	for _, c := range []struct {
		name string
		spec *formats.Spec
		data []byte
	}{
		{"json", JSON, array},
		{"jsonl", JSONL, formatstest.Read(b, "preview/jsonl/mooncake-synthetic_trace.jsonl")},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := formatstest.DecodeInto(c.spec, "bench", c.data, nil, nil, formatstest.Discard{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLimitReceipt: a JSON ceiling fails with the one receipt shape,
// located where the scanner stopped.
func TestLimitReceipt(t *testing.T) {
	for _, c := range []struct {
		data, limit string
		value       int64
		unit        string
	}{
		{`[[[[1]]]]`, "max_depth", 3, "levels"},
		{`["` + strings.Repeat("x", 2000) + `"]`, "max_token_bytes", 1000, "bytes"},
	} {
		sink := &formatstest.Sink{}
		in := formatstest.MustInput(t, JSON, &evidence.Artifact{Path: "/virtual/l.json", Size: int64(len(c.data))},
			strings.NewReader(c.data), map[string]int64{c.limit: c.value})
		err := JSON.Decoder.Decode(context.Background(), in, sink)
		var f *evidence.Failure
		if !errors.As(err, &f) || f.Code != evidence.CodeLimitExceeded {
			t.Fatalf("%s: %v", c.limit, err)
		}
		lim, _ := f.Details["limit"].(evidence.Object)
		if lim["name"] != c.limit || lim["value"] != c.value || lim["unit"] != c.unit || f.Location.Offset == 0 || f.Location.Line != 1 {
			t.Errorf("%s: receipt %v at %+v", c.limit, f.Details, f.Location)
		}
	}
}

// TestDeclinedTables: a sink that wants only preview.fields gets the same
// fields, and the decoder builds no outline node and no record for the
// tables it declines.
func TestDeclinedTables(t *testing.T) {
	for _, c := range []struct {
		spec *formats.Spec
		path string
	}{{JSON, "preview/json/duckdb-range-array.json"}, {JSONL, "preview/jsonl/go-test.jsonl"}} {
		data := formatstest.Read(t, c.path)
		all := decodeOK(t, c.spec, c.path, data, nil)
		only := &formatstest.Sink{Only: []string{table.PreviewFields.Name}}
		err := formatstest.DecodeInto(c.spec, c.path, data, nil, nil, only)
		formatstest.CheckInvariants(t, only, err)
		if err != nil || len(only.Tables) != 1 || only.DeclinedRows != 0 {
			t.Fatalf("%s: %v, %d tables, %d declined rows built", c.path, err, len(only.Tables), only.DeclinedRows)
		}
		if got, want := formatstest.Canonical(t, only.Tables[0].Rows), formatstest.Canonical(t, all.Table(table.PreviewFields.Name).Rows); got != want {
			t.Errorf("%s: fields differ when records are declined:\n%s\n%s", c.path, got, want)
		}
		if _, typed := all.Table(table.PreviewRecords.Name).Typed[0].(*table.Record); !typed {
			t.Errorf("%s: records are not typed rows", c.path)
		}
	}
}
