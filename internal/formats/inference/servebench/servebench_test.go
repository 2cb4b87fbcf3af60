package servebench

import (
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

func decodeFile(t *testing.T, spec *formats.Spec, rel string) *formatstest.Sink {
	t.Helper()
	s, err := formatstest.DecodeFile(t, spec, filepath.Join(formatstest.Testdata(), rel), nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return s
}

var (
	vllmFiles   = []string{"vllm/detailed.json", "vllm/llm-d-H100-vllm-2replicas-benchmark_2025-05-13_04-55-27.json", "vllm/llm-d-H100-llm-d-1p1d-benchmark_2025-05-13_04-37-51.json"}
	sglangFiles = []string{"sglang/bench_serving.jsonl"}
)

// A vLLM result is never taken for SGLang's, nor the reverse: each
// sniffer says Yes to its own files and No to the other's.
func TestDetectionPairs(t *testing.T) {
	check := func(rel string, yes, no *formats.Spec) {
		b := formatstest.Read(t, rel)
		p := b[:min(len(b), formats.SniffBytes)]
		if v := yes.Sniff(p); v != formats.Yes {
			t.Errorf("%s: %s says %v", rel, yes.Name, v)
		}
		if v := no.Sniff(p); v != formats.No {
			t.Errorf("%s: %s says %v", rel, no.Name, v)
		}
	}
	for _, f := range vllmFiles {
		check(f, VLLMSpec, SGLangSpec)
	}
	for _, f := range sglangFiles {
		check(f, SGLangSpec, VLLMSpec)
	}
	// Keys of both: neither claims it.
	both := []byte(`{"model_id":"m","dataset_name":"d","completed":1}`)
	if VLLMSpec.Sniff(both) != formats.No || SGLangSpec.Sniff(both) != formats.No {
		t.Error("an object with both producers' keys was claimed")
	}
	// An AIPerf aggregate is neither.
	b := formatstest.Read(t, "aiperf/mock-0.13/profile_export_aiperf.json")
	if VLLMSpec.Sniff(b[:formats.SniffBytes]) == formats.Yes || SGLangSpec.Sniff(b[:formats.SniffBytes]) == formats.Yes {
		t.Error("an AIPerf aggregate was claimed")
	}
}

func runs(s *formatstest.Sink) []evidence.Object { return s.Table(table.InferenceRuns.Name).Rows }

// vLLM's fields map one to one: totals, durations in ns, statistics in
// ns with their native key, --metadata keys counted and not emitted.
func TestVLLMFields(t *testing.T) {
	s := decodeFile(t, VLLMSpec, "vllm/llm-d-H100-vllm-2replicas-benchmark_2025-05-13_04-55-27.json")
	r := runs(s)[0]
	want := `{"completed":200,"duration":57421719426,"input_tokens":1599800,"model":"meta-llama/Llama-3.1-8B-Instruct","output_tokens":40000,"request_rate":"3.6","unknown_keys":1}`
	got := evidence.Object{}
	for _, k := range []string{"completed", "duration", "input_tokens", "model", "output_tokens", "request_rate", "unknown_keys"} {
		got[k] = r[k]
	}
	if formatstest.Canonical(t, got) != want {
		t.Errorf("run %s", formatstest.Canonical(t, got))
	}
	stats := s.Table(table.InferenceStats.Name).Rows
	if len(stats) != 15 {
		t.Errorf("%d statistics, want 15 (mean, median, std, p95, p99 of ttft, tpot, itl)", len(stats))
	}
	for _, st := range stats {
		if st["native"] == "p99_itl_ms" && (st["metric"] != "itl" || st["stat"] != "p99" || st["unit"] != "ns" || st["value"] != 216.5980374556966*1e6) {
			t.Errorf("p99_itl_ms %v", st)
		}
	}
}

// The detailed form: one row per request, failed ones marked, their
// error text never kept.
func TestVLLMDetailed(t *testing.T) {
	s := decodeFile(t, VLLMSpec, "vllm/detailed.json")
	reqs := s.Table(table.InferenceRequests.Name).Rows
	if len(reqs) != 24 {
		t.Fatalf("%d requests", len(reqs))
	}
	var failed int
	for _, q := range reqs {
		if q["ok"] == false {
			failed++
			if q["error_category"] != "error" || q["ttft"] != nil {
				t.Errorf("failed request %v", q)
			}
		}
	}
	if r := runs(s)[0]; failed != 1 || r["failed"] != int64(1) || r["requests"] != int64(24) {
		t.Errorf("failed %d, run %v", failed, r)
	}
}

// SGLang appends one object per run; Infinity is its unbounded rate.
func TestSGLang(t *testing.T) {
	s := decodeFile(t, SGLangSpec, "sglang/bench_serving.jsonl")
	rs := runs(s)
	if len(rs) != 2 || rs[0]["request_rate"] != "inf" || rs[1]["request_rate"] != "50.0" {
		t.Fatalf("runs %v", rs)
	}
	if rs[0]["requests"] != int64(30) || rs[1]["requests"] != nil {
		t.Errorf("requests %v %v", rs[0]["requests"], rs[1]["requests"])
	}
	if f, _ := evidence.AsInt(rs[0]["failed"]); f+int64(rs[0]["completed"].(int64)) != 30 {
		t.Errorf("completed %v + failed %v != 30", rs[0]["completed"], rs[0]["failed"])
	}
}

func TestMalformed(t *testing.T) {
	for _, c := range []struct{ name, data string }{
		{"array", `[1,2]`},
		{"arrays differ", `{"model_id":"m","completed":2,"ttfts":[0.1,0.2],"input_lens":[1]}`},
		{"not a result", `{"model_id":"m"}`},
		{"cut", `{"model_id":"m","completed":2`},
		{"infinity elsewhere", `{"model_id":"m","completed":Infinity}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := formatstest.Decode(VLLMSpec, "x.json", []byte(c.data), nil, nil)
			formatstest.CheckInvariants(t, s, err)
			f, ok := err.(*evidence.Failure)
			if !ok || f.Code != evidence.CodeDecodeFailure {
				t.Fatalf("got %v", err)
			}
		})
	}
	_, err := formatstest.Run(t, VLLMSpec, "x.json", []byte(`{"model_id":"m","completed":3,"ttfts":[1,2,3]}`), map[string]int64{LimitRequests: 2}, nil)
	if f, ok := err.(*evidence.Failure); !ok || f.Code != evidence.CodeLimitExceeded {
		t.Fatalf("over max_requests: %v", err)
	}
}

func TestReaders(t *testing.T) {
	for _, c := range []struct {
		spec *formats.Spec
		rel  string
	}{{VLLMSpec, "vllm/detailed.json"}, {SGLangSpec, "sglang/bench_serving.jsonl"}} {
		data := formatstest.Read(t, c.rel)
		want, err := formatstest.Decode(c.spec, c.rel, data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := formatstest.Decode(c.spec, c.rel, data, nil, iotest.OneByteReader)
		if err != nil {
			t.Fatal(err)
		}
		if formatstest.Canonical(t, rowsOf(got)) != formatstest.Canonical(t, rowsOf(want)) {
			t.Errorf("%s: one-byte reads change the tables", c.rel)
		}
	}
}

func rowsOf(s *formatstest.Sink) []any {
	var out []any
	for _, t := range s.Tables {
		for _, r := range t.Rows {
			out = append(out, r)
		}
	}
	return out
}

func TestValueBound(t *testing.T) {
	data := formatstest.Read(t, "vllm/llm-d-H100-vllm-2replicas-benchmark_2025-05-13_04-55-27.json")
	full, err := formatstest.Decode(VLLMSpec, "x.json", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Decode(VLLMSpec, "x.json", data, evidence.Object{"max_value_bytes": int64(16)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}
