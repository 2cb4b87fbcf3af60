package nsys

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/formats/formatstest"
	"github.com/flameox/flameox/internal/formats/parquetpreview"
	"github.com/parquet-go/parquet-go"
)

const testdata = "../../../testdata/nsys"

var nvfuser = filepath.Join(testdata, "nvfuser-report1_pqtdir", "META_DATA_EXPORT.parquet")

func launches(t *testing.T, path string) *formatstest.Table {
	t.Helper()
	s, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	formatstest.CheckInvariants(t, s, err)
	if err != nil {
		t.Fatal(err)
	}
	tb := s.Table("gpu.launches")
	if tb == nil || tb.Summary == nil {
		t.Fatal("no closed gpu.launches table")
	}
	return tb
}

func python(t *testing.T) string {
	t.Helper()
	venv := os.Getenv("FLAMEOX_VENV")
	if venv == "" {
		venv = filepath.Join(testdata, "..", "..", ".venv")
	}
	py := filepath.Join(venv, "bin", "python")
	if err := exec.Command(py, "-c", "import pyarrow").Run(); err != nil {
		t.Skipf("pyarrow is not installed in %s (pip install -r tools/requirements.txt): %v", venv, err)
	}
	return py
}

// TestCountsEqualPyArrow: per kind and name, the records and their total
// time equal an independent count over the same Parquet files by Apache
// Arrow, joined through StringIds by the script.
func TestCountsEqualPyArrow(t *testing.T) {
	py := python(t)
	out, err := exec.Command(py, filepath.Join(testdata, "launches.py"), filepath.Dir(nvfuser)).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][2]int64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	tb := launches(t, nvfuser)
	got := map[string][2]int64{}
	for _, r := range tb.Rows {
		k := fmt.Sprintf("%s\t%s", r["kind"], r["name"])
		c := got[k]
		d, _ := evidence.AsInt(r["duration_ns"])
		c[0]++
		c[1] += d
		got[k] = c
	}
	if len(got) != len(want) {
		t.Errorf("%d groups, pyarrow counts %d", len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q: got %v, pyarrow %v", k, got[k], w)
		}
	}
	if len(want) < 10 {
		t.Fatalf("the oracle found only %d groups", len(want))
	}
}

func TestLaunchRows(t *testing.T) {
	tb := launches(t, nvfuser)
	if !tb.Summary.Complete || tb.Summary.RowsObserved != 21 {
		t.Fatalf("summary %+v", tb.Summary)
	}
	var kernels, resolved int
	for _, r := range tb.Rows {
		switch r["kind"] {
		case "kernel":
			kernels++
			if r["source_table"] != "CUPTI_ACTIVITY_KIND_KERNEL" || r["grid_x"] == nil || r["registers_per_thread"] == nil {
				t.Errorf("kernel row %v", r)
			}
		case "memset":
			v, _ := r["value"].(evidence.Object)
			if _, ok := v["value"]; !ok {
				t.Errorf("memset's native value column is not kept under value: %v", r["value"])
			}
		case "memcpy":
			if r["copy_kind"] != "Device-to-Host" || r["name"] != "[CUDA memcpy Device-to-Host]" || r["bytes"] != int64(1) {
				t.Errorf("memcpy row %v", r)
			}
		}
		if r["launch_api"] != nil {
			resolved++
		}
	}
	if kernels != 19 || resolved != 21 {
		t.Errorf("kernels %d, resolved launch calls %d", kernels, resolved)
	}
	m := tb.Summary.Metrics
	if v, _ := evidence.AsInt(m["kernel_records"].Value); v != 19 {
		t.Errorf("kernel_records %v", m["kernel_records"])
	}
	members, _ := tb.Summary.Coverage["members"].([]any)
	if len(members) < 5 {
		t.Errorf("members %v", tb.Summary.Coverage["members"])
	}
}

// copyDir copies the named tables of the fixture export into a new
// directory, so negative cases can drop or replace one.
func copyDir(t *testing.T, tables ...string) string {
	t.Helper()
	dst := t.TempDir()
	for _, n := range tables {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(nvfuser), n+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n+".parquet"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func failure(t *testing.T, path string) *evidence.Failure {
	t.Helper()
	s, err := formatstest.DecodeFile(t, Spec, path, nil, nil)
	formatstest.CheckInvariants(t, s, err)
	var f *evidence.Failure
	if !errors.As(err, &f) {
		t.Fatalf("want a typed failure, got %v", err)
	}
	return f
}

func TestNoDeviceTables(t *testing.T) {
	f := failure(t, filepath.Join(testdata, "jacc-4e6_async_1_trace_pqtdir", "META_DATA_EXPORT.parquet"))
	if f.Code != evidence.CodeDecodeFailure {
		t.Fatalf("%v", f)
	}
}

func TestMissingKernelIsIncomplete(t *testing.T) {
	dir := copyDir(t, "META_DATA_EXPORT", "StringIds", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME")
	tb := launches(t, filepath.Join(dir, "META_DATA_EXPORT.parquet"))
	if tb.Summary.Complete || tb.Summary.RowsObserved != 1 {
		t.Fatalf("a missing KERNEL table must leave the launches incomplete: %+v", tb.Summary)
	}
}

func TestUnresolvedStringID(t *testing.T) {
	// A StringIds table that lacks the kernels' name ids: they dangle.
	dir := copyDir(t, "META_DATA_EXPORT", "CUPTI_ACTIVITY_KIND_KERNEL")
	type str struct {
		ID    int64  `parquet:"id"`
		Value string `parquet:"value"`
	}
	if err := parquet.WriteFile(filepath.Join(dir, "StringIds.parquet"), []str{{1, "one"}}); err != nil {
		t.Fatal(err)
	}
	f := failure(t, filepath.Join(dir, "META_DATA_EXPORT.parquet"))
	if f.Code != evidence.CodeDecodeFailure || f.Location.Field != "CUPTI_ACTIVITY_KIND_KERNEL.demangledName" {
		t.Fatalf("%v %+v", f, f.Location)
	}
}

func TestVariantTable(t *testing.T) {
	dir := copyDir(t, "META_DATA_EXPORT", "StringIds", "CUPTI_ACTIVITY_KIND_KERNEL")
	if err := os.Rename(filepath.Join(dir, "CUPTI_ACTIVITY_KIND_KERNEL.parquet"), filepath.Join(dir, "CUPTI_ACTIVITY_KIND_KERNEL_V2.parquet")); err != nil {
		t.Fatal(err)
	}
	tb := launches(t, filepath.Join(dir, "META_DATA_EXPORT.parquet"))
	if len(tb.Rows) != 19 || tb.Rows[0]["source_table"] != "CUPTI_ACTIVITY_KIND_KERNEL_V2" {
		t.Fatalf("%d rows, %v", len(tb.Rows), tb.Rows[0]["source_table"])
	}
}

// TestTolerantColumns: narrow and unsigned integers and names stored
// inline read as the wide, StringIds-joined columns do.
func TestTolerantColumns(t *testing.T) {
	dir := copyDir(t, "META_DATA_EXPORT")
	type kernel struct {
		Start         uint64 `parquet:"start"`
		End           uint64 `parquet:"end"`
		DeviceID      uint8  `parquet:"deviceId"`
		StreamID      int32  `parquet:"streamId"`
		Correlation   uint32 `parquet:"correlationId"`
		DemangledName string `parquet:"demangledName"`
		GridX         int16  `parquet:"gridX"`
		GraphNodeID   *int64 `parquet:"graphNodeId,optional"`
		LaunchType    int8   `parquet:"launchType"`
	}
	node := int64(7)
	rows := []kernel{{100, 250, 3, 14, 9, "k1", 32, nil, 1}, {300, 310, 3, 14, 10, "k2", 1, &node, 1}}
	if err := parquet.WriteFile(filepath.Join(dir, "CUPTI_ACTIVITY_KIND_KERNEL.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	tb := launches(t, filepath.Join(dir, "META_DATA_EXPORT.parquet"))
	if len(tb.Rows) != 2 {
		t.Fatalf("%d rows", len(tb.Rows))
	}
	r := tb.Rows[1]
	if r["name"] != "k2" || r["duration_ns"] != int64(10) || r["device_id"] != int64(3) || r["grid_x"] != int64(1) ||
		r["graph_node_id"] != int64(7) || r["correlation_id"] != int64(10) || tb.Rows[0]["graph_node_id"] != nil {
		t.Fatalf("%v", r)
	}
	if v := r["value"].(evidence.Object); v["launchType"] != int64(1) {
		t.Fatalf("value %v", v)
	}
	if tb.Summary.Complete {
		t.Fatal("no MEMCPY or MEMSET table: incomplete")
	}
}

func TestNotTheMetadataFile(t *testing.T) {
	f := failure(t, filepath.Join(filepath.Dir(nvfuser), "StringIds.parquet"))
	if f.Code != evidence.CodeInvalidArgument {
		t.Fatalf("%v", f)
	}
}

// TestDetect: the metadata table is this format, any other table of the
// export is plain Parquet (previewed only by name).
func TestDetect(t *testing.T) {
	specs := []*formats.Spec{Spec, parquetpreview.Spec}
	for path, want := range map[string]*formats.Spec{
		nvfuser: Spec,
		filepath.Join(filepath.Dir(nvfuser), "StringIds.parquet"):                  parquetpreview.Spec,
		filepath.Join(filepath.Dir(nvfuser), "CUPTI_ACTIVITY_KIND_KERNEL.parquet"): parquetpreview.Spec,
	} {
		prefix, err := formats.ReadPrefix(path)
		if err != nil {
			t.Fatal(err)
		}
		if s, err := formats.Detect(specs, path, prefix, ""); err != nil || s != want {
			t.Errorf("%s: %v %v", path, s, err)
		}
	}
}
