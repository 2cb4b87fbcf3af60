package aiperf

import (
	"bytes"
	"context"
	"testing"

	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// benchInput repeats a fixture's real records to at least size bytes.
func benchInput(b *testing.B, rel string, size int) []byte {
	src := formatstest.Read(b, rel)
	return bytes.Repeat(src, size/len(src)+1)
}

func benchDecode(b *testing.B, spec *formats.Spec, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, spec, nil, bytes.NewReader(data), nil)
		var rows int64
		if err := spec.Decoder.Decode(context.Background(), in, formatstest.Discard{Rows: &rows}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecords decodes AIPerf 0.13's per-request records (real
// records from the fixture, repeated to 32 MiB).
func BenchmarkRecords(b *testing.B) {
	benchDecode(b, RecordsSpec, benchInput(b, "aiperf/mock-0.13/profile_export.jsonl", 32<<20))
}

// BenchmarkRecords2025 is the same for the 2025 layout.
func BenchmarkRecords2025(b *testing.B) {
	benchDecode(b, RecordsSpec, benchInput(b, "aiperf/run1-2025/profile_export.jsonl", 32<<20))
}

func BenchmarkAggregate(b *testing.B) {
	benchDecode(b, AggregateSpec, formatstest.Read(b, "aiperf/mock-0.13/profile_export_aiperf.json"))
}

func BenchmarkCSV(b *testing.B) {
	benchDecode(b, CSVSpec, formatstest.Read(b, "aiperf/mock-0.13/profile_export_aiperf.csv"))
}
