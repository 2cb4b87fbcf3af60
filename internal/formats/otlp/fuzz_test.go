package otlp

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
// summaries and span rows whose times add up and whose ids are hex of
// the OTLP lengths.
func FuzzDecode(f *testing.F) {
	for _, b := range formatstest.Seeds(f, "otlp", 2<<10) {
		f.Add(b)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","startTimeUnixNano":"1","endTimeUnixNano":2,"attributes":[{"key":"a","value":{"kvlistValue":{"values":[{"key":"b","value":{"doubleValue":"NaN"}}]}}}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = sniff(b)
		art := &evidence.Artifact{Path: "/virtual/body", Name: "body", Size: int64(len(b)), Role: "explicit"}
		in, err := formatstest.Input(Spec, art, bytes.NewReader(b), map[string]int64{LimitDecompressed: 64 << 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sink := &formatstest.Sink{}
		err = Spec.Decoder.Decode(context.Background(), in, sink)
		formatstest.CheckInvariants(t, sink, err)
		if err != nil {
			return
		}
		if len(sink.Tables) != len(table.TraceTables) {
			t.Fatalf("%d tables", len(sink.Tables))
		}
		for _, r := range sink.Table(table.TraceSlices.Name).Typed {
			s := r.(*table.TraceSlice)
			if s.EndNS-s.StartNS != s.DurationNS || len(s.SliceID) != 16 || len(s.TraceID.V) != 32 {
				t.Fatalf("bad row %+v", s)
			}
		}
	})
}
