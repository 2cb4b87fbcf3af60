package perfetto

import (
	"bytes"
	"context"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// FuzzDecode: no input panics, hangs or gives an untyped failure; a
// decode that succeeds emits the four trace tables with consistent
// summaries (and the CPU tables when it holds samples), and slices whose times add up. Seeded from the fixtures
// (the builder traces, the negatives, the first packets of Chromium's).
func FuzzDecode(f *testing.F) {
	for _, b := range formatstest.Seeds(f, "perfetto", 4<<10) {
		f.Add(b)
	}
	var chromium bytes.Buffer
	if err := Generate(&chromium, formatstest.Read(f, "perfetto/chromium-startup.pftrace.gz"), 1); err == nil {
		f.Add(chromium.Bytes()[:min(chromium.Len(), 4<<10)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = sniff(b)
		art := &evidence.Artifact{Path: "/virtual/trace", Name: "trace", Size: int64(len(b)), Role: "explicit"}
		in, err := formatstest.Input(Spec, art, bytes.NewReader(b), map[string]int64{LimitDecompressed: 1 << 20, LimitPacket: 1 << 20, LimitOpen: 1 << 16}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sink := &formatstest.Sink{}
		err = Spec.Decoder.Decode(context.Background(), in, sink)
		formatstest.CheckInvariants(t, sink, err)
		if err != nil {
			return
		}
		if len(sink.Tables) != len(table.TraceTables) && len(sink.Tables) != len(traceTablesWithCPU) {
			t.Fatalf("%d tables", len(sink.Tables))
		}
		for _, r := range sink.Table(table.TraceSlices.Name).Typed {
			s := r.(*table.TraceSlice)
			if s.EndNS-s.StartNS != s.DurationNS {
				t.Fatalf("bad row %+v", s)
			}
		}
	})
}
