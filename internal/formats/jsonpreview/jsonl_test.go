package jsonpreview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// TestJSONLMatchesPythonJSON compares counts and first records with
// Python's json module, line by line (regen.sh), on real producers'
// output: go test -json, DuckDB, AIPerf and the Mooncake trace.
func TestJSONLMatchesPythonJSON(t *testing.T) {
	for _, name := range []string{"go-test.jsonl", "duckdb-range.jsonl", "aiperf-profile_export.jsonl", "mooncake-synthetic_trace.jsonl"} {
		t.Run(name, func(t *testing.T) {
			want := formatstest.ReadJSON(t, "preview/expected/"+name+".json")
			data := formatstest.Read(t, filepath.Join("preview/jsonl", name))
			sink := decodeOK(t, JSONL, name, data, nil)
			recs := sink.Table(table.PreviewRecords.Name)
			n, _ := evidence.AsInt(want["records"])
			if recs.Summary.RowsObserved != n || !(recs.Summary.Coverage["end_reached"] == true) {
				t.Errorf("records observed %d (end reached %v), python json %d", recs.Summary.RowsObserved, recs.Summary.Coverage["end_reached"], n)
			}
			for i, w := range want["first"].([]any) {
				if got := formatstest.Canonical(t, recs.Rows[i]["value"]); got != formatstest.Canonical(t, w) {
					t.Errorf("record %d:\n got %s\nwant %s", i, got, formatstest.Canonical(t, w))
				}
			}
			// Each record's offset and bytes delimit its line exactly.
			for _, r := range recs.Rows {
				off, _ := evidence.AsInt(r["offset"])
				size, _ := evidence.AsInt(r["bytes"])
				v, err := evidence.ParseValue(bytes.TrimRight(data[off:off+size], "\r"), 0)
				if err != nil || formatstest.Canonical(t, v) != formatstest.Canonical(t, r["value"]) {
					t.Fatalf("record %v: its slice does not hold its value (%v)", r["index"], err)
				}
			}
		})
	}
}

// TestJSONLFields checks the derived field statistics against a count made
// with encoding/json.
func TestJSONLFields(t *testing.T) {
	data := formatstest.Read(t, "preview/jsonl/go-test.jsonl")
	want := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		for k := range m {
			want[k]++
		}
	}
	got := map[string]int{}
	for _, f := range decodeOK(t, JSONL, "g.jsonl", data, nil).Table(table.PreviewFields.Name).Rows {
		n, _ := evidence.AsInt(f["observed"])
		got[f["name"].(string)] = int(n)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fields %v, encoding/json %v", got, want)
	}
}

func TestJSONLLines(t *testing.T) {
	data := []byte("{\"a\":1}\r\n\nnot json\n[1,2]\n{\"a\":\n" + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "\n\"last\"")
	sink := decodeOK(t, JSONL, "m.jsonl", data, nil)
	rs := sink.Table(table.PreviewRecords.Name)
	type row struct {
		line   int64
		status string
	}
	var got []row
	for _, r := range rs.Rows {
		l, _ := evidence.AsInt(r["line"])
		got = append(got, row{l, r["status"].(string)})
	}
	want := []row{{1, "ok"}, {3, "invalid"}, {4, "ok"}, {5, "invalid"}, {6, "invalid"}, {7, "ok"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines %v, want %v", got, want)
	}
	if !strings.Contains(rs.Rows[4]["error"].(string), "512") {
		t.Errorf("the nesting error names the ceiling: %v", rs.Rows[4]["error"])
	}
	if m := rs.Summary.Metrics["blank_lines"]; m.Value != int64(1) {
		t.Errorf("blank lines %v", m)
	}
	if !rs.Summary.Complete {
		t.Errorf("invalid lines are reported, not omitted: the table is complete: %+v", rs.Summary)
	}
}

func TestJSONLBounds(t *testing.T) {
	data := formatstest.Read(t, "preview/jsonl/duckdb-range.jsonl") // 50 lines
	t.Run("max_rows counts the rest", func(t *testing.T) {
		s := decodeOK(t, JSONL, "d.jsonl", data, evidence.Object{"max_rows": 5}).Table(table.PreviewRecords.Name).Summary
		if s.RowsObserved != 50 || s.RowsEmitted != 5 || s.Truncation == nil || s.Truncation.Omitted != 45 {
			t.Errorf("%+v %+v", s, s.Truncation)
		}
	})
	t.Run("max_bytes stops at a line boundary", func(t *testing.T) {
		lines := bytes.SplitAfter(data, []byte("\n"))
		bound := len(lines[0]) + len(lines[1]) + 10 // inside line 3
		s := decodeOK(t, JSONL, "d.jsonl", data, evidence.Object{"max_bytes": bound, "max_record_bytes": 16}).Table(table.PreviewRecords.Name).Summary
		read, _ := evidence.AsInt(s.Coverage["bytes_read"])
		if s.Complete || s.Coverage["end_reached"] != false || read >= int64(len(data)) {
			t.Errorf("coverage %v", s.Coverage)
		}
		if s.Truncation == nil || s.Truncation.Reason == "" {
			t.Errorf("an early stop is a truncation: %+v", s)
		}
	})
	t.Run("a line in progress at the bound is finished", func(t *testing.T) {
		lines := bytes.SplitAfter(data, []byte("\n"))
		bound := len(lines[0]) + 5
		s := decodeOK(t, JSONL, "d.jsonl", data, evidence.Object{"max_bytes": bound}).Table(table.PreviewRecords.Name).Summary
		if read, _ := evidence.AsInt(s.Coverage["bytes_read"]); s.RowsObserved != 2 || read != int64(len(lines[0])+len(lines[1])) {
			t.Errorf("observed %d, read %v", s.RowsObserved, s.Coverage["bytes_read"])
		}
	})
}

// TestJSONLHostile covers a 10 MB single line, invalid UTF-8 and a
// reader that stops with an error.
func TestJSONLHostile(t *testing.T) {
	long := append(append([]byte(`{"s":"`), bytes.Repeat([]byte("x"), 10<<20)...), []byte("\"}\n{\"a\":1}\n")...)
	t.Run("10 MB line, read whole", func(t *testing.T) {
		rs := decodeOK(t, JSONL, "l.jsonl", long, evidence.Object{"max_bytes": 64 << 20}).Table(table.PreviewRecords.Name)
		if rs.Rows[0]["status"] != table.StatusOversized || rs.Rows[0]["bytes"] != int64(10<<20+8) || rs.Rows[1]["status"] != table.StatusOK {
			t.Errorf("rows %v / %v", rs.Rows[0], rs.Rows[1])
		}
	})
	t.Run("10 MB line past the read bound", func(t *testing.T) {
		rs := decodeOK(t, JSONL, "l.jsonl", long, nil).Table(table.PreviewRecords.Name)
		if len(rs.Rows) != 1 || rs.Rows[0]["status"] != table.StatusOversized || rs.Rows[0]["bytes"] != nil || rs.Summary.Complete {
			t.Errorf("rows %v, summary %+v", rs.Rows, rs.Summary)
		}
		// The line is read up to max_bytes (8 MiB by default), not to its end.
		if read := rs.Summary.Coverage["bytes_read"]; read != int64(8<<20) {
			t.Errorf("bytes_read %v, want the bound", read)
		}
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		rs := decodeOK(t, JSONL, "u.jsonl", []byte("{\"a\":\"\xff\"}\n{\"a\":\"ok\"}\n"), nil).Table(table.PreviewRecords.Name)
		if rs.Rows[0]["status"] != table.StatusInvalid || rs.Rows[1]["status"] != table.StatusOK {
			t.Errorf("rows %v", rs.Rows)
		}
	})
	t.Run("empty", func(t *testing.T) {
		rs := decodeOK(t, JSONL, "e.jsonl", nil, nil).Table(table.PreviewRecords.Name)
		if rs.Summary.RowsObserved != 0 || !rs.Summary.Complete {
			t.Errorf("an empty stream is a complete empty table: %+v", rs.Summary)
		}
	})
}
