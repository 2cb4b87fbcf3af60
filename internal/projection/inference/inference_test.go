package inference

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/inference/aiperf"
	"github.com/flameox/flameox/internal/formats/inference/servebench"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

func decode(t testing.TB, spec *formats.Spec, rel string) []*projectiontest.Input {
	t.Helper()
	return projectiontest.Decode(t, spec, filepath.Join(formatstest.Testdata(), rel), nil)
}

func rows(t *testing.T, args evidence.Object, in ...*projectiontest.Input) *projectiontest.Result {
	t.Helper()
	res, err := projectiontest.Run(Spec, args, in...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func find(res *projectiontest.Result, metric, source string) evidence.Object {
	for _, r := range res.Rows {
		if r["metric"] == metric && r["source"] == source {
			return r
		}
	}
	return nil
}

// The distributions flameox computes from AIPerf's per-request records
// equal AIPerf's own aggregate of the same run, statistic by statistic
// (mean, std, min, max, count, p1…p99), within the rounding of its ms
// export: both the 2025 layout and aiperf 0.13's.
func TestAIPerfRecordsEqualAggregate(t *testing.T) {
	for _, dir := range []string{"aiperf/run1-2025", "aiperf/mock-0.13"} {
		in := append(decode(t, aiperf.RecordsSpec, dir+"/profile_export.jsonl"), decode(t, aiperf.AggregateSpec, dir+"/profile_export_aiperf.json")...)
		res := rows(t, evidence.Object{}, in...)
		for _, m := range []string{"ttft", "itl", "e2e"} {
			mine, theirs := find(res, m, "flameox"), find(res, m, "producer")
			if mine == nil || theirs == nil {
				t.Fatalf("%s %s: want flameox and producer rows, got %v", dir, m, res.Rows)
			}
			d, _ := mine["max_rel_diff"].(float64)
			if mine["agrees"] != true || d > 1e-12 {
				t.Errorf("%s %s: flameox differs from AIPerf by %v: %v vs %v", dir, m, d, mine, theirs)
			}
			if mine["count"] != theirs["count"] || mine["unit"] != "ms" || theirs["unit"] != "ms" {
				t.Errorf("%s %s: count %v vs %v, units %v %v", dir, m, mine["count"], theirs["count"], mine["unit"], theirs["unit"])
			}
		}
		if n, _ := evidence.AsInt(res.Summary.Metrics["disagreeing_metrics"].Value); n != 0 {
			t.Errorf("%s: %d disagreeing metrics", dir, n)
		}
		if !res.Summary.Complete {
			t.Errorf("%s: incomplete: %v", dir, res.Summary.Limitations)
		}
	}
}

// A changed record shows as a difference, never hidden.
func TestDifferenceShown(t *testing.T) {
	recs := decode(t, aiperf.RecordsSpec, "aiperf/mock-0.13/profile_export.jsonl")
	agg := decode(t, aiperf.AggregateSpec, "aiperf/mock-0.13/profile_export_aiperf.json")
	for _, in := range recs {
		for _, r := range in.Rows {
			o := r.(evidence.Object)
			if o["ttft"] != nil {
				o["ttft"] = float64(1e12) // one request 1000 s late
				break
			}
		}
	}
	res := rows(t, evidence.Object{}, append(recs, agg...)...)
	mine := find(res, "ttft", "flameox")
	if mine["agrees"] != false {
		t.Fatalf("a changed TTFT agrees: %v", mine)
	}
	if n, _ := evidence.AsInt(res.Summary.Metrics["disagreeing_metrics"].Value); n != 1 {
		t.Errorf("disagreeing_metrics %v", res.Summary.Metrics)
	}
}

// Runs mode: counts, failures by category and code, duration, throughput.
func TestRunsMode(t *testing.T) {
	in := append(decode(t, aiperf.RecordsSpec, "aiperf/run1-2025/profile_export.jsonl"), decode(t, aiperf.AggregateSpec, "aiperf/run1-2025/profile_export_aiperf.json")...)
	res := rows(t, evidence.Object{"mode": "runs"}, in...)
	if len(res.Rows) != 1 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	r := res.Rows[0]
	if c, _ := evidence.AsInt(r["completed"]); c != 89 {
		t.Errorf("completed %v", r["completed"])
	}
	if f, _ := evidence.AsInt(r["failed"]); f != 11 {
		t.Errorf("failed %v", r["failed"])
	}
	if formatstest.Canonical(t, r["failures"]) != `[{"category":"RequestCancellationError","code":499,"count":11}]` {
		t.Errorf("failures %s", formatstest.Canonical(t, r["failures"]))
	}
	if r["model"] != "openai/gpt-oss-20b" {
		t.Errorf("model %v", r["model"])
	}
}

// Two record files and one aggregate cannot be paired: each stands alone,
// and the summary says so.
func TestAmbiguousPairing(t *testing.T) {
	in := append(decode(t, aiperf.RecordsSpec, "aiperf/run1-2025/profile_export.jsonl"), decode(t, aiperf.RecordsSpec, "aiperf/mock-0.13/profile_export.jsonl")...)
	in = append(in, decode(t, aiperf.AggregateSpec, "aiperf/mock-0.13/profile_export_aiperf.json")...)
	res := rows(t, evidence.Object{}, in...)
	for _, r := range res.Rows {
		if r["agrees"] != nil {
			t.Errorf("an ambiguous pair was compared: %v", r)
		}
	}
	if n, _ := evidence.AsInt(res.Summary.Metrics["runs"].Value); n != 3 {
		t.Errorf("runs %v", res.Summary.Metrics["runs"])
	}
	found := false
	for _, l := range res.Summary.Limitations {
		found = found || strings.Contains(l, "none were paired")
	}
	if !found {
		t.Errorf("limitations %v", res.Summary.Limitations)
	}
}

func TestArguments(t *testing.T) {
	if _, err := projectiontest.Start(Spec, evidence.Object{"mode": "runs", "metrics": []any{"ttft"}}); err == nil {
		t.Error("metrics in runs mode accepted")
	}
	if _, err := projectiontest.Start(Spec, evidence.Object{"metrics": []any{"latency"}}); err == nil {
		t.Error("unknown metric accepted")
	}
	in := decode(t, aiperf.RecordsSpec, "aiperf/mock-0.13/profile_export.jsonl")
	res := rows(t, evidence.Object{"metrics": []any{"ttft"}, "top": int64(1)}, in...)
	if len(res.Rows) != 1 || res.Rows[0]["metric"] != "ttft" {
		t.Errorf("rows %v", res.Rows)
	}
}

func TestPercentile(t *testing.T) {
	d := &dist{}
	for _, x := range []float64{4, 1, 3, 2} {
		d.add(x)
	}
	s := d.stats()
	// numpy.percentile([1,2,3,4], [50, 90, 99]) = 2.5, 3.7, 3.97
	for q, want := range map[float64]float64{50: 2.5, 90: 3.7, 99: 3.97, 0: 1, 100: 4} {
		if got := s.percentile(q); relDiff(got, want) > 1e-15 {
			t.Errorf("p%v = %v, want %v", q, got, want)
		}
	}
	if relDiff(s.std, 1.118033988749895) > 1e-15 {
		t.Errorf("std %v", s.std)
	}
	for name, q := range map[string]float64{"p99.9": 99.9, "p999": 99.9, "p5": 5} {
		if got, ok := percentileOf(name); !ok || got != q {
			t.Errorf("%s = %v", name, got)
		}
	}
}

func BenchmarkAIPerf(b *testing.B) {
	in := append(decode(b, aiperf.RecordsSpec, "aiperf/mock-0.13/profile_export.jsonl"), decode(b, aiperf.AggregateSpec, "aiperf/mock-0.13/profile_export_aiperf.json")...)
	projectiontest.Bench(b, Spec, evidence.Object{}, in...)
}

// vLLM's detailed result and SGLang's --output-details: what flameox
// computes from the per-request arrays equals the producer's aggregates
// of the same run (SGLang: TTFT and ITL; its arrays hold no latency).
func TestServeBenchDetailedEqualsAggregate(t *testing.T) {
	for _, c := range []struct {
		spec    *formats.Spec
		rel     string
		metrics []string
	}{
		{servebench.VLLMSpec, "vllm/detailed.json", []string{"ttft", "tpot", "itl", "e2e"}},
		{servebench.SGLangSpec, "sglang/bench_serving.jsonl", []string{"ttft", "itl"}},
	} {
		res := rows(t, evidence.Object{}, decode(t, c.spec, c.rel)...)
		for _, m := range c.metrics {
			mine := find(res, m, "flameox")
			if mine == nil || mine["agrees"] != true {
				t.Errorf("%s %s: %v", c.rel, m, mine)
				continue
			}
			if d, _ := mine["max_rel_diff"].(float64); d > 1e-12 {
				t.Errorf("%s %s: differs by %v", c.rel, m, d)
			}
		}
	}
}
