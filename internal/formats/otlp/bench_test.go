package otlp

import (
	"bytes"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// BenchmarkDecode decodes about 32 MB of OTLP built from the real
// exporter bodies (Python SDK protobuf, JS SDK JSON) into a sink that
// keeps nothing: the decoder's own cost.
func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct{ name, seed string }{{"protobuf", "otlp/python-sdk.pb"}, {"json", "otlp/js-sdk.json"}} {
		var buf bytes.Buffer
		if err := Generate(&buf, formatstest.Read(b, c.seed), 32<<20); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var rows int64
			for b.Loop() {
				sink := formatstest.Discard{Rows: &rows}
				if err := formatstest.DecodeInto(Spec, "bench", data, nil, nil, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
