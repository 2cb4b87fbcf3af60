package perfetto

import (
	"bytes"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// BenchmarkDecode decodes about 32 MB of Perfetto trace built from
// Chromium's startup trace into a sink that keeps nothing: the decoder's
// own cost.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	if err := Generate(&buf, formatstest.Read(b, "perfetto/chromium-startup.pftrace.gz"), benchSize); err != nil {
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
				if err := formatstest.DecodeInto(Spec, "bench", data, map[string]any{OptionArgs: c.args}, nil, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// benchSize is the generated input of BenchmarkDecode.
var benchSize int64 = 32 << 20
