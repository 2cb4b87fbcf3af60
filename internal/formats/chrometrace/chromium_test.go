package chrometrace

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

// TestChromiumStartup: Debian's Chromium 156 startup trace
// (--trace-startup-format=json, testdata/perfetto/regen.sh) decodes to
// per (kind, name) counts and exact ns totals, events by phase and flow
// points equal to reference.py's independent json reading.
func TestChromiumStartup(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: cannot run the independent reference reading")
	}
	path := filepath.Join(formatstest.Testdata(), "chrome-trace", "chromium-startup.json.gz")
	out, err := exec.Command(py, filepath.Join(formatstest.Testdata(), "chrome-trace", "reference.py"), path).Output()
	if err != nil {
		t.Fatalf("reference.py: %v", err)
	}
	var ref struct {
		Events        int64            `json:"events"`
		ByPhase       map[string]int64 `json:"by_phase"`
		UnmatchedEnd  int64            `json:"unmatched_end"`
		UnclosedBegin int64            `json:"unclosed_begin"`
		FlowPoints    int64            `json:"flow_points"`
		Slices        map[string]struct {
			Count   int64 `json:"count"`
			TotalNS int64 `json:"total_ns"`
		} `json:"slices"`
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	sink := formatstest.MustDecodeFile(t, Spec, path, nil, nil)
	st := sink.Table(table.TraceSlices.Name)
	got := map[string][2]int64{}
	for _, r := range st.Typed {
		s := r.(*table.TraceSlice)
		g := got[s.Kind+"\t"+s.Name]
		got[s.Kind+"\t"+s.Name] = [2]int64{g[0] + 1, g[1] + s.DurationNS}
	}
	if len(got) != len(ref.Slices) || len(got) < 10 {
		t.Errorf("%d slice names, reference %d", len(got), len(ref.Slices))
	}
	for k, want := range ref.Slices {
		if g := got[k]; g != [2]int64{want.Count, want.TotalNS} {
			t.Errorf("%q: count %d total %d ns; reference %d, %d ns", k, g[0], g[1], want.Count, want.TotalNS)
		}
	}
	metric := func(name string) int64 {
		n, ok := evidence.AsInt(st.Summary.Metrics[name].Value)
		if !ok {
			t.Fatalf("metric %s missing", name)
		}
		return n
	}
	if n := metric("events"); n != ref.Events {
		t.Errorf("events %d, reference %d", n, ref.Events)
	}
	if n := metric("unmatched_end"); n != ref.UnmatchedEnd {
		t.Errorf("unmatched_end %d, reference %d", n, ref.UnmatchedEnd)
	}
	if n := metric("unclosed_begin"); n != ref.UnclosedBegin {
		t.Errorf("unclosed_begin %d, reference %d", n, ref.UnclosedBegin)
	}
	phases, _ := st.Summary.Coverage["events_by_phase"].(evidence.Object)
	for ph, n := range ref.ByPhase {
		if g, _ := evidence.AsInt(phases[ph]); g != n {
			t.Errorf("phase %s: %d events, reference %d", ph, g, n)
		}
	}
	if n := int64(len(sink.Table(table.TraceFlows.Name).Rows)); n != ref.FlowPoints {
		t.Errorf("%d flow rows, reference %d", n, ref.FlowPoints)
	}
}
