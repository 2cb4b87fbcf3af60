package aiperf

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/table"
)

func decode(t *testing.T, spec *formats.Spec, rel string) *formatstest.Sink {
	t.Helper()
	s, err := formatstest.DecodeFile(t, spec, filepath.Join(formatstest.Testdata(), rel), nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return s
}

func run(t *testing.T, s *formatstest.Sink) evidence.Object {
	t.Helper()
	rt := s.Table(table.InferenceRuns.Name)
	if rt == nil || len(rt.Rows) != 1 {
		t.Fatalf("want one run row, got %v", rt)
	}
	return rt.Rows[0]
}

func count(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := evidence.AsInt(v)
	if !ok {
		t.Fatalf("%v is not an integer", v)
	}
	return n
}

// Both record layouts decode, and their success and error counts equal
// what AIPerf's own aggregate of the same run says (request_count and
// error_request_count).
func TestRecordsCountsMatchAggregate(t *testing.T) {
	for _, dir := range []string{"aiperf/run1-2025", "aiperf/mock-0.13"} {
		recs := decode(t, RecordsSpec, dir+"/profile_export.jsonl")
		agg := decode(t, AggregateSpec, dir+"/profile_export_aiperf.json")
		rr, ar := run(t, recs), run(t, agg)
		if count(t, rr["completed"]) != count(t, ar["completed"]) || count(t, rr["failed"]) != count(t, ar["failed"]) {
			t.Errorf("%s: records count %v ok / %v failed; AIPerf says %v / %v", dir, rr["completed"], rr["failed"], ar["completed"], ar["failed"])
		}
		reqs := recs.Table(table.InferenceRequests.Name)
		var ttfts int64
		for _, r := range reqs.Rows {
			if r["ttft"] != nil {
				ttfts++
			}
			if r["ok"] == false && (r["error_category"] == nil || r["error_code"] == nil) {
				t.Errorf("%s: failed request %v without category or code", dir, r["request"])
			}
		}
		if ttfts != count(t, ar["completed"]) {
			t.Errorf("%s: %d records with a TTFT, %v completed", dir, ttfts, ar["completed"])
		}
	}
}

// The 2025 layout: model, endpoint type, streaming and concurrency from
// input_config, totals from the run-level metrics, units normalized.
func TestAggregate2025(t *testing.T) {
	s := decode(t, AggregateSpec, "aiperf/run1-2025/profile_export_aiperf.json")
	r := run(t, s)
	want := evidence.Object{"model": "openai/gpt-oss-20b", "endpoint_kind": "chat", "streaming": true, "concurrency": int64(100),
		"completed": int64(89), "failed": int64(11), "input_tokens": int64(48950), "output_tokens": int64(21624)}
	for k, v := range want {
		if formatstest.Canonical(t, r[k]) != formatstest.Canonical(t, v) {
			t.Errorf("%s = %v, want %v", k, r[k], v)
		}
	}
	if d := count(t, r["duration"]); d < 9_317_000_000 || d > 9_318_000_000 {
		t.Errorf("duration %d ns, want AIPerf's 9.3178 s", d)
	}
	var ttftP99 float64
	var failed bool
	for _, st := range s.Table(table.InferenceStats.Name).Rows {
		if st["metric"] == "ttft" && st["stat"] == "p99" {
			ttftP99, _ = st["value"].(float64)
			if st["unit"] != "ns" {
				t.Errorf("ttft unit %v", st["unit"])
			}
		}
		if st["metric"] == "failed" {
			failed = st["error_category"] == "RequestCancellationError" && count(t, st["error_code"]) == 499 && st["value"] == float64(11)
		}
	}
	// 3833.3894000399996 ms in the file.
	if ttftP99 < 3833389400.03 || ttftP99 > 3833389400.05 {
		t.Errorf("ttft p99 = %v ns", ttftP99)
	}
	if !failed {
		t.Error("error_summary: want 11 RequestCancellationError (499)")
	}
}

// Schema 1.4 (aiperf 0.13): the version, metrics at the top level.
func TestAggregateSchema14(t *testing.T) {
	s := decode(t, AggregateSpec, "aiperf/mock-0.13/profile_export_aiperf.json")
	r := run(t, s)
	if r["producer_version"] != "0.13.0" || r["model"] != "mock-model" || count(t, r["concurrency"]) != 4 {
		t.Errorf("run %v", r)
	}
	if s.Table(table.InferenceStats.Name).Summary.Coverage["layout"] != "schema 1.4" {
		t.Errorf("layout %v", s.Table(table.InferenceStats.Name).Summary.Coverage)
	}
}

// The CSV twin carries the same totals, rounded to 2 decimals, and says so.
func TestCSV(t *testing.T) {
	for _, dir := range []string{"aiperf/run1-2025", "aiperf/mock-0.13"} {
		c := decode(t, CSVSpec, dir+"/profile_export_aiperf.csv")
		j := decode(t, AggregateSpec, dir+"/profile_export_aiperf.json")
		cr, jr := run(t, c), run(t, j)
		for _, k := range []string{"completed", "failed", "input_tokens", "output_tokens"} {
			if count(t, cr[k]) != count(t, jr[k]) {
				t.Errorf("%s: csv %s %v, json %v", dir, k, cr[k], jr[k])
			}
		}
		sum := c.Table(table.InferenceStats.Name).Summary
		if !strings.Contains(strings.Join(sum.Limitations, " "), "2 decimals") {
			t.Errorf("%s: the rounding is not stated: %v", dir, sum.Limitations)
		}
		var ttft bool
		for _, st := range c.Table(table.InferenceStats.Name).Rows {
			ttft = ttft || st["metric"] == "ttft" && st["stat"] == "p99" && st["unit"] == "ns"
		}
		if !ttft {
			t.Errorf("%s: no ttft p99 in ns", dir)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		spec *formats.Spec
		rel  string
	}{
		{RecordsSpec, "aiperf/run1-2025/profile_export.jsonl"},
		{RecordsSpec, "aiperf/mock-0.13/profile_export.jsonl"},
		{AggregateSpec, "aiperf/run1-2025/profile_export_aiperf.json"},
		{AggregateSpec, "aiperf/mock-0.13/profile_export_aiperf.json"},
		{CSVSpec, "aiperf/run1-2025/profile_export_aiperf.csv"},
		{CSVSpec, "aiperf/mock-0.13/profile_export_aiperf.csv"},
	} {
		b := formatstest.Read(t, c.rel)
		prefix := b[:min(len(b), formats.SniffBytes)]
		for _, s := range []*formats.Spec{RecordsSpec, AggregateSpec, CSVSpec} {
			want := formats.No
			if s == c.spec {
				want = formats.Yes
			}
			if got := s.Sniff(prefix); got != want {
				t.Errorf("%s sniffs %s as %v, want %v", s.Name, c.rel, got, want)
			}
		}
	}
}

// Bad records fail typed, at their line.
func TestRecordFailures(t *testing.T) {
	good := `{"metadata":{"x_request_id":"a","request_start_ns":1,"benchmark_phase":"profiling"},"metrics":{"time_to_first_token":{"value":1.5,"unit":"ms"}},"error":null}` + "\n"
	for _, c := range []struct {
		name, data string
		code       evidence.Code
		line       int
	}{
		{"not json", good + "{nope\n", evidence.CodeDecodeFailure, 2},
		{"no metrics", good + `{"metadata":{}}` + "\n", evidence.CodeDecodeFailure, 2},
		{"duplicate key", `{"metadata":{},"metadata":{},"metrics":{}}` + "\n", evidence.CodeDecodeFailure, 1},
		{"bad time unit", `{"metadata":{},"metrics":{"request_latency":{"value":1,"unit":"parsecs"}}}` + "\n", evidence.CodeDecodeFailure, 1},
		{"fractional tokens", `{"metadata":{},"metrics":{"output_sequence_length":{"value":1.5,"unit":"tokens"}}}` + "\n", evidence.CodeDecodeFailure, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := formatstest.Decode(RecordsSpec, "x.jsonl", []byte(c.data), nil, nil)
			formatstest.CheckInvariants(t, s, err)
			f, ok := err.(*evidence.Failure)
			if !ok || f.Code != c.code || f.Location.Line != c.line {
				t.Fatalf("got %v (%#v), want %s at line %d", err, err, c.code, c.line)
			}
		})
	}
	// A record longer than the line bound is refused, named.
	_, err := formatstest.Run(t, RecordsSpec, "x.jsonl", []byte(good+strings.Repeat(" ", 200)+good), map[string]int64{"max_line_bytes": 190}, nil)
	if f, ok := err.(*evidence.Failure); !ok || f.Code != evidence.CodeLimitExceeded || f.Location.Line != 2 {
		t.Fatalf("over the line bound: %v", err)
	}
}

// Decoding through one-byte and half reads gives the same tables.
func TestReaders(t *testing.T) {
	for _, c := range []struct {
		spec *formats.Spec
		rel  string
	}{
		{RecordsSpec, "aiperf/mock-0.13/profile_export.jsonl"},
		{AggregateSpec, "aiperf/mock-0.13/profile_export_aiperf.json"},
		{CSVSpec, "aiperf/mock-0.13/profile_export_aiperf.csv"},
	} {
		data := formatstest.Read(t, c.rel)
		want, err := formatstest.Decode(c.spec, c.rel, data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []func(r []byte) *formatstest.Sink{
			func(b []byte) *formatstest.Sink {
				s, err := formatstest.Decode(c.spec, c.rel, b, nil, iotest.OneByteReader)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			func(b []byte) *formatstest.Sink {
				s, err := formatstest.Decode(c.spec, c.rel, b, nil, iotest.HalfReader)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
		} {
			got := w(data)
			if formatstest.Canonical(t, tablesOf(got)) != formatstest.Canonical(t, tablesOf(want)) {
				t.Errorf("%s: a slow reader changes the tables", c.rel)
			}
		}
	}
}

func tablesOf(s *formatstest.Sink) []any {
	var out []any
	for _, t := range s.Tables {
		rows := make([]any, len(t.Rows))
		for i, r := range t.Rows {
			rows[i] = r
		}
		out = append(out, rows)
	}
	return out
}

// Values longer than max_value_bytes are cut and marked.
func TestValueBound(t *testing.T) {
	data := formatstest.Read(t, "aiperf/mock-0.13/profile_export.jsonl")
	full, err := formatstest.Decode(RecordsSpec, "x.jsonl", data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := formatstest.Decode(RecordsSpec, "x.jsonl", data, evidence.Object{"max_value_bytes": int64(16)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	formatstest.CheckValueBound(t, cut, full, 16)
}

// Warmup records are rows, but not counted in the run's totals, as
// AIPerf's aggregates leave them out.
func TestWarmupNotCounted(t *testing.T) {
	rec := func(phase string) string {
		return `{"metadata":{"request_start_ns":1,"benchmark_phase":"` + phase + `"},"metrics":{"time_to_first_token":{"value":1,"unit":"ms"}},"error":null}` + "\n"
	}
	s, err := formatstest.Decode(RecordsSpec, "x.jsonl", []byte(rec("warmup")+rec("profiling")+rec("profiling")), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, s)
	if count(t, r["completed"]) != 2 || count(t, r["requests"]) != 3 {
		t.Errorf("run %v", r)
	}
	if n, _ := evidence.AsInt(s.Table(table.InferenceRequests.Name).Summary.Metrics["phase_warmup"].Value); n != 1 {
		t.Errorf("phase_warmup %v", s.Table(table.InferenceRequests.Name).Summary.Metrics)
	}
}
