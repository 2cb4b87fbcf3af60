package otlp

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/projection/trace"
	"github.com/flameox/flameox/internal/table"
)

// TestSummarizeOperations: summarize_trace_operations over the decoded
// protobuf fixture gives, per span name, the counts and totals the
// opentelemetry-proto classes read.
func TestSummarizeOperations(t *testing.T) {
	var inputs []*projectiontest.Input
	for _, in := range projectiontest.Decode(t, Spec, filepath.Join(formatstest.Testdata(), "otlp", "python-sdk.pb"), nil) {
		if in.Header.Name == table.TraceSlices.Name || in.Header.Name == table.TraceTracks.Name {
			inputs = append(inputs, in)
		}
	}
	res, err := projectiontest.Run(trace.Operations, evidence.Object{"top": int64(100)}, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]json.RawMessage{}
	if err := json.Unmarshal(formatstest.Read(t, "otlp/reference.json"), &raw); err != nil {
		t.Fatal(err)
	}
	var want perName
	if err := json.Unmarshal(raw["python-sdk.pb"], &want); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("%d groups, want %d", len(res.Rows), len(want))
	}
	for _, r := range res.Rows {
		w := want[r["name"].(string)]
		count, _ := evidence.AsInt(r["count"])
		total, _ := evidence.AsInt(r["total_ns"])
		if count != w.Count || total != w.TotalNS || r["kind"] != "span" || r["process_name"] != "checkout" {
			t.Errorf("%v: count %v total %v (%v, %v), want %d %d", r["name"], count, total, r["kind"], r["process_name"], w.Count, w.TotalNS)
		}
	}
}
