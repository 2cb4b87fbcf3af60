package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/ncu"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

const ncuData = "../../../testdata/ncu"

func decodeNCU(t testing.TB, file string) []*projectiontest.Input {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = "../../../.venv"
	}
	py, _ := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err := exec.Command(py, "-c", "import ncu_report").Run(); err != nil {
		t.Skipf("NVIDIA's ncu_report is not installed in %s (pip install -r tools/requirements.txt)", venv)
	}
	t.Setenv(ncu.EnvPython, py)
	return projectiontest.Decode(t, ncu.Spec, filepath.Join(ncuData, file), nil)
}

func TestKernelRanking(t *testing.T) {
	in := decodeNCU(t, "mojo-ncu-2022.4.0-profile.ncu-rep")
	res, err := projectiontest.Run(Kernels, nil, in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 4 || !res.Summary.Complete {
		t.Fatalf("%d rows %+v", len(res.Rows), res.Summary)
	}
	// ncu_report: warmingUp 1600 ns, mathKernel2 1568, mathKernel1 1472, and mathKernel3.
	if res.Rows[0]["name"] != "warmingUp(float *)" || res.Rows[0]["value"] != 1600.0 || res.Rows[0]["unit"] != "ns" {
		t.Fatalf("top %v", res.Rows[0])
	}
	for i := 1; i < len(res.Rows); i++ {
		if res.Rows[i-1]["value"].(float64) < res.Rows[i]["value"].(float64) {
			t.Fatalf("not ranked at %d", i)
		}
	}
	res, err = projectiontest.Run(Kernels, evidence.Object{"metric": "sm__warps_active.avg.pct_of_peak_sustained_active", "order": "asc",
		"metric_pattern": "^launch__(grid|block)_size$", "kernel_pattern": "^math", "top": 2}, in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Summary.RowsObserved != 3 || res.Summary.Complete || res.Rows[0]["unit"] != "%" {
		t.Fatalf("%v %+v", res.Rows, res.Summary)
	}
	m := res.Rows[0]["metrics"].(evidence.Object)
	if len(m) != 2 || m["launch__grid_size"].(evidence.Object)["value"] != 1.0 {
		t.Fatalf("metrics %v", m)
	}
	res, err = projectiontest.Run(Kernels, evidence.Object{"metric": "no__such_metric"}, in...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 0 || len(res.Summary.Limitations) == 0 {
		t.Fatalf("an absent metric ranks nothing and says so: %+v", res.Summary)
	}
}

func TestKernelBadArguments(t *testing.T) {
	for _, args := range []evidence.Object{{"metric_pattern": "("}, {"kernel_pattern": "["}, {"order": "up"}} {
		if _, err := projectiontest.Start(Kernels, args); evidence.CodeOf(err) != evidence.CodeInvalidArgument {
			t.Errorf("%v: %v", args, err)
		}
	}
}

func BenchmarkKernels(b *testing.B) {
	in := decodeNCU(b, "speedy_scan-ncu-2020.3.1-profile.ncu-rep")
	projectiontest.Bench(b, Kernels, evidence.Object{"metric_pattern": "^sm__"}, in...)
}
