package bundle

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// fuzzRows turns bytes into rows of allTypes: each column is null or a
// value drawn from the input, strings possibly not UTF-8, doubles any bit
// pattern (NaN payloads, -0, infinities), integers the full int64 range.
func fuzzRows(data []byte) []evidence.Object {
	take := func(n int) []byte {
		if len(data) < n {
			b := make([]byte, n)
			copy(b, data)
			data = nil
			return b
		}
		b := data[:n]
		data = data[n:]
		return b
	}
	text := func() string { return string(take(int(take(1)[0] % 12))) }
	var rows []evidence.Object
	for len(data) > 0 && len(rows) < 300 {
		sel := take(1)[0]
		row := evidence.Object{"function": nil, "self_weight": nil, "calls": nil, "attrs": nil, "inlined": nil}
		if sel&1 != 0 {
			row["function"] = text()
		}
		if sel&2 != 0 {
			row["self_weight"] = math.Float64frombits(binary.LittleEndian.Uint64(take(8)))
		}
		if sel&4 != 0 {
			row["calls"] = int64(binary.LittleEndian.Uint64(take(8)))
		}
		if sel&8 != 0 {
			row["inlined"] = sel&16 != 0
		}
		switch sel >> 5 {
		case 1:
			row["attrs"] = text()
		case 2:
			row["attrs"] = evidence.Object{text(): []any{int64(binary.LittleEndian.Uint64(take(8))), text(), nil, true}}
		case 3:
			row["attrs"] = math.Float64frombits(binary.LittleEndian.Uint64(take(8)))
		}
		rows = append(rows, row)
	}
	return rows
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\xff\x05hello\x00\x00\x00\x00\x00\x00\xf8\x7f\x01\x02\x03\x04\x05\x06\x07\x08\x04abcd"))
	f.Add([]byte("\x5f\x03\xff\xfe\xfd\x00\x00\x00\x00\x00\x00\x00\x80\xff\xff\xff\xff\xff\xff\xff\x7f\x02ok"))
	f.Add([]byte("\x7f\x04\xe2\x82\xac!\x00\x00\x00\x00\x00\x00\xf0\x7f\x00\x00\x00\x00\x00\x00\x20\x00\x01k\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := fuzzRows(data)
		b, err := NewBuilder(t.TempDir())
		must(t, err)
		defer b.Abort()
		w, err := b.BeginTable(allTypes("sha256:" + fmt.Sprintf("%064x", 1)))
		must(t, err)
		var kept []evidence.Object
		for _, r := range rows {
			err := w.Row(r)
			if err == nil {
				kept = append(kept, r)
				continue
			}
			var fail *evidence.Failure
			if !errors.As(err, &fail) || fail.Code != evidence.CodeInvalidArgument {
				t.Fatalf("row refused with %v, want a typed INVALID_ARGUMENT", err)
			}
			if valid(r) {
				t.Fatalf("valid row %v refused: %v", r, err)
			}
		}
		must(t, w.End(&evidence.Summary{Complete: true}))
		bl, err := b.Publish(context.Background())
		must(t, err)
		rd, err := Open(bl.Path)
		must(t, err)
		i := 0
		for got, err := range rd.Rows(0) {
			must(t, err)
			if canon(t, got) != canon(t, kept[i]) {
				t.Fatalf("row %d: got %s, want %s", i, canon(t, got), canon(t, kept[i]))
			}
			i++
		}
		if i != len(kept) {
			t.Fatalf("%d rows read back, want %d", i, len(kept))
		}
	})
}

// valid reports whether every text of a fuzz row is UTF-8, the only way
// fuzzRows makes a row that must be refused.
func valid(r evidence.Object) bool {
	if s, ok := r["function"].(string); ok && !utf8.ValidString(s) {
		return false
	}
	_, err := evidence.Canonical(r["attrs"])
	return err == nil
}

// benchRows returns n distinct cpu.frames rows to cycle through.
func benchRows(n int) []evidence.Object {
	rows := make([]evidence.Object, n)
	for i := range rows {
		rows[i] = evidence.Object{
			"artifact_id":      "sha256:09ab53117ffcbaaa412b88827c670f8bb2ffd3e8a486484936cbc0905f046cc4",
			"frame_id":         fmt.Sprintf("%d", i),
			"function":         fmt.Sprintf("pkg/module.(*Type).method%d", i%977),
			"file":             fmt.Sprintf("/src/pkg/module/file%d.go", i%131),
			"line":             int64(i % 5000),
			"column":           int64(-1),
			"module":           nil,
			"symbolization":    table.Symbolized,
			"thread":           "main",
			"process":          nil,
			"self_weight":      float64(i%97) * 0.001,
			"inclusive_weight": float64(i%1009) * 0.001,
			"calls":            int64(i % 13),
			"primitive_calls":  nil,
		}
	}
	return rows
}

const benchTableRows = 1 << 20 // a multiple of the 4096 distinct rows

// jsonlSize is the size of the benchmark table as canonical JSONL values.
func jsonlSize(rows []evidence.Object) int64 {
	var n int64
	for _, r := range rows {
		d, _ := evidence.Canonical(r)
		n += int64(len(d)) + 1
	}
	return n * benchTableRows / int64(len(rows))
}

// BenchmarkTableWrite streams a ~1M-row cpu.frames table to Parquet. MB/s
// is measured against the rows' canonical JSON, the bytes a pipeline
// carries; rows/s is reported beside it.
func BenchmarkTableWrite(b *testing.B) {
	rows := benchRows(4096)
	jsonBytes := jsonlSize(rows)
	header := &evidence.Table{ID: "bench", Name: table.CPUFrames.Name, Columns: table.CPUFrames.EvidenceColumns("samples")}
	b.SetBytes(jsonBytes)
	b.ReportAllocs()
	var parquetBytes int64
	for b.Loop() {
		bd, err := NewBuilder(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		w, err := bd.BeginTable(header)
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchTableRows {
			if err := w.Row(rows[i%len(rows)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.End(&evidence.Summary{Complete: true}); err != nil {
			b.Fatal(err)
		}
		parquetBytes = w.member.Size
		bd.Abort()
	}
	b.ReportMetric(float64(benchTableRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(parquetBytes)/float64(jsonBytes), "parquet/json")
}

// BenchmarkTableRead reads the same table back through Reader.Rows; MB/s
// is against the same canonical JSON size as BenchmarkTableWrite.
func BenchmarkTableRead(b *testing.B) {
	rows := benchRows(4096)
	bd, err := NewBuilder(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	w, err := bd.BeginTable(&evidence.Table{ID: "bench", Name: table.CPUFrames.Name, Columns: table.CPUFrames.EvidenceColumns("samples")})
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchTableRows {
		if err := w.Row(rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
	}
	bl, err := bd.Publish(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	r, err := Open(bl.Path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(jsonlSize(rows))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range r.Rows(0) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != benchTableRows {
			b.Fatalf("%d rows", n)
		}
	}
	b.ReportMetric(float64(benchTableRows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
