package xctrace

import (
	"bytes"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// BenchmarkDecode decodes a time-profile export built from the fixture
// (its rows repeated as refs, a fresh sample time each) of about 32 MB,
// into a sink that keeps nothing: the decoder's own cost.
func BenchmarkDecode(b *testing.B) {
	seed := formatstest.Read(b, "xctrace/time-profile.xml")
	var buf bytes.Buffer
	if err := Generate(&buf, seed, 32<<20); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rows int64
	for b.Loop() {
		if err := formatstest.DecodeInto(Spec, "bench.xml", data, nil, nil, formatstest.Discard{Rows: &rows}); err != nil {
			b.Fatal(err)
		}
	}
}
