package speedscope

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/table"
)

// cpu.stacks holds every framed sample once: per thread, the stacks'
// weights sum to the thread's self weights, every frame id is a frame
// row's, and a stack's leaf has the self weight (sampled and evented).
func TestStacks(t *testing.T) {
	for _, name := range validFixtures(t) {
		t.Run(name, func(t *testing.T) {
			b := readFile(t, name)
			c := &capture{}
			ra := bytes.NewReader(b)
			open := func(off int64) io.Reader { return io.NewSectionReader(ra, off, int64(len(b))-off) }
			if err := decodeFrom(context.Background(), input(t, len(b), nil), open, verified, c); err != nil {
				t.Skipf("not decodable whole: %v", err)
			}
			for i := 0; i+2 < len(c.Tables); i += 3 {
				frames, stacks := c.Tables[i], c.Tables[i+2]
				if frames.Header.Name != table.CPUFrames.Name || stacks.Header.Name != table.CPUStacks.Name {
					t.Fatalf("tables %s, %s", frames.Header.Name, stacks.Header.Name)
				}
				self := map[string]float64{}    // thread|frame → self weight
				threads := map[string]float64{} // thread → self weight
				for _, r := range frames.Rows {
					w, _ := evidence.AsFloat(r["self_weight"])
					self[fmt.Sprint(r["thread"], "|", r["frame_id"])] += w
					threads[fmt.Sprint(r["thread"])] += w
				}
				leaf := map[string]float64{}
				stacked := map[string]float64{}
				for _, r := range stacks.Rows {
					fs := r["frames"].([]string)
					w, _ := evidence.AsFloat(r["weight"])
					for _, f := range fs {
						if _, ok := self[fmt.Sprint(r["thread"], "|", f)]; !ok {
							t.Fatalf("stack frame %s is no frame row", f)
						}
					}
					leaf[fmt.Sprint(r["thread"], "|", fs[len(fs)-1])] += w
					stacked[fmt.Sprint(r["thread"])] += w
				}
				for k, w := range self {
					if math.Abs(leaf[k]-w) > 1e-9*math.Max(1, w) {
						t.Fatalf("%s: stacks put %v on it as leaf, its self weight is %v", k, leaf[k], w)
					}
				}
				for th, w := range threads {
					if math.Abs(stacked[th]-w) > 1e-9*math.Max(1, w) {
						t.Fatalf("thread %s: stacks hold %v, frames %v", th, stacked[th], w)
					}
				}
			}
		})
	}
}
