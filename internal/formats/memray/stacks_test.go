package memray

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// TestStacksEqualMemray: per thread and Python stack (function, file,
// line of every frame), the memory.stacks bytes and allocations of both
// populations equal memray's own reader's records summed per stack.
func TestStacksEqualMemray(t *testing.T) {
	for _, name := range captures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ref := loadReference(t, name)
			for _, pop := range []string{table.PopulationHighWatermark, table.PopulationLeaked} {
				s, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, name), nil, evidence.Object{OptionPopulation: pop})
				if err != nil {
					t.Fatal(err)
				}
				frames := map[string]string{} // frame id → function|file|line
				for _, r := range s.Table(table.MemoryFrames.Name).Rows {
					o := r
					file, _ := o["file"].(string)
					line, _ := evidence.AsInt(o["line"])
					frames[o["frame_id"].(string)] = fmt.Sprintf("%s|%s|%d", o["function"], file, max(line, 0))
				}
				got := map[string][2]int64{}
				for _, r := range s.Table(table.MemoryStacks.Name).Rows {
					o := r
					var tid uint64
					if _, err := fmt.Sscanf(o["thread"].(string), "thread %d", &tid); err != nil {
						t.Fatalf("thread %v", o["thread"])
					}
					ids, _ := o["frames"].([]string)
					key := []string{fmt.Sprint(tid)}
					for i := len(ids) - 1; i >= 0; i-- { // leaf first, as memray lists them
						key = append(key, frames[ids[i]])
					}
					b, _ := evidence.AsInt(o["bytes"])
					n, _ := evidence.AsInt(o["count"])
					k := strings.Join(key, ";")
					got[k] = [2]int64{got[k][0] + b, got[k][1] + n}
				}
				recs := ref.HighWatermark
				if pop == table.PopulationLeaked {
					recs = ref.Leaked
				}
				want := map[string][2]int64{}
				for _, r := range recs {
					if r.Bytes == 0 && r.Count == 0 {
						continue
					}
					key := []string{fmt.Sprint(r.TID)}
					for _, f := range r.Stack {
						key = append(key, fmt.Sprintf("%s|%s|%d", f[0], f[1], int64(f[2].(float64))))
					}
					if len(r.Stack) == 0 {
						key = append(key, "<unknown>||0")
					}
					k := strings.Join(key, ";")
					want[k] = [2]int64{want[k][0] + r.Bytes, want[k][1] + r.Count}
				}
				if len(want) < 10 {
					t.Fatalf("%s: memray's reading holds %d stacks: not a real comparison", pop, len(want))
				}
				var bad []string
				for k, w := range want {
					if got[k] != w {
						bad = append(bad, fmt.Sprintf("%s: got %v, memray %v", k, got[k], w))
					}
				}
				for k, g := range got {
					if _, ok := want[k]; !ok {
						bad = append(bad, fmt.Sprintf("%s: got %v, memray has no such stack", k, g))
					}
				}
				sort.Strings(bad)
				if len(bad) > 0 {
					t.Errorf("%s: %d stacks differ from memray's FileReader:\n%s", pop, len(bad), strings.Join(bad[:min(len(bad), 5)], "\n"))
				}
			}
		})
	}
}
