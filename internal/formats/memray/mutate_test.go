package memray

import (
	"bytes"
	"context"
	"math/rand"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

// TestMutatedCaptures: real captures cut and with bytes changed never
// panic, hang or fail untyped, and what decodes keeps the summary
// invariants (a deterministic guard beside FuzzDecode).
func TestMutatedCaptures(t *testing.T) {
	var seeds [][]byte
	for _, name := range captures {
		data := formatstest.Read(t, "memray/"+name)
		seeds = append(seeds, bytes.TrimRight(data, "\x00"))
	}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 200; i++ {
		d := bytes.Clone(seeds[rng.Intn(len(seeds))])
		if rng.Intn(3) == 0 {
			d = d[:rng.Intn(len(d))]
		}
		for k := rng.Intn(4) + 1; k > 0 && len(d) > 0; k-- {
			d[rng.Intn(len(d))] = byte(rng.Intn(256))
		}
		in, _ := formatstest.Input(Spec, &evidence.Artifact{Path: "/v", Size: int64(len(d))}, bytes.NewReader(d),
			map[string]int64{LimitString: 1 << 16, LimitFrames: 1 << 16, LimitLocations: 1 << 16}, evidence.Object{OptionPopulation: []string{"high_watermark", "leaked"}[i%2]})
		s := &formatstest.Sink{}
		err := Spec.Decoder.Decode(context.Background(), in, s)
		formatstest.CheckInvariants(t, s, err)
		if t.Failed() {
			t.Fatalf("input %d", i)
		}
	}
}
