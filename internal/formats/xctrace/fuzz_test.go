package xctrace

import (
	"bytes"
	"context"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// FuzzDecode: no input panics, hangs or gives an untyped failure; a
// decode that succeeds has self weight within inclusive weight.
func FuzzDecode(f *testing.F) {
	for _, b := range formatstest.Seeds(f, "xctrace", 4<<10) {
		f.Add(b)
	}
	f.Add([]byte(head + `<row><sample-time id="7">2</sample-time><weight ref="2"/><backtrace ref="3"/></row></node></trace-query-result>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = sniff(b)
		art := &evidence.Artifact{Path: "/virtual/f.xml", Name: "f.xml", Size: int64(len(b)), Role: "explicit"}
		in, err := formatstest.Input(Spec, art, bytes.NewReader(b), map[string]int64{LimitIDs: 4096, "max_stack_frames": 64, "max_distinct_frames": 256}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sink := &formatstest.Sink{}
		err = Spec.Decoder.Decode(context.Background(), in, sink)
		formatstest.CheckInvariants(t, sink, err)
		if err != nil {
			return
		}
		for _, ft := range sink.Named(table.CPUFrames.Name) {
			for _, r := range ft.Typed {
				fr := r.(*table.Frame)
				if fr.SelfWeight > fr.InclusiveWeight || fr.SelfWeight < 0 {
					t.Fatalf("frame weights %+v", fr)
				}
			}
		}
	})
}
