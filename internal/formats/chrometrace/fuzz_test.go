package chrometrace

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// fuzzDecode decodes b with a small reorder window and a 64 KiB bound on
// what gzip may expand to, so a mutated stream cannot make one execution
// slow.
func fuzzDecode(spec *formats.Spec, b []byte) (*formatstest.Sink, error) {
	art := &evidence.Artifact{Path: "/virtual/f.json", Name: "f.json", Size: int64(len(b)), Role: "explicit"}
	in, err := formatstest.Input(spec, art, bytes.NewReader(b), map[string]int64{LimitDecompressed: 64 << 10}, evidence.Object{OptionWindow: 4})
	if err != nil {
		return &formatstest.Sink{}, err
	}
	sink := &formatstest.Sink{}
	return sink, spec.Decoder.Decode(context.Background(), in, sink)
}

// FuzzDecode: no input panics, hangs or gives an untyped failure; a
// decode that succeeds emits the four trace tables with consistent
// summaries and slices whose times add up.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"chrome-trace", "kineto"} {
		for _, b := range formatstest.Seeds(f, dir, 2<<10) {
			if bytes.HasPrefix(b, gzipMagic) {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err == nil {
					if plain, err := io.ReadAll(io.LimitReader(zr, 2<<10)); err == nil || len(plain) > 0 {
						f.Add(plain)
					}
				}
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`[{"ph":"B","ts":1,"pid":1,"tid":1},{"ph":"X","ts":0.5,"dur":3,"pid":1,"tid":1},{"ph":"E","ts":2,"pid":1,"tid":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = sniffChrome(b), sniffKineto(b)
		for _, spec := range []*formats.Spec{Spec, KinetoSpec} {
			sink, err := fuzzDecode(spec, b)
			formatstest.CheckInvariants(t, sink, err)
			if err != nil {
				continue
			}
			if len(sink.Tables) != len(table.TraceTables) && len(sink.Tables) != len(traceTablesWithCPU) {
				t.Fatalf("%d tables", len(sink.Tables))
			}
			for _, r := range sink.Table(table.TraceSlices.Name).Typed {
				s := r.(*table.TraceSlice)
				if s.EndNS-s.StartNS != s.DurationNS || s.DurationNS < 0 || (s.SelfNS.Valid && s.SelfNS.V > s.DurationNS) {
					t.Fatalf("slice times do not add up: %+v", s)
				}
			}
		}
	})
}
