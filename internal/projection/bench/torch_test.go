package bench_test

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/benchsamples"
	"github.com/flameox/flameox/internal/projection/bench"
	"github.com/flameox/flameox/internal/projection/projectiontest"
	"github.com/flameox/flameox/internal/table"
)

// torchReference is torch's own reading of each Measurement the fixture
// holds (testdata/torch-bench/make.py).
type torchReference struct {
	Torch        string `json:"torch"`
	Measurements []struct {
		ID           string    `json:"id"`
		Stmt         string    `json:"stmt"`
		Label        *string   `json:"label"`
		SubLabel     *string   `json:"sub_label"`
		Description  *string   `json:"description"`
		Env          *string   `json:"env"`
		NumThreads   int64     `json:"num_threads"`
		NumberPerRun int64     `json:"number_per_run"`
		RawTimes     []float64 `json:"raw_times"`
		Times        []float64 `json:"times"`
		Mean         float64   `json:"mean"`
		Median       float64   `json:"median"`
	} `json:"measurements"`
}

// checkTorch: the SDK's series of torch.utils.benchmark Measurements
// decode to torch's per-run times in ns exactly (raw_times[i] /
// number_per_run, x 1e9), with the task spec as name and dimensions and
// number_per_run as loop_count; summarize_benchmarks' mean and median
// are torch's Measurement.mean / .median, scaled.
func checkTorch(t *testing.T, dir string) {
	var ref torchReference
	data, err := os.ReadFile(filepath.Join(dir, "torch.reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	p, _ := filepath.Abs(filepath.Join(dir, "torch.bench.jsonl"))
	in := projectiontest.Decode(t, benchsamples.Spec, p, nil)
	res, err := projectiontest.Run(bench.Summarize, evidence.Object{}, in...)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string][]float64{}
	series := map[string]evidence.Object{}
	for _, i := range in {
		for _, r := range i.Values() {
			switch i.Header.Name {
			case table.BenchSamples.Name:
				if r["kind"] == table.BenchSampleKind {
					samples[r["series_id"].(string)] = append(samples[r["series_id"].(string)], r["value"].(float64))
				}
			case table.BenchSeries.Name:
				series[r["series_id"].(string)] = r
			}
		}
	}
	sums := map[string]evidence.Object{}
	for _, r := range res.Rows {
		sums[r["series_id"].(string)] = r
	}
	if len(ref.Measurements) < 4 {
		t.Fatalf("%d measurements in the reference", len(ref.Measurements))
	}
	for _, m := range ref.Measurements {
		got := samples[m.ID]
		if len(got) != len(m.Times) || len(got) == 0 {
			t.Fatalf("%s: %d samples, torch %d", m.ID, len(got), len(m.Times))
		}
		for i := range got {
			if m.RawTimes[i]/float64(m.NumberPerRun) != m.Times[i] {
				t.Fatalf("%s: the reference's times are not raw_times / number_per_run", m.ID)
			}
			if want := m.Times[i] * 1e9; got[i] != want {
				t.Errorf("%s sample %d = %v ns, torch's time %v s", m.ID, i, got[i], m.Times[i])
			}
		}
		s := series[m.ID]
		name := m.Stmt
		if m.Label != nil {
			name = *m.Label
		}
		if s["benchmark"] != name || s["unit"] != "ns" || s["clock"] != "wall" {
			t.Errorf("%s: series %v", m.ID, s)
		}
		if lc, _ := evidence.AsInt(s["loop_count"]); lc != m.NumberPerRun {
			t.Errorf("%s: loop_count %v, number_per_run %d", m.ID, s["loop_count"], m.NumberPerRun)
		}
		dims, _ := s["dimensions"].(evidence.Object)
		want := evidence.Object{"num_threads": jsonInt(m.NumThreads)}
		for k, v := range map[string]*string{"sub_label": m.SubLabel, "description": m.Description, "env": m.Env} {
			if v != nil {
				want[k] = *v
			}
		}
		if len(dims) != len(want) {
			t.Errorf("%s: dimensions %v, task spec %v", m.ID, dims, want)
		}
		for k, v := range want {
			if dims[k] != v {
				t.Errorf("%s: dimension %s = %v, task spec %v", m.ID, k, dims[k], v)
			}
		}
		sum := sums[m.ID]
		for col, want := range map[string]float64{"mean": m.Mean * 1e9, "median": m.Median * 1e9} {
			g, _ := sum[col].(float64)
			// torch computes in seconds (torch.quantile, Tensor.mean), this
			// in ns: the same value up to the rounding of the scaling.
			if math.Abs(g-want) > 1e-12*want {
				t.Errorf("%s %s = %v ns, torch %v", m.ID, col, g, want)
			}
		}
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestTorchMeasurements(t *testing.T) {
	checkTorch(t, filepath.Join(repoRoot, "testdata", "torch-bench"))
}

// TestTorchMeasurementsLive measures with torch itself and checks what the
// SDK wrote; only with FLAMEOX_TORCH_VENV naming a venv with torch (GBs
// from PyPI: never installed by CI).
func TestTorchMeasurementsLive(t *testing.T) {
	venv := os.Getenv("FLAMEOX_TORCH_VENV")
	if venv == "" {
		t.Skip("FLAMEOX_TORCH_VENV names no venv with torch")
	}
	dir := t.TempDir()
	sdk, _ := filepath.Abs(filepath.Join(repoRoot, "sdk", "python"))
	cmd := exec.Command(filepath.Join(venv, "bin", "python"), filepath.Join(repoRoot, "testdata", "torch-bench", "make.py"), dir)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+sdk)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make.py: %v\n%s", err, out)
	}
	checkTorch(t, dir)
}
