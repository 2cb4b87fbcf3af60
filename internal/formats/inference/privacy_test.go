package inference_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flameox/flameox/internal/bundle"
	"github.com/flameox/flameox/internal/evidence"
)

// secret is a distinct planted string for one omitted field.
func secret(field string) string {
	return "PLANTED-" + strings.ToUpper(strings.NewReplacer(".", "-", "_", "-").Replace(field)) + "-7f3a"
}

// Hash values planted in a Mooncake trace: numbers no count, offset or
// timestamp of the file can equal.
const hashA, hashB = 918273645546372819, 827364554637281909

// planted writes one file per format with a distinct secret in every
// field the readers omit, and returns the files and the secrets.
func planted(t *testing.T, dir string) (map[string]string, []string) {
	t.Helper()
	var secrets []string
	s := func(f string) string { secrets = append(secrets, secret(f)); return secret(f) }
	q := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	files := map[string]string{}
	files["profile_export.jsonl"] = fmt.Sprintf(`{"metadata":{"session_num":0,"x_request_id":"r1","conversation_id":"c1","turn_index":0,"request_start_ns":1000,"request_end_ns":2000,"worker_id":"w","record_processor_id":"p","benchmark_phase":"profiling","api_key":%s},"metrics":{"time_to_first_token":{"value":1.5,"unit":"ms"},"request_latency":{"value":9.0,"unit":"ms"},"inter_token_latency":{"value":0.5,"unit":"ms"},"input_sequence_length":{"value":32,"unit":"tokens"},"output_sequence_length":{"value":16,"unit":"tokens"}},"trace_data":{"request_headers":{"Authorization":%s}},"error":null}
{"metadata":{"session_num":1,"x_request_id":"r2","conversation_id":"c2","turn_index":0,"request_start_ns":1500,"request_end_ns":1600,"worker_id":"w","record_processor_id":"p","benchmark_phase":"profiling"},"metrics":{"error_isl":{"value":32,"unit":"tokens"}},"error":{"code":500,"type":"Internal Server Error","message":%s,"cause":%s,"cause_chain":[%s],"details":{"body":%s}}}
`, q(s("metadata.api_key")), q(s("trace_data.authorization")), q(s("error.message")), q(s("error.cause")), q(s("error.cause_chain")), q(s("error.details")))
	files["profile_export_aiperf.json"] = fmt.Sprintf(`{"schema_version":"1.4","aiperf_version":"0.13.0","benchmark_id":"b",
"time_to_first_token":{"unit":"ms","avg":1.5,"p50":1.5,"p99":1.5,"min":1.5,"max":1.5,"std":0.0,"count":1,"sum":1.5},
"request_count":{"unit":"requests","avg":1.0},"error_request_count":{"unit":"requests","avg":1.0},
"input_config":{"models":{"items":[{"name":"CONTROL-KEPT-MODEL"}]},"endpoint":{"urls":[%s],"type":"chat","streaming":true,"api_key":%s,"headers":[[%s,"v"]],"extra":{"tools":[{"type":"function","function":{"name":%s}}]}},"input":{"prompt":{"text":%s}},"cli_command":%s},
"run_info":{"cli_command":%s},"telemetry_data":{"endpoints":{%s:{}}},
"error_summary":[{"error_details":{"code":500,"type":"Internal Server Error","message":%s},"count":1}],
"was_cancelled":false,"is_complete":true,"start_time":"2026-01-01T00:00:00","end_time":"2026-01-01T00:00:01"}`,
		q("http://"+s("endpoint.url")+":8000"), q(s("endpoint.api_key")), q(s("endpoint.header")), q(s("tool.definition")), q(s("input.prompt")),
		q(s("input_config.cli_command")), q(s("run_info.cli_command")), q("http://"+s("telemetry.endpoint")+":9400/metrics"), q(s("error_summary.message")))
	files["profile_export_aiperf.csv"] = fmt.Sprintf("Metric,avg,min,max,p1,p5,p25,p50,p75,p90,p95,p99,std\nTime to First Token (ms),1.50,1.50,1.50,1.50,1.50,1.50,1.50,1.50,1.50,1.50,1.50,0.00\n\nMetric,Value\nRequest Count,1.00\n\nEndpoint,GPU_Index,GPU_Name,Metric,avg\nhttp://%s:9400/metrics,0,GPU,Power (W),100.00\n", s("csv.telemetry_endpoint"))
	files["vllm-result.json"] = fmt.Sprintf(`{"date":"20260101-000000","endpoint_type":"openai","backend":"openai","label":%s,"model_id":"m","tokenizer_id":"m","num_prompts":2,%s:%s,"base_url":%s,"request_rate":"inf","burstiness":1.0,"max_concurrency":null,"duration":1.0,"completed":1,"failed":1,"total_input_tokens":10,"total_output_tokens":3,"request_throughput":1.0,"request_goodput":null,"output_throughput":3.0,"total_token_throughput":13.0,"input_lens":[10,10],"output_lens":[3,0],"ttfts":[0.1,0.0],"itls":[[0.01,0.02],[]],"latencies":[0.13,0.0],"start_times":[1.0,1.1],"generated_texts":[%s,""],"errors":["",%s],"prompts":[%s],"tools":[{"name":%s}],"mean_ttft_ms":100.0,"median_ttft_ms":100.0,"std_ttft_ms":0.0,"p99_ttft_ms":100.0}`,
		q(s("vllm.label")), q(s("vllm.metadata_key")), q(s("vllm.metadata_value")), q("http://"+s("vllm.endpoint")+":8000"), q(s("vllm.generated_text")), q(s("vllm.error")), q(s("vllm.prompt")), q(s("vllm.tool")))
	files["sglang.jsonl"] = fmt.Sprintf(`{"tag":%s,"backend":"sglang-oai","dataset_name":"random-ids","request_rate":Infinity,"max_concurrency":4,"server_info":{"api_key":%s,"model_path":%s},"duration":1.0,"completed":1,"total_input_tokens":10,"total_output_tokens":3,"request_throughput":1.0,"input_throughput":10.0,"output_throughput":3.0,"total_throughput":13.0,"mean_ttft_ms":100.0,"median_ttft_ms":100.0,"std_ttft_ms":0.0,"p99_ttft_ms":100.0,"input_lens":[10,10],"output_lens":[3,0],"ttfts":[0.1,0.0],"itls":[[0.01,0.02],[]],"generated_texts":[%s,""],"errors":["",%s],"prompt":%s}
`, q(s("sglang.tag")), q(s("sglang.server_api_key")), q(s("sglang.model_path")), q(s("sglang.generated_text")), q(s("sglang.error")), q(s("sglang.prompt")))
	files["mooncake.jsonl"] = fmt.Sprintf(`{"timestamp": 0, "input_length": 1024, "output_length": 8, "hash_ids": [%d, %d], "prompt": %s}
{"timestamp": 7, "input_length": 512, "output_length": 4, "hash_ids": [%d]}
`, hashA, hashB, q(s("mooncake.prompt")), hashA)
	secrets = append(secrets, fmt.Sprint(int64(hashA)), fmt.Sprint(int64(hashB)))
	paths := map[string]string{}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths, secrets
}

// formats each planted file must be read as.
var wantFormat = map[string]string{
	"profile_export.jsonl": "aiperf-records", "profile_export_aiperf.json": "aiperf-json", "profile_export_aiperf.csv": "aiperf-csv",
	"vllm-result.json": "vllm-bench", "sglang.jsonl": "sglang-bench", "mooncake.jsonl": "mooncake-trace",
}

func build(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "../../../cmd/...")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return dir
}

func run(t *testing.T, bin string, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "COLUMNS=200")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, out.String(), errb.String())
	}
	return append(out.Bytes(), errb.Bytes()...)
}

// mcpCall runs flameox-mcp over stdio: initialize, then one tools/call,
// and returns every line it wrote until the call's answer.
func mcpCall(t *testing.T, bin string, args map[string]any) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "flameox-mcp"), "--bin-dir", bin)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "call", "method": "tools/call",
		"params": map[string]any{"name": "summarize_inference", "arguments": args}})
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"privacy","version":"0"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, string(call))
	var all []byte
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		all = append(append(all, sc.Bytes()...), '\n')
		if bytes.Contains(sc.Bytes(), []byte(`"id":"call"`)) {
			return all
		}
	}
	t.Fatalf("flameox-mcp ended without answering: %s", all)
	return nil
}

// Every omitted field of every format holds a distinct planted secret;
// none may appear in any output: decode JSONL, rank JSONL and table (both
// modes), a preserved bundle's manifest and its Parquet tables, and the
// MCP result. Each secret is first checked to be in its input, so the
// test cannot pass by planting nothing.
func TestPlantedSecretsNeverLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands")
	}
	dir := t.TempDir()
	paths, secrets := planted(t, dir)
	var all []byte
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		all = append(all, b...)
	}
	for _, s := range secrets {
		if !bytes.Contains(all, []byte(s)) {
			t.Fatalf("secret %s was not planted", s)
		}
	}
	bin := build(t)
	check := func(surface string, out []byte) {
		t.Helper()
		for _, s := range secrets {
			if bytes.Contains(out, []byte(s)) {
				t.Errorf("%s leaks %s", surface, s)
			}
		}
	}
	store := filepath.Join(dir, "store")
	for name, p := range paths {
		dec := run(t, bin, nil, "flameox-decode", p)
		if !bytes.Contains(dec, []byte(`"format":"`+wantFormat[name]+`"`)) {
			t.Errorf("%s was not decoded as %s:\n%.400s", name, wantFormat[name], dec)
		}
		check(name+": flameox-decode", dec)
		for _, mode := range []string{"latency", "runs"} {
			rj := run(t, bin, nil, "flameox-rank", "--format", "jsonl", "--mode", mode, p)
			if !bytes.Contains(rj, []byte(`"kind":"row"`)) {
				t.Errorf("%s: rank %s wrote no row: %.300s", name, mode, rj)
			}
			check(name+": flameox-rank jsonl "+mode, rj)
			mcp := mcpCall(t, bin, map[string]any{"paths": []any{p}, "mode": mode})
			if !bytes.Contains(mcp, []byte("inference.")) || bytes.Contains(mcp, []byte(`"isError":true`)) {
				t.Errorf("%s: MCP %s answered no inference table: %.600s", name, mode, mcp)
			}
			// A kept field does reach the outputs: the scan can see.
			if name == "profile_export_aiperf.json" && (!bytes.Contains(rj, []byte("CONTROL-KEPT-MODEL")) || !bytes.Contains(mcp, []byte("CONTROL-KEPT-MODEL"))) {
				t.Errorf("the kept model name is missing from rank or MCP output")
			}
			check(name+": flameox-rank table "+mode, run(t, bin, nil, "flameox-rank", "--format", "table", "--mode", mode, p))
			check(name+": flameox-rank from decode "+mode, run(t, bin, dec, "flameox-rank", "--format", "jsonl", "--mode", mode))
			check(name+": MCP "+mode, mcp)
		}
		pres := run(t, bin, dec, "flameox-preserve", "--store", store)
		check(name+": flameox-preserve stdout", pres)
		var id string
		for _, l := range bytes.Split(pres, []byte("\n")) {
			var b struct {
				Kind string `json:"kind"`
				ID   string `json:"bundle_id"`
			}
			if json.Unmarshal(l, &b) == nil && b.Kind == "bundle" {
				id = b.ID
			}
		}
		if id == "" {
			t.Fatalf("%s: no bundle block in %s", name, pres)
		}
		r, err := bundle.OpenID(store, id)
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := os.ReadFile(filepath.Join(r.Dir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		check(name+": bundle manifest", manifest)
		tables := len(r.Manifest.Tables)
		for i := range r.Manifest.Tables {
			var rows []byte
			for row, err := range r.Rows(i) {
				if err != nil {
					t.Fatalf("%s: table %d: %v", name, i, err)
				}
				b, _ := evidence.Canonical(row)
				rows = append(append(rows, b...), '\n')
			}
			check(fmt.Sprintf("%s: bundle Parquet table %d", name, i), rows)
			// The raw file too, in case a value were stored outside the rows.
			raw, _ := os.ReadFile(filepath.Join(r.Dir, filepath.FromSlash(r.Manifest.Tables[i].Path)))
			check(fmt.Sprintf("%s: bundle Parquet file %d", name, i), raw)
		}
		if tables == 0 {
			t.Errorf("%s: the bundle holds no table", name)
		}
	}
}
