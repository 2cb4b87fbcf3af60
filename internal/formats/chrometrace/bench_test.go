package chrometrace

import (
	"bytes"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// BenchmarkDecode decodes a Kineto trace built from a real one (its
// events repeated, shifted in time) of about 32 MB, into a sink that
// keeps nothing: the decoder's own cost.
func BenchmarkDecode(b *testing.B) {
	seed := formatstest.Read(b, "kineto/hta-simple_add-a100.trace.json.gz")
	var buf bytes.Buffer
	if err := Generate(&buf, seed, 32<<20); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, c := range []struct {
		name string
		args bool
	}{{"args", true}, {"no-args", false}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var rows int64
			for b.Loop() {
				sink := formatstest.Discard{Rows: &rows}
				if err := formatstest.DecodeInto(KinetoSpec, "bench.json", data, map[string]any{OptionArgs: c.args}, nil, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
