package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/registry"
)

// captureClient connects to flameox-mcp with flameox-capture beside it and
// the node-cpu-profile provider registered, with scratch under the test.
func captureClient(t *testing.T) *client.Client {
	t.Helper()
	if _, err := os.Stat(filepath.Join(binDir, "flameox-capture")); err != nil {
		t.Fatalf("TestMain built ./cmd/... but flameox-capture is missing: %v", err)
	}
	if _, ok := registry.Provider("node-cpu-profile"); !ok {
		t.Fatal("the node-cpu-profile provider is not registered")
	}
	needNode(t)
	return connect(t, filepath.Join(binDir, "flameox-mcp"), "FLAMEOX_SCRATCH="+t.TempDir())
}

func TestCaptureNodeHotspots(t *testing.T) {
	c := captureClient(t)
	r := mustCall(t, c, "capture_node_cpu_profile", map[string]any{
		"argv": []string{"node", hotScript(t)}, "analysis": map[string]any{"top": 3}})
	rows := r.rows(t)
	if len(rows) != 3 || rows[0].(evidence.Object)["function"] != "hotLoop" {
		t.Fatalf("rows = %v, want hotLoop first", rows)
	}
	cb, _ := r.sc["capture"].(evidence.Object)
	if cb == nil || cb["outcome"] != "completed" {
		t.Errorf("capture = %v", cb)
	}
	arts := r.sc["artifacts"].([]any)
	if len(arts) == 0 || arts[0].(evidence.Object)["role"] != "cpu-profile" {
		t.Errorf("artifacts = %v", arts)
	}
}

// Analysis arguments are checked against the provider's formats before the
// workload runs: the workload would leave a marker file.
func TestCaptureMetricRejectedBeforeRunning(t *testing.T) {
	c := captureClient(t)
	marker := filepath.Join(t.TempDir(), "ran")
	f := mustCall(t, c, "capture_node_cpu_profile", map[string]any{
		"argv":     []string{"node", "-e", fmt.Sprintf("require('fs').writeFileSync(%q, 'ran')", marker)},
		"analysis": map[string]any{"metric": "self"}}).failure(t)
	if f["code"] != "INVALID_ARGUMENT" || field(f) != "analysis.metric" || stagesRan(f) {
		t.Errorf("failure = %v", f)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the workload ran although its analysis arguments were invalid")
	}
}

// A failed analysis keeps the completed capture, whose artifact can be
// re-analyzed without re-running the workload.
func TestFailedAnalysisKeepsCapture(t *testing.T) {
	c := captureClient(t)
	f := mustCall(t, c, "capture_node_cpu_profile", map[string]any{
		"argv": []string{"node", hotScript(t)}, "analysis": map[string]any{"limits": map[string]any{"max_nodes": 1}}}).failure(t)
	if f["code"] != "LIMIT_EXCEEDED" {
		t.Fatalf("failure = %v", f)
	}
	pe := f["details"].(evidence.Object)["partial_evidence"].(evidence.Object)
	if cb, _ := pe["capture"].(evidence.Object); cb == nil || cb["outcome"] != "completed" {
		t.Fatalf("partial evidence lost the capture: %v", pe)
	}
	var prof string
	for _, a := range pe["artifacts"].([]any) {
		if a.(evidence.Object)["role"] == "cpu-profile" {
			prof = a.(evidence.Object)["path"].(string)
		}
	}
	if prof == "" {
		t.Fatalf("partial evidence has no cpu-profile artifact: %v", pe["artifacts"])
	}
	rows := mustCall(t, c, "summarize_cpu_hotspots", map[string]any{"paths": []string{prof}, "top": 1}).rows(t)
	if rows[0].(evidence.Object)["function"] != "hotLoop" {
		t.Errorf("re-analysis of the kept profile: %v", rows)
	}
}

// findProcs returns the pids whose command line contains token.
func findProcs(token string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte(token)) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestCaptureCancellationEndsWorkload(t *testing.T) {
	c := captureClient(t)
	token := fmt.Sprintf("flameox-mcp-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := call(t, ctx, c, "capture_node_cpu_profile", map[string]any{
			"argv": []string{"node", "-e", "setInterval(() => {}, 1000) // " + token}})
		errc <- err
	}()
	var pids []int
	deadline := time.Now().Add(60 * time.Second)
	for len(pids) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		pids = findProcs(token)
	}
	if len(pids) == 0 {
		t.Fatal("the workload did not start within 60s")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("the cancelled capture returned a result")
	}
	gone(t, pids)
}

// venvPython is the project venv's interpreter with pytest, or a skip.
func venvPython(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(repoDir, ".venv")
	}
	py := filepath.Join(venv, "bin", "python")
	if err := exec.Command(py, "-c", "import pytest").Run(); err != nil {
		t.Skipf("needs pytest in the project venv %s (python3 -m venv .venv && .venv/bin/pip install -r tools/requirements.txt): %v", venv, err)
	}
	return py
}

// The capture tools are generated for every provider: pytest's runs a real
// test session whose failure is evidence, not a failed call.
func TestCapturePytestFailures(t *testing.T) {
	if _, ok := registry.Provider("pytest"); !ok {
		t.Fatal("the pytest provider is not registered")
	}
	py := venvPython(t)
	c := captureClient(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test_x.py"), []byte("def test_ok():\n    assert 1 == 1\n\n\ndef test_bad():\n    assert 1 == 2, 'one is not two'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustCall(t, c, "capture_pytest", map[string]any{"argv": []string{py, "-m", "pytest", "-q", "test_x.py"}, "cwd": dir})
	rows := r.rows(t)
	if len(rows) != 1 || rows[0].(evidence.Object)["nodeid"] != "test_x.py::test_bad" || rows[0].(evidence.Object)["outcome"] != "failed" {
		t.Fatalf("rows = %v, want the one failed test", rows)
	}
	m := r.table(t)["summary"].(evidence.Object)["metrics"].(evidence.Object)
	if fmt.Sprint(m["passed"].(evidence.Object)["value"]) != "1" || fmt.Sprint(m["failed"].(evidence.Object)["value"]) != "1" {
		t.Errorf("metrics = %v", m)
	}
}
