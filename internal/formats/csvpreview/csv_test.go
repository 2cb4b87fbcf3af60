package csvpreview

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/table"
)

func decodeOK(t testing.TB, name string, data []byte, opts evidence.Object) *formatstest.Sink {
	t.Helper()
	sink, err := formatstest.Decode(Spec, name, data, opts, nil)
	formatstest.CheckInvariants(t, sink, err)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return sink
}

var fixtures = []string{"aiperf-profile_export_aiperf.csv", "duckdb-range.csv", "pyarrow-flat.csv", "python-quoted.csv", "rocprofv3-kernel_trace.csv"}

// TestMatchesPythonCSV compares the header, row count and first rows with
// what CPython's csv module read (regen.sh), and checks that every row's
// offset and bytes delimit exactly its native text.
func TestMatchesPythonCSV(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			want := formatstest.ReadJSON(t, "preview/expected/"+name+".json")
			data := formatstest.Read(t, filepath.Join("preview/csv", name))
			sink := decodeOK(t, name, data, evidence.Object{"max_rows": 1000})
			var header []any
			for _, f := range sink.Table(table.PreviewFields.Name).Rows {
				header = append(header, f["name"])
			}
			if formatstest.Canonical(t, header) != formatstest.Canonical(t, want["header"]) {
				t.Errorf("header %v, python %v", header, want["header"])
			}
			recs := sink.Table(table.PreviewRecords.Name)
			if n, _ := evidence.AsInt(want["records"]); recs.Summary.RowsObserved != n {
				t.Errorf("rows %d, python csv %d", recs.Summary.RowsObserved, n)
			}
			for i, w := range want["first"].([]any) {
				if got := formatstest.Canonical(t, recs.Rows[i]["value"]); got != formatstest.Canonical(t, w) {
					t.Errorf("row %d: %s, python %s", i, got, formatstest.Canonical(t, w))
				}
			}
			for _, r := range recs.Rows {
				off, _ := evidence.AsInt(r["offset"])
				size, _ := evidence.AsInt(r["bytes"])
				got, err := csv.NewReader(bytes.NewReader(data[off : off+size])).Read()
				if err != nil || formatstest.Canonical(t, toAny(got)) != formatstest.Canonical(t, r["value"]) {
					t.Fatalf("row %v at %d+%d: slice %q does not hold the row (%v)", r["index"], off, size, data[off:off+size], err)
				}
				if size > 0 && (data[off+size-1] == '\n' || data[off+size-1] == '\r') {
					t.Fatalf("row %v: bytes include the line terminator", r["index"])
				}
			}
		})
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestRagged: AIPerf's aggregate CSV holds a second section with two
// columns after a blank line; those rows are ragged, not dropped.
func TestRagged(t *testing.T) {
	sink := decodeOK(t, "a.csv", formatstest.Read(t, "preview/csv/aiperf-profile_export_aiperf.csv"), nil)
	rs := sink.Table(table.PreviewRecords.Name)
	if m := rs.Summary.Metrics; m["records_ok"].Value != int64(10) || m["records_ragged"].Value != int64(12) {
		t.Errorf("metrics %v", m)
	}
	r := rs.Rows[10]
	if r["status"] != table.StatusRagged || r["line"] != int64(13) || !strings.Contains(r["error"].(string), "2 fields") {
		t.Errorf("first ragged row %v", r)
	}
	if f := sink.Table(table.PreviewFields.Name).Rows; f[0]["observed"] != int64(22) || f[2]["observed"] != int64(10) {
		t.Errorf("observed counts %v %v", f[0]["observed"], f[2]["observed"])
	}
}

func TestOptions(t *testing.T) {
	t.Run("tsv by suffix", func(t *testing.T) {
		rs := decodeOK(t, "x.tsv", []byte("a\tb\n1\t2\n"), nil).Table(table.PreviewRecords.Name)
		if formatstest.Canonical(t, rs.Rows[0]["value"]) != `["1","2"]` {
			t.Errorf("%v", rs.Rows[0]["value"])
		}
	})
	t.Run("no header", func(t *testing.T) {
		sink := decodeOK(t, "x.csv", []byte("1,2\n3,4,5\n"), evidence.Object{"header": param.FlagText("false")})
		if n := len(sink.Table(table.PreviewFields.Name).Rows); n != 3 {
			t.Errorf("fields %d", n)
		}
		if rs := sink.Table(table.PreviewRecords.Name); rs.Summary.RowsObserved != 2 || rs.Rows[1]["status"] != table.StatusOK {
			t.Errorf("records %+v", rs.Rows)
		}
	})
	t.Run("delimiter", func(t *testing.T) {
		rs := decodeOK(t, "x.csv", []byte("a;b\n1;2\n"), evidence.Object{"delimiter": ";"}).Table(table.PreviewRecords.Name)
		if formatstest.Canonical(t, rs.Rows[0]["value"]) != `["1","2"]` {
			t.Errorf("%v", rs.Rows[0]["value"])
		}
	})
	t.Run("bad delimiter", func(t *testing.T) {
		_, err := formatstest.Decode(Spec, "x.csv", []byte("a\n"), evidence.Object{"delimiter": `"`}, nil)
		if evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%v", err)
		}
	})
	t.Run("bom", func(t *testing.T) {
		sink := decodeOK(t, "x.csv", []byte("\xEF\xBB\xBFa,b\n1,2\n"), nil)
		if sink.Table(table.PreviewFields.Name).Rows[0]["name"] != "a" || sink.Table(table.PreviewRecords.Name).Rows[0]["offset"] != int64(7) {
			t.Errorf("bom: %v %v", sink.Table(table.PreviewFields.Name).Rows[0], sink.Table(table.PreviewRecords.Name).Rows[0])
		}
	})
}

func TestBounds(t *testing.T) {
	data := formatstest.Read(t, "preview/csv/duckdb-range.csv") // 1000 rows
	t.Run("max_rows", func(t *testing.T) {
		s := decodeOK(t, "d.csv", data, evidence.Object{"max_rows": 7}).Table(table.PreviewRecords.Name).Summary
		if s.RowsObserved != 1000 || s.RowsEmitted != 7 || s.Truncation.Omitted != 993 || s.Complete {
			t.Errorf("%+v", s)
		}
	})
	t.Run("max_bytes", func(t *testing.T) {
		s := decodeOK(t, "d.csv", data, evidence.Object{"max_bytes": 1000}).Table(table.PreviewRecords.Name).Summary
		read, _ := evidence.AsInt(s.Coverage["bytes_read"])
		if s.Complete || read < 1000 || read > 1100 || s.RowsObserved >= 1000 {
			t.Errorf("%+v", s)
		}
	})
	t.Run("max_record_bytes", func(t *testing.T) {
		rs := decodeOK(t, "q.csv", formatstest.Read(t, "preview/csv/python-quoted.csv"), evidence.Object{"max_record_bytes": 20}).Table(table.PreviewRecords.Name)
		if rs.Rows[1]["status"] != table.StatusOversized || rs.Rows[1]["value"] != nil || rs.Rows[0]["status"] != table.StatusOK {
			t.Errorf("%v / %v", rs.Rows[0], rs.Rows[1])
		}
	})
}

func TestHostile(t *testing.T) {
	for _, c := range []struct {
		name   string
		data   string
		limits map[string]int64
		code   evidence.Code
	}{
		{"bare quote", "a,b\n1,2\n3,x\"y\n5,6\n", nil, evidence.CodeDecodeFailure},
		{"unterminated quote", "a,b\n1,\"open\n", nil, evidence.CodeDecodeFailure},
		{"record over the parser ceiling", "a\n\"" + strings.Repeat("x\n", 200<<10) + "\"\n", map[string]int64{"max_parse_record_bytes": 64 << 10}, evidence.CodeLimitExceeded},
		{"10 MB single line over the ceiling", "a\n" + strings.Repeat("y", 10<<20) + "\n", map[string]int64{"max_parse_record_bytes": 1 << 20}, evidence.CodeLimitExceeded},
		{"record just over the ceiling", "a\n" + strings.Repeat("y", 1000) + "\n", map[string]int64{"max_parse_record_bytes": 900}, evidence.CodeLimitExceeded},
		{"invalid UTF-8 header", "a\xff,b\n1,2\n", nil, evidence.CodeDecodeFailure},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink, err := formatstest.Run(t, Spec, "h.csv", []byte(c.data), c.limits, nil)
			formatstest.CheckInvariants(t, sink, err)
			if got := evidence.CodeOf(err); got != c.code {
				t.Fatalf("code %q, want %q (%v)", got, c.code, err)
			}
			if c.code == evidence.CodeLimitExceeded {
				lim, _ := err.(*evidence.Failure).Details["limit"].(evidence.Object)
				if lim["name"] != limitRecord.Name || lim["value"] != c.limits[limitRecord.Name] || lim["unit"] != "bytes" {
					t.Errorf("receipt %v", lim)
				}
			}
		})
	}
	t.Run("bare quote keeps the rows before it", func(t *testing.T) {
		sink, err := formatstest.Decode(Spec, "h.csv", []byte("a,b\n1,2\n3,x\"y\n5,6\n"), nil, nil)
		rs := sink.Table(table.PreviewRecords.Name)
		if err == nil || len(rs.Rows) != 2 || rs.Rows[1]["status"] != table.StatusInvalid || rs.Rows[1]["line"] != int64(3) || rs.Summary.Complete {
			t.Errorf("rows %v, summary %+v", rs.Rows, rs.Summary)
		}
		f := err.(*evidence.Failure)
		if f.Location.Line != 3 || f.Location.Column == 0 {
			t.Errorf("location %+v", f.Location)
		}
	})
	t.Run("10 MB single line under the ceiling is oversized", func(t *testing.T) {
		data := "a\n" + strings.Repeat("y", 10<<20) + "\nshort\n"
		rs := decodeOK(t, "l.csv", []byte(data), evidence.Object{"max_bytes": 64 << 20}).Table(table.PreviewRecords.Name)
		if rs.Rows[0]["status"] != table.StatusOversized || rs.Rows[0]["bytes"] != int64(10<<20) || rs.Rows[1]["status"] != table.StatusOK {
			t.Errorf("%v / %v", rs.Rows[0]["status"], rs.Rows[1])
		}
	})
	t.Run("invalid UTF-8 field", func(t *testing.T) {
		rs := decodeOK(t, "u.csv", []byte("a,b\n1,\xff\n2,ok\n"), nil).Table(table.PreviewRecords.Name)
		if rs.Rows[0]["status"] != table.StatusInvalid || !strings.Contains(rs.Rows[0]["error"].(string), "field 2") || rs.Rows[1]["status"] != table.StatusOK {
			t.Errorf("%v", rs.Rows)
		}
	})
}

func TestReaders(t *testing.T) {
	for _, name := range fixtures {
		data := formatstest.Read(t, filepath.Join("preview/csv", name))
		plain := render(t, decodeOK(t, name, data, nil))
		for wname, wrap := range map[string]func(io.Reader) io.Reader{
			"OneByteReader": iotest.OneByteReader, "HalfReader": iotest.HalfReader, "DataErrReader": iotest.DataErrReader,
		} {
			t.Run(name+"/"+wname, func(t *testing.T) {
				sink, err := formatstest.Decode(Spec, name, data, nil, wrap)
				formatstest.CheckInvariants(t, sink, err)
				if err != nil || render(t, sink) != plain {
					t.Errorf("differs from a plain read (%v)", err)
				}
			})
		}
		t.Run(name+"/ErrReader", func(t *testing.T) {
			broken := func(r io.Reader) io.Reader {
				return io.MultiReader(io.LimitReader(r, int64(len(data)/2)), iotest.ErrReader(errors.New("disk gone")))
			}
			sink, err := formatstest.Decode(Spec, name, data, nil, broken)
			formatstest.CheckInvariants(t, sink, err)
			if evidence.CodeOf(err) != evidence.CodeIOFailure {
				t.Errorf("a read error is IO_FAILURE, got %v", err)
			}
		})
	}
}

func render(t *testing.T, s *formatstest.Sink) string {
	var b strings.Builder
	for _, tb := range s.Tables {
		fmt.Fprint(&b, formatstest.Canonical(t, tb.Header))
		for _, r := range tb.Rows {
			fmt.Fprint(&b, formatstest.Canonical(t, r))
		}
		fmt.Fprint(&b, formatstest.Canonical(t, tb.Summary))
	}
	return b.String()
}

func FuzzDecode(f *testing.F) {
	for _, s := range formatstest.Seeds(f, "preview/csv", 4096) {
		f.Add(s)
	}
	f.Add([]byte("a,b\n\"x\"\"y\",\"multi\nline\"\n,,,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []evidence.Object{
			{"max_rows": 3, "max_bytes": 512, "max_record_bytes": 32},
			{"header": false, "lazy_quotes": true, "delimiter": "tab"},
		} {
			sink, err := formatstest.Decode(Spec, "f.csv", data, opts, nil)
			formatstest.CheckInvariants(t, sink, err)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data := formatstest.Read(b, "preview/csv/duckdb-range.csv")
	data = bytes.Repeat(data, 40) // ~1.1 MB; repeated headers are ordinary rows
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := formatstest.DecodeInto(Spec, "bench.csv", data, nil, nil, formatstest.Discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
