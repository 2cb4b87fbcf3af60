package registry

import (
	"os"
	"slices"
	"testing"
)

func TestRegistryConsistent(t *testing.T) {
	if err := Check(os.DirFS("../..")); err != nil {
		t.Fatal(err)
	}
}

func TestSupportDocUpToDate(t *testing.T) {
	got, err := os.ReadFile("../../docs/support.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != SupportMarkdown() {
		t.Fatal("docs/support.md is stale: run `go run ./internal/gendocs`")
	}
}

// The registry says what each provider's captures feed; the first
// operation is a capture tool's default.
func TestProvidersFeed(t *testing.T) {
	cpu := []string{"summarize_cpu_hotspots", "summarize_cpu_caller_edges", "summarize_cpu_stacks"}
	want := map[string][]string{
		"node-cpu-profile":  cpu,
		"py-spy":            cpu,
		"perf":              cpu,
		"node-heap-profile": {"summarize_memory_hotspots"},
		"memray":            {"summarize_memory_hotspots"},
		"pytest":            {"summarize_failures"},
		"observations":      {"summarize_observations"},
		"coverage":          {"summarize_coverage"},
		"process":           {"preview_text_fragment", "preview_artifact"},
		"benchmark-samples": {"summarize_benchmarks", "compare_benchmarks"},
		"pyperf":            {"summarize_benchmarks", "compare_benchmarks"},
		"nvbench":           {"summarize_benchmarks", "compare_benchmarks"},
		"compute-sanitizer": {"inspect_sanitizer_findings"},
		"nsight-compute":    {"inspect_kernel_metrics"},
		"nsight-systems":    {"inspect_gpu_launches", "summarize_trace_operations", "inspect_trace_window"},
		"triton":            {"inspect_triton_autotune"},
		"torch-profiler":    {"summarize_trace_operations", "inspect_trace_window"},
		"rocprofv3":         {"summarize_trace_operations", "inspect_trace_window"},
		"xctrace":           cpu,
	}
	for _, p := range Providers() {
		if !slices.Equal(p.Operations, want[p.Name]) {
			t.Errorf("provider %s feeds %v, want %v", p.Name, p.Operations, want[p.Name])
		}
		delete(want, p.Name)
	}
	if len(want) > 0 {
		t.Errorf("providers not registered: %v", want)
	}
}
