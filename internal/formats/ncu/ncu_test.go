package ncu

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/formatstest"
)

const testdata = "../../../testdata/ncu"

var fixtures = []string{"mojo-ncu-2022.4.0-profile.ncu-rep", "speedy_scan-ncu-2020.3.1-profile.ncu-rep"}

// withReader points the decoder at the project venv's Python, which has
// ncu_report (tools/requirements.txt), and returns it.
func withReader(t testing.TB) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(testdata, "..", "..", ".venv")
	}
	py, err := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(py, "-c", "import ncu_report").Run(); err != nil {
		t.Skipf("NVIDIA's ncu_report is not installed in %s (pip install -r tools/requirements.txt): %v", venv, err)
	}
	t.Setenv(EnvPython, py)
	t.Setenv(EnvReaderDir, "")
	return py
}

// TestEqualsNCUReport: launches per kernel name, their summed duration and
// the metric count equal what ncu_report itself reports.
func TestEqualsNCUReport(t *testing.T) {
	py := withReader(t)
	for _, f := range fixtures {
		t.Run(f, func(t *testing.T) {
			path := filepath.Join(testdata, f)
			out, err := exec.Command(py, filepath.Join(testdata, "oracle.py"), path).Output()
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Kernels map[string][2]float64
				Metrics int64
			}
			if err := json.Unmarshal(out, &want); err != nil {
				t.Fatal(err)
			}
			s, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
			formatstest.CheckInvariants(t, s, err)
			if err != nil {
				t.Fatal(err)
			}
			k, m := s.Table("gpu.kernels"), s.Table("gpu.kernel_metrics")
			got := map[string][2]float64{}
			for _, r := range k.Rows {
				g := got[r["name"].(string)]
				g[0]++
				g[1] += r["duration_ns"].(float64)
				got[r["name"].(string)] = g
				if r["device_name"] == nil || r["grid_x"] == nil || r["registers_per_thread"] == nil || r["sm_throughput_pct"] == nil {
					t.Errorf("kernel row without its launch columns: %v", r)
				}
				if rules, _ := r["rules"].([]any); len(rules) == 0 {
					t.Errorf("no rule results: %v", r["rules"])
				}
			}
			if len(got) != len(want.Kernels) {
				t.Errorf("kernels %v, ncu_report %v", got, want.Kernels)
			}
			for n, w := range want.Kernels {
				if got[n] != w {
					t.Errorf("%s: got %v, ncu_report %v", n, got[n], w)
				}
			}
			if int64(len(m.Rows)) != want.Metrics || m.Summary.RowsObserved != want.Metrics {
				t.Errorf("%d metric rows, ncu_report %d", len(m.Rows), want.Metrics)
			}
			if !k.Summary.Complete || !m.Summary.Complete {
				t.Errorf("incomplete: %+v %+v", k.Summary, m.Summary)
			}
		})
	}
}

func TestMetricRows(t *testing.T) {
	withReader(t)
	s, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, fixtures[0]), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]evidence.Object{}
	for _, r := range s.Table("gpu.kernel_metrics").Rows {
		if r["action_index"] == int64(0) {
			seen[r["metric"].(string)] = r
		}
	}
	d := seen["gpu__time_duration.sum"]
	if d["unit"] != "ns" || d["normalized_unit"] != "ns" || d["value"] != 1600.0 {
		t.Errorf("duration %v", d)
	}
	if n := seen["device__attribute_display_name"]; n["text"] != "NVIDIA GeForce GTX 1660 Ti" || n["value"] != nil {
		t.Errorf("display name %v", n)
	}
	if c := seen["device__attribute_clock_rate"]; c["integer"] != int64(1830000) || c["kind"] != "uint64" {
		t.Errorf("clock rate %v", c)
	}
	if h := seen["dram__cycles_elapsed.avg.per_second"]; h["unit"] != "hz" || h["normalized_value"] != nil {
		t.Errorf("a unit flameox does not convert keeps only its native value: %v", h)
	}
	if p := seen["sm__throughput.avg.pct_of_peak_sustained_elapsed"]; p["normalized_unit"] != "%" || math.Abs(p["value"].(float64)-0.03344289863935178) > 0 {
		t.Errorf("throughput %v", p)
	}
}

// TestNoReader: a Python without ncu_report is PROVIDER_UNAVAILABLE with
// the setup to do; nothing is decoded.
func TestNoReader(t *testing.T) {
	withReader(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ncu_report.py"), []byte("raise ImportError('ncu_report is not installed')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvReaderDir, dir)
	s, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, fixtures[0]), nil, nil)
	var f *evidence.Failure
	if !errors.As(err, &f) || f.Code != evidence.CodeProviderUnavailable || f.Retry == nil || f.Retry.Action == "" {
		t.Fatalf("%v", err)
	}
	if len(s.Tables) != 0 {
		t.Fatalf("an unavailable reader leaves no tables, got %d", len(s.Tables))
	}
	t.Setenv(EnvPython, filepath.Join(dir, "no-such-python"))
	if _, err := formatstest.DecodeFile(t, Spec, filepath.Join(testdata, fixtures[0]), nil, nil); evidence.CodeOf(err) != evidence.CodeProviderUnavailable {
		t.Fatalf("%v", err)
	}
}

// TestNotAReport: bytes that are not a report fail at the magic, and a
// report cut short fails in NVIDIA's reader as a typed failure.
func TestNotAReport(t *testing.T) {
	withReader(t)
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(testdata, fixtures[0]))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.ncu-rep")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.ncu-rep")
	if err := os.WriteFile(other, []byte("not a report"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cut, other} {
		s, err := formatstest.DecodeFile(t, Spec, p, nil, nil)
		formatstest.CheckInvariants(t, s, err)
		if c := evidence.CodeOf(err); c != evidence.CodeDecodeFailure {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}
