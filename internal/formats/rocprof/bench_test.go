package rocprof

import (
	"bytes"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// BenchmarkDecode decodes a 32 MB kernel_trace built from the real one
// (its records repeated, shifted in time) into a sink that keeps
// nothing: the decoder's own cost.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	if err := Generate(&buf, formatstest.Read(b, "rocprofv3/kernel_trace.csv"), 32<<20); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, args := range []bool{true, false} {
		b.Run(map[bool]string{true: "args", false: "no-args"}[args], func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var rows int64
			for b.Loop() {
				sink := formatstest.Discard{Rows: &rows}
				if err := formatstest.DecodeInto(Spec, "kernel_trace.csv", data, map[string]any{OptionArgs: args}, nil, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
