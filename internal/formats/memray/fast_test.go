package memray

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// TestFastEqualsGeneral: the fast path (fastRecords), which applies the
// common records by hand, leaves what the general reader (record) alone
// leaves: the same tables, rows and summaries, or the same failure, on
// every fixture, with and without native rows, and on cut and mutated
// copies of them.
func TestFastEqualsGeneral(t *testing.T) {
	var inputs [][]byte
	for _, name := range captures {
		inputs = append(inputs, formatstest.Read(t, "memray/"+name))
	}
	rng := rand.New(rand.NewSource(3))
	for i, n := 0, len(inputs); i < 300; i++ {
		d := bytes.Clone(bytes.TrimRight(inputs[rng.Intn(n)], "\x00"))
		if rng.Intn(3) == 0 {
			d = d[:rng.Intn(len(d))]
		}
		for k := rng.Intn(4) + 1; k > 0 && len(d) > 0; k-- {
			d[rng.Intn(len(d))] = byte(rng.Intn(256))
		}
		inputs = append(inputs, d)
	}
	decode := func(data []byte, opts evidence.Object, general bool) string {
		generalOnly = general
		defer func() { generalOnly = false }()
		in, err := formatstest.Input(Spec, &evidence.Artifact{Path: "/v", Size: int64(len(data))}, bytes.NewReader(data),
			map[string]int64{LimitString: 1 << 16, LimitFrames: 1 << 16, LimitLocations: 1 << 16}, opts)
		if err != nil {
			t.Fatal(err)
		}
		s := &formatstest.Sink{}
		err = Spec.Decoder.Decode(context.Background(), in, s)
		out := fmt.Sprintf("error: %v\n", err)
		for _, tb := range s.Tables {
			out += fmt.Sprintf("%#v\n%#v\n%#v\n", *tb.Header, tb.Rows, tb.Summary)
		}
		return out
	}
	var tables int
	for i, data := range inputs {
		for _, opts := range []evidence.Object{nil, {OptionNative: true}} {
			fast, general := decode(data, opts, false), decode(data, opts, true)
			if fast != general {
				t.Fatalf("input %d, options %v: the fast path and the general reader differ:\nfast:    %.2000s\ngeneral: %.2000s", i, opts, fast, general)
			}
			tables += bytes.Count([]byte(fast), []byte("evidence.Table{"))
		}
	}
	if tables == 0 {
		t.Fatal("no input decoded to a table")
	}
}
