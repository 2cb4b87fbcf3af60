package mooncake

import (
	"bytes"
	"context"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// BenchmarkTrace decodes the real FAST'25 trace (1.1 MB, 3,993 requests).
func BenchmarkTrace(b *testing.B) {
	data := formatstest.Read(b, fixture)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		in := formatstest.MustInput(b, Spec, nil, bytes.NewReader(data), nil)
		var rows int64
		if err := Spec.Decoder.Decode(context.Background(), in, formatstest.Discard{Rows: &rows}); err != nil {
			b.Fatal(err)
		}
	}
}
