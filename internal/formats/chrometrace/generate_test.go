package chrometrace

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/flameox/flameox/internal/formats/formatstest"
)

// TestGenerateRenumbersJoinIDs: each round of a generated Kineto trace
// has its own correlation ids, External ids, Ev Idx and flow ids, and a
// launch still meets its kernel and its ac2g flow by the same id (what
// HTA's loader joins on).
func TestGenerateRenumbersJoinIDs(t *testing.T) {
	seed := formatstest.Read(t, "kineto/hta-simple_add-a100.trace.json.gz")
	var buf bytes.Buffer
	if err := Generate(&buf, seed, 3<<20); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph   string          `json:"ph"`
			Cat  string          `json:"cat"`
			ID   json.RawMessage `json:"id"`
			Args map[string]any  `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	runtime := map[float64]int{} // correlation of cuda_runtime calls
	device := map[float64]int{}  // correlation of kernels, memcpys, memsets
	flows := map[string]int{}    // ac2g flow ids by phase
	ext := map[float64]int{}     // External id of cpu_op
	for _, e := range doc.TraceEvents {
		c, hasC := e.Args["correlation"].(float64)
		switch {
		case e.Cat == "cuda_runtime" && hasC:
			runtime[c]++
		case (e.Cat == "kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset") && hasC:
			device[c]++
		case e.Cat == "ac2g":
			flows[e.Ph+string(e.ID)]++
		case e.Cat == "cpu_op":
			if x, ok := e.Args["External id"].(float64); ok {
				ext[x]++
			}
		}
	}
	if len(device) < 100 {
		t.Fatalf("only %d device events: the seed is not the Kineto trace expected", len(device))
	}
	for name, m := range map[string]map[float64]int{"runtime correlation": runtime, "device correlation": device, "cpu_op External id": ext} {
		for id, n := range m {
			if n > 1 {
				t.Fatalf("%s %v appears %d times", name, id, n)
			}
		}
	}
	for id, n := range flows {
		if n > 1 {
			t.Fatalf("ac2g flow %s appears %d times", id, n)
		}
	}
	for c := range device {
		if runtime[c] != 1 {
			t.Fatalf("device correlation %v has no runtime call", c)
		}
		if flows["f"+jsonInt(c)] != 1 || flows["s"+jsonInt(c)] != 1 {
			t.Fatalf("device correlation %v has no ac2g flow pair", c)
		}
	}
}

func jsonInt(f float64) string { b, _ := json.Marshal(int64(f)); return string(b) }
