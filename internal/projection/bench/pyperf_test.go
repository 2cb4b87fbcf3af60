package bench_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats/pyperf"
	"github.com/flameox/flameox/internal/projection/bench"
	"github.com/flameox/flameox/internal/projection/projectiontest"
)

const repoRoot = "../../.."

// python is the project venv's interpreter, where tools/requirements.txt
// installs pyperf.
func python(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(repoRoot, ".venv")
	}
	p, err := filepath.Abs(filepath.Join(venv, "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skip("needs the project venv (FLAMEOX_VENV) with pyperf: pip install -r tools/requirements.txt")
	}
	if out, err := exec.Command(p, "-c", "import pyperf").CombinedOutput(); err != nil {
		t.Fatalf("pyperf is not installed in %s (pip install -r tools/requirements.txt): %s", p, out)
	}
	return p
}

type oracleBench struct {
	Name            string            `json:"name"`
	Unit            string            `json:"unit"`
	Runs            int64             `json:"runs"`
	CalibrationRuns int64             `json:"calibration_runs"`
	Warmups         int64             `json:"warmups"`
	N               int64             `json:"n"`
	WarmupValues    []float64         `json:"warmup_values"`
	Metadata        map[string]string `json:"metadata"`
	Mean            *float64          `json:"mean"`
	Median          *float64          `json:"median"`
	Min             *float64          `json:"min"`
	Max             *float64          `json:"max"`
	P5              *float64          `json:"p5"`
	P95             *float64          `json:"p95"`
	Stdev           *float64          `json:"stdev"`
	PyperfMean      *float64          `json:"pyperf_mean"`
	PyperfMedian    *float64          `json:"pyperf_median"`
	PyperfStdev     *float64          `json:"pyperf_stdev"`
}

// oracle runs pyperf's reader (testdata/pyperf/oracle.py) on paths.
func oracle(t *testing.T, py string, paths ...string) map[string][]oracleBench {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join(repoRoot, "testdata", "pyperf", "oracle.py"))
	out, err := exec.Command(py, append([]string{script}, paths...)...).Output()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	var files []struct {
		Path       string        `json:"path"`
		Benchmarks []oracleBench `json:"benchmarks"`
	}
	if err := json.Unmarshal(out, &files); err != nil {
		t.Fatal(err)
	}
	m := map[string][]oracleBench{}
	for _, f := range files {
		m[f.Path] = f.Benchmarks
	}
	return m
}

// pyperfFiles are the shared fixtures (pyperf's and pyperformance's own
// test data, formats 1.0 written by several pyperf releases), the files
// regen.sh made with pyperf 2.10, and files pyperf makes now.
func pyperfFiles(t *testing.T, py string) []string {
	t.Helper()
	fresh.once.Do(func() {
		fresh.dir, fresh.err = os.MkdirTemp("", "flameox-pyperf")
		for _, name := range []string{"fresh.json", "fresh.json.gz"} {
			if fresh.err != nil {
				return
			}
			out := filepath.Join(fresh.dir, name)
			cmd := exec.Command(py, "-m", "pyperf", "timeit", "-q", "-p", "3", "-n", "5", "-w", "2", "-l", "200",
				"-o", out, "-s", "x = list(range(200))", "sorted(x)")
			if b, err := cmd.CombinedOutput(); err != nil {
				fresh.err = fmt.Errorf("pyperf timeit: %v: %s", err, b)
			}
		}
	})
	if fresh.err != nil {
		t.Fatal(fresh.err)
	}
	paths, _ := filepath.Glob(filepath.Join(repoRoot, "testdata", "pyperf", "*.json*"))
	more, _ := filepath.Glob(filepath.Join(fresh.dir, "*"))
	paths = append(paths, more...)
	for i, p := range paths {
		paths[i], _ = filepath.Abs(p)
	}
	return paths
}

// fresh holds the files pyperf makes during the tests, made once.
var fresh struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fresh.dir != "" {
		os.RemoveAll(fresh.dir)
	}
	os.Exit(code)
}

// TestStatsEqualPyperf decodes every file and summarizes it; n, mean,
// median, stdev, min, max, p5 and p95 of every benchmark must equal, bit
// for bit, what Python's statistics and pyperf's percentile give on the
// same normalized values, and agree with pyperf's own Benchmark
// statistics (in the file's unit) to the last few ulps of the unit change.
func TestStatsEqualPyperf(t *testing.T) {
	py := python(t)
	paths := pyperfFiles(t, py)
	want := oracle(t, py, paths...)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tables := projectiontest.Decode(t, pyperf.Spec, path, nil)
			res, err := projectiontest.Run(bench.Summarize, evidence.Object{"top": int64(100000)}, tables...)
			if err != nil {
				t.Fatal(err)
			}
			exp := want[path]
			if len(res.Rows) != len(exp) {
				t.Fatalf("%d series, pyperf has %d benchmarks", len(res.Rows), len(exp))
			}
			byName := map[string]evidence.Object{}
			for _, r := range res.Rows {
				byName[r["benchmark"].(string)] = r
			}
			for _, b := range exp {
				r := byName[b.Name]
				if r == nil {
					t.Fatalf("benchmark %q missing", b.Name)
				}
				if n, _ := evidence.AsInt(r["n"]); n != b.N {
					t.Errorf("%s: n=%d, pyperf %d", b.Name, n, b.N)
				}
				if w, _ := evidence.AsInt(r["warmups"]); w != b.Warmups {
					t.Errorf("%s: warmups=%d, pyperf %d", b.Name, w, b.Warmups)
				}
				if b.N == 0 {
					continue
				}
				for col, v := range map[string]*float64{"mean": b.Mean, "median": b.Median, "min": b.Min, "max": b.Max,
					"p5": b.P5, "p95": b.P95, "stdev": b.Stdev} {
					got, ok := evidence.AsFloat(r[col])
					if v == nil {
						if r[col] != nil {
							t.Errorf("%s %s = %v, pyperf none", b.Name, col, r[col])
						}
						continue
					}
					if !ok || got != *v {
						t.Errorf("%s %s = %v (%b), pyperf %v (%b)", b.Name, col, r[col], got, *v, *v)
					}
				}
				factor := map[string]float64{"second": 1e9}[b.Unit]
				if factor == 0 {
					factor = 1
				}
				for col, v := range map[string]*float64{"mean": b.PyperfMean, "median": b.PyperfMedian, "stdev": b.PyperfStdev} {
					got, _ := evidence.AsFloat(r[col])
					if v != nil && math.Abs(got-*v*factor) > 1e-12*math.Abs(*v*factor) {
						t.Errorf("%s %s = %v, pyperf stats %v × %g", b.Name, col, got, *v, factor)
					}
				}
			}
		})
	}
}

// TestRowsEqualPyperfDump checks every sample and warmup row against the
// runs pyperf's loader builds (pyperf dump), value for value.
func TestRowsEqualPyperfDump(t *testing.T) {
	py := python(t)
	paths := pyperfFiles(t, py)
	want := oracle(t, py, paths...)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tables := projectiontest.Decode(t, pyperf.Spec, path, nil)
			names := map[string]string{}
			meta := map[string]evidence.Object{}
			var warm = map[string][]float64{}
			var runs = map[string]map[int64]bool{}
			for _, tb := range tables {
				for _, r := range tb.Values() {
					switch tb.Header.Name {
					case "bench.series":
						names[r["series_id"].(string)] = r["benchmark"].(string)
						meta[r["series_id"].(string)], _ = r["metadata"].(evidence.Object)
					case "bench.samples":
						id := r["series_id"].(string)
						if runs[id] == nil {
							runs[id] = map[int64]bool{}
						}
						run, _ := evidence.AsInt(r["run"])
						runs[id][run] = true
						if r["kind"] != "sample" {
							v, _ := evidence.AsFloat(r["value"])
							warm[id] = append(warm[id], v)
						}
					}
				}
			}
			for id, name := range names {
				var b *oracleBench
				for i := range want[path] {
					if want[path][i].Name == name {
						b = &want[path][i]
					}
				}
				if b == nil {
					t.Fatalf("%s: not in pyperf's reading", name)
				}
				if int64(len(runs[id])) != b.Runs {
					t.Errorf("%s: %d runs, pyperf %d", name, len(runs[id]), b.Runs)
				}
				if len(meta[id]) != len(b.Metadata) {
					t.Errorf("%s: %d metadata entries, pyperf %d: %v vs %v", name, len(meta[id]), len(b.Metadata), meta[id], b.Metadata)
				}
				for k, v := range b.Metadata {
					if meta[id][k] != v {
						t.Errorf("%s: metadata %s = %v, pyperf %q", name, k, meta[id][k], v)
					}
				}
				if strings.Join(fmtAll(warm[id]), " ") != strings.Join(fmtAll(b.WarmupValues), " ") {
					t.Errorf("%s: warmups %v, pyperf %v", name, warm[id], b.WarmupValues)
				}
			}
		})
	}
}

func fmtAll(v []float64) []string {
	out := make([]string, len(v))
	for i, x := range v {
		b, _ := json.Marshal(x)
		out[i] = string(b)
	}
	return out
}
