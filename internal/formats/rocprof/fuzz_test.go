package rocprof

import (
	"bytes"
	"context"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// FuzzDecode: no input panics, hangs or gives an untyped failure; a
// decode that succeeds has consistent summaries and slices whose times
// add up.
func FuzzDecode(f *testing.F) {
	for _, b := range formatstest.Seeds(f, "rocprofv3", 4<<10) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = sniff(b)
		art := &evidence.Artifact{Path: "/virtual/f.csv", Name: "f.csv", Size: int64(len(b)), Role: "explicit"}
		in, err := formatstest.Input(Spec, art, bytes.NewReader(b), map[string]int64{"max_parse_record_bytes": 4 << 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sink := &formatstest.Sink{}
		err = Spec.Decoder.Decode(context.Background(), in, sink)
		formatstest.CheckInvariants(t, sink, err)
		if err != nil {
			return
		}
		for _, r := range sink.Table(table.TraceSlices.Name).Typed {
			s := r.(*table.TraceSlice)
			if s.EndNS-s.StartNS != s.DurationNS || s.DurationNS < 0 {
				t.Fatalf("slice times do not add up: %+v", s)
			}
		}
	})
}
